import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { datasetInfo, downloadFile, HubApiError, listFiles, repoExists } from '@huggingface/hub';
import { z } from 'zod';
import { ForesightError } from '../../core/foundation/errors.ts';
import { hubError, responseError } from './hub-errors.ts';
import type { DatasetFile } from './select-files.ts';

/** Where and as whom foresight talks to the hub. */
export interface HubTarget {
  endpoint: string;
  /** `owner/name` of the dataset repository. */
  repoId: string;
  /** The branch committed to. */
  revision: string;
  token: string | null;
  fetch: typeof fetch;
}

/** A file at the head: its git blob id, and the sha256 of its content when LFS stores it. */
export interface RemoteFile {
  path: string;
  oid: string | null;
  lfsOid: string | null;
}

/**
 * The dataset repository as the hub has it now, or as a local copy of it shows it: a copy may name no
 * head commit and never says the visibility (null).
 */
export type RemoteState =
  | { kind: 'missing' }
  | { kind: 'exists'; head: string | null; private: boolean | null; files: RemoteFile[] };

const repo = (t: HubTarget) => ({ type: 'dataset' as const, name: t.repoId });
const auth = (t: HubTarget) => (t.token ? { accessToken: t.token } : {});

/** Read-only: whether the repository exists, the head of the revision (the parent commit) and its files. */
export async function readRemote(t: HubTarget): Promise<RemoteState> {
  const call = { what: `reading the dataset ${t.repoId}`, endpoint: t.endpoint, repoId: t.repoId, revision: t.revision };
  try {
    let info: { sha?: string; private: boolean };
    try {
      info = await datasetInfo({ name: t.repoId, revision: t.revision, additionalFields: ['sha'], hubUrl: t.endpoint, fetch: t.fetch, ...auth(t) });
    } catch (err) {
      // 404: no repository, or no such revision in it. 401 without a token: a repository we may not see.
      const absent = err instanceof HubApiError && (err.statusCode === 404 || (err.statusCode === 401 && !t.token));
      if (!absent) throw err;
      if (!(await repoExists({ repo: repo(t), hubUrl: t.endpoint, fetch: t.fetch, ...auth(t) }))) return { kind: 'missing' };
      throw new ForesightError(`the dataset ${t.repoId} has no revision ${t.revision}`, { remedy: `create the branch ${t.revision} on the hub first, or pass --revision main` });
    }
    const head = z.string().regex(/^[0-9a-f]{40}$/).safeParse(info.sha);
    if (!head.success) throw new ForesightError(`the hub gave no commit sha for ${t.repoId}@${t.revision}`, { remedy: 'check HF_ENDPOINT points at a Hugging Face hub', external: true });
    const files: RemoteFile[] = [];
    for await (const f of listFiles({ repo: repo(t), revision: head.data, recursive: true, hubUrl: t.endpoint, fetch: t.fetch, ...auth(t) })) {
      if (f.type === 'file') files.push({ path: f.path, oid: f.oid ?? null, lfsOid: f.lfs?.oid ?? null });
    }
    return { kind: 'exists', head: head.data, private: info.private, files: files.sort((a, b) => (a.path < b.path ? -1 : 1)) };
  } catch (err) {
    throw hubError(err, call);
  }
}

/** Download the revision's files into `dir` (a copy of what was published): the commit it was read at. */
export async function downloadRemote(t: HubTarget, dir: string): Promise<{ head: string; files: number }> {
  const state = await readRemote(t);
  if (state.kind === 'missing') throw new ForesightError(`the dataset ${t.repoId} does not exist on ${t.endpoint}`, { remedy: 'check the repository id (and HF_TOKEN for a private one), or pass the local folder of the previous release' });
  const head = state.head!;
  try {
    for (const f of state.files) {
      const blob = await downloadFile({ repo: repo(t), path: f.path, revision: head, hubUrl: t.endpoint, fetch: t.fetch, ...auth(t) });
      if (!blob) throw new ForesightError(`the hub lists ${f.path} in ${t.repoId}@${head} but does not serve it`, { remedy: 'rerun in a minute', external: true });
      await mkdir(dirname(join(dir, f.path)), { recursive: true });
      await writeFile(join(dir, f.path), Buffer.from(await blob.arrayBuffer()));
    }
  } catch (err) {
    throw hubError(err, { what: `downloading the dataset ${t.repoId}`, endpoint: t.endpoint, repoId: t.repoId, revision: t.revision });
  }
  return { head, files: state.files.length };
}

export type UploadMode = 'lfs' | 'regular';

const PreuploadSchema = z.object({ files: z.array(z.object({ path: z.string(), uploadMode: z.enum(['lfs', 'regular']) })) });

async function sample(file: DatasetFile): Promise<Uint8Array> {
  return (await readFile(file.local)).subarray(0, 512);
}

/**
 * How the hub will store each file, asked of the hub itself (`preupload`, read-only: the same question
 * the library asks before committing). Null when the hub will not say (a token that may only read).
 */
export async function askUploadModes(t: HubTarget, files: readonly DatasetFile[]): Promise<Map<string, UploadMode> | null> {
  const call = { what: `asking how ${t.repoId} stores each file`, endpoint: t.endpoint, repoId: t.repoId, revision: t.revision };
  const modes = new Map<string, UploadMode>();
  for (let i = 0; i < files.length; i += 100) {
    const chunk = files.slice(i, i + 100);
    const body = { files: await Promise.all(chunk.map(async (f) => ({ path: f.path, size: f.size, sample: Buffer.from(await sample(f)).toString('base64') }))) };
    try {
      const res = await t.fetch(`${t.endpoint}/api/datasets/${t.repoId}/preupload/${encodeURIComponent(t.revision)}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(t.token ? { Authorization: `Bearer ${t.token}` } : {}) },
        body: JSON.stringify(body),
      });
      if (res.status === 401 || res.status === 403) {
        await res.body?.cancel();
        return null;
      }
      if (!res.ok) throw await responseError(res);
      const parsed = PreuploadSchema.safeParse(await res.json());
      if (!parsed.success) throw new ForesightError(`the hub's preupload answer for ${t.repoId} has an unexpected shape`, { remedy: 'check HF_ENDPOINT points at a Hugging Face hub', external: true });
      for (const f of parsed.data.files) modes.set(f.path, f.uploadMode);
    } catch (err) {
      throw hubError(err, call);
    }
  }
  return modes;
}

/**
 * The hub's rule for a repository it has not created yet (its default .gitattributes tracks *.parquet and
 * other binary formats with LFS; anything binary or ≥ 10 MiB goes to LFS too).
 */
export async function predictUploadMode(file: DatasetFile): Promise<UploadMode> {
  if (/\.(parquet|arrow)$/.test(file.path) || file.size >= 10 * 1024 * 1024) return 'lfs';
  return (await sample(file)).includes(0) ? 'lfs' : 'regular';
}

/** Whether the hub's file is byte for byte the local one: its LFS sha256, or its git blob id (sha1 of `blob <size>\0` + content). */
export async function sameContent(file: DatasetFile, remote: RemoteFile): Promise<boolean> {
  const sha256 = createHash('sha256');
  const blob = createHash('sha1').update(`blob ${file.size}\0`);
  for await (const chunk of createReadStream(file.local)) {
    sha256.update(chunk as Buffer);
    blob.update(chunk as Buffer);
  }
  return remote.lfsOid === sha256.digest('hex') || remote.oid === blob.digest('hex');
}

const COMMIT = /^[0-9a-f]{40}$/;
const LFS_POINTER = /^version https:\/\/git-lfs\.github\.com\/spec\/v1\noid sha256:([0-9a-f]{64})\nsize \d+\n?$/;
const run = promisify(execFile);

/** A file's git blob id and sha256, read as a stream (parquet files can be large). */
async function hashes(path: string, size: number): Promise<{ oid: string; sha256: string }> {
  const sha256 = createHash('sha256');
  const blob = createHash('sha1').update(`blob ${size}\0`);
  for await (const chunk of createReadStream(path)) {
    sha256.update(chunk as Buffer);
    blob.update(chunk as Buffer);
  }
  return { oid: blob.digest('hex'), sha256: sha256.digest('hex') };
}

/** Every file below `dir` (symlinks followed: a hub cache snapshot links to its blobs), without git's and huggingface-cli's bookkeeping. */
async function filesBelow(root: string, sub = ''): Promise<Array<{ path: string; local: string; size: number }>> {
  const out: Array<{ path: string; local: string; size: number }> = [];
  for (const name of (await readdir(join(root, sub))).sort()) {
    const path = sub ? `${sub}/${name}` : name;
    if (path === '.git' || path === '.cache/huggingface') continue;
    const st = await stat(join(root, path)).catch(() => null);
    if (st?.isDirectory()) out.push(...(await filesBelow(root, path)));
    else if (st?.isFile()) out.push({ path, local: join(root, path), size: st.size });
  }
  return out;
}

/**
 * The commit a copy was taken at: a git clone's HEAD, the snapshot folder of the hub cache
 * (`snapshots/<sha>`), or the one commit huggingface-cli's download metadata names; null when none says.
 */
async function copyHead(dir: string, paths: readonly string[]): Promise<string | null> {
  if (await stat(join(dir, '.git')).catch(() => null)) {
    const head = await run('git', ['-C', dir, 'rev-parse', 'HEAD']).then((r) => r.stdout.trim(), () => '');
    return COMMIT.test(head) ? head : null;
  }
  if (COMMIT.test(basename(dir)) && basename(dirname(dir)) === 'snapshots') return basename(dir);
  const named = new Set<string>();
  for (const p of paths) {
    const meta = await readFile(join(dir, '.cache', 'huggingface', 'download', `${p}.metadata`), 'utf8').catch(() => null);
    const commit = meta?.split('\n')[0]?.trim();
    if (commit && COMMIT.test(commit)) named.add(commit);
  }
  return named.size === 1 ? [...named][0]! : null;
}

/** A ForesightError unless `dir` is a folder (checked before the gate's minutes). */
export async function checkCopyFolder(dir: string): Promise<void> {
  const st = await stat(dir).catch(() => null);
  if (!st?.isDirectory()) {
    throw new ForesightError(`--remote ${dir} is not a folder`, {
      remedy: 'pass --remote hub to read the hub, or --remote <dir> naming a copy of the dataset repository (git clone, or huggingface-cli download --local-dir)',
    });
  }
}

/**
 * The repository as a local copy of it shows it (a git clone, with or without its LFS files fetched; a
 * `huggingface-cli download --local-dir` folder; a hub cache snapshot). Nothing is asked of the network.
 * An empty folder stands for a repository that does not exist yet.
 */
export async function readLocalCopy(dir: string): Promise<RemoteState> {
  await checkCopyFolder(dir);
  const found = await filesBelow(dir);
  if (found.length === 0) return { kind: 'missing' };
  const files: RemoteFile[] = [];
  for (const f of found) {
    const { oid, sha256 } = await hashes(f.local, f.size);
    // A clone without its LFS files holds pointers: the pointer names the content's sha256.
    const pointer = f.size < 1024 ? LFS_POINTER.exec(await readFile(f.local, 'utf8')) : null;
    files.push({ path: f.path, oid, lfsOid: pointer ? pointer[1]! : sha256 });
  }
  return { kind: 'exists', head: await copyHead(dir, found.map((f) => f.path)), private: null, files: files.sort((a, b) => (a.path < b.path ? -1 : 1)) };
}
