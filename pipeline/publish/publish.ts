import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { openAsBlob } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { commit, createRepo, HubApiError, type CommitOperation } from '@huggingface/hub';
import { ForesightError } from '../../core/foundation/errors.ts';
import type { Logger } from '../../core/foundation/log.ts';
import { registerSecret } from '../../core/foundation/secrets.ts';
import { FORESIGHT_VERSION } from '../../core/foundation/version.ts';
import { setCardRepoId } from '../../stages/emit/index.ts';
import { runGate } from './gate.ts';
import { hubError, isStaleParent } from './hub-errors.ts';
import { hubFetch } from './hub-fetch.ts';
import { findDatasetsPython } from './load-with-datasets.ts';
import { formatPlan, makePlan, rewrittenConfigs, upToDate, type Plan, type RemoteSource } from './plan.ts';
import { checkCopyFolder, readLocalCopy, readRemote, type HubTarget, type RemoteState } from './read-remote.ts';
import { selectFiles, type Selection } from './select-files.ts';

export interface PublishOptions {
  /** The emitted dataset folder (data/<owner>__<name>/emit/hf). */
  dataset: string;
  /** emit's folder holding the gold self-check record (items.jsonl, manifest.json); default: the dataset's parent. */
  emitDir?: string;
  /** `owner/name` of the dataset repository on the hub. */
  repoId: string;
  /** The branch committed to (default main). */
  revision?: string;
  /** Create the repository private (only when it does not exist yet). */
  private?: boolean;
  /** Print the operations and change nothing. */
  dryRun?: boolean;
  /**
   * What a dry run plans against: unset, an empty repository without asking the hub (no network);
   * `hub`, the repository read from the hub; `{ dir }`, a local copy of it. Only with dryRun: a publish
   * always reads the hub.
   */
  remote?: 'hub' | { dir: string };
  /** The hub (config.publish.hfEndpoint). */
  endpoint: string;
  /** HF_TOKEN (Secrets.hfToken): needed to write; a dry run sends it only with remote `hub` (to see a private repository). */
  token: string | null;
  /** The venv holding `datasets` (config.publish.pyVenv). */
  pyVenv: string;
  log: Logger;
  /** Where the plan and the result are printed (stdout). */
  print: (text: string) => void;
  signal?: AbortSignal;
  /** The fetch under the 429 retries (tests). */
  fetch?: typeof fetch;
  /** Tries per hub request on 429 (default 5). */
  attempts?: number;
  /** Tag the published revision with this name (a release's). */
  tag?: string;
  /** Published configs this publish may rewrite (`test` for data/, else the folder's name); any other rewrite is refused. */
  replace?: readonly string[];
}

export type PublishOutcome =
  | { kind: 'dry-run'; plan: Plan }
  | { kind: 'up-to-date'; plan: Plan }
  | { kind: 'published'; plan: Plan; commit: { oid: string; url: string }; tag: string | null };

/** Hub names: letters, digits, `-`, `_`, `.`; no leading or trailing separator, at most 96 characters. */
const REPO_ID = /^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9](?:[\w.-]{0,94}[A-Za-z0-9])?$/;

function checkToken(token: string | null, dryRun: boolean): void {
  if (!token) {
    if (dryRun) return;
    throw new ForesightError('HF_TOKEN is not set: publishing needs a Hugging Face token', {
      remedy: 'set HF_TOKEN to a token with write access (https://huggingface.co/settings/tokens); --dry-run needs none',
    });
  }
  registerSecret('HF_TOKEN', token);
  // The library refuses any other token with a TypeError: say it here, the user's way.
  if (!token.startsWith('hf_')) throw new ForesightError('HF_TOKEN does not look like a Hugging Face token (they start with hf_)', { remedy: 'set HF_TOKEN to a token from https://huggingface.co/settings/tokens' });
}

/** What the plan is made against: the hub itself unless a dry run was asked not to ask it. */
function remoteSource(opts: PublishOptions): RemoteSource {
  if (opts.remote && !opts.dryRun) {
    throw new ForesightError('--remote goes with --dry-run: a publish always reads the repository from the hub', { remedy: 'add --dry-run, or drop --remote' });
  }
  if (!opts.dryRun || opts.remote === 'hub') return { kind: 'hub' };
  return opts.remote ? { kind: 'copy', dir: opts.remote.dir } : { kind: 'assumed-empty' };
}

async function readState(source: RemoteSource, t: HubTarget): Promise<RemoteState> {
  if (source.kind === 'hub') return readRemote(t);
  if (source.kind === 'copy') return readLocalCopy(source.dir);
  return { kind: 'missing' };
}

/**
 * Exactly the files to upload, copied where nobody else writes: what the gate checks is what goes up. The
 * card's usage snippet gets the repository id it is published under.
 */
async function stage(selection: Selection, dir: string, repoId: string): Promise<Selection> {
  const files = [];
  for (const f of selection.files) {
    const local = join(dir, ...f.path.split('/'));
    await mkdir(dirname(local), { recursive: true });
    if (f.path === 'README.md') {
      const card = setCardRepoId(await readFile(f.local, 'utf8'), repoId);
      await writeFile(local, card);
      files.push({ ...f, local, size: Buffer.byteLength(card) });
      continue;
    }
    await copyFile(f.local, local);
    files.push({ ...f, local });
  }
  return { files, leftOut: selection.leftOut };
}

function commitMessage(plan: Plan, summary: string): { title: string; description: string } {
  return {
    title: `foresight ${FORESIGHT_VERSION}: publish the dataset (${plan.uploads.filter((u) => u.change !== 'unchanged').length} files changed)`,
    description: `${summary}\n\n${plan.uploads.map((u) => `- ${u.path} (${u.size} bytes, ${u.change})`).join('\n')}${plan.deletes.map((d) => `\n- ${d} (deleted)`).join('')}`,
  };
}

async function createIfMissing(t: HubTarget, token: string, plan: Plan): Promise<void> {
  if (!plan.create) return;
  try {
    await createRepo({ repo: { type: 'dataset', name: t.repoId }, visibility: plan.create.visibility, hubUrl: t.endpoint, fetch: t.fetch, accessToken: token });
  } catch (err) {
    // Someone created it since we looked: the commit below is still guarded by the head we read next.
    if (err instanceof HubApiError && err.statusCode === 409) return;
    throw hubError(err, { what: `creating the dataset ${t.repoId}`, endpoint: t.endpoint, repoId: t.repoId, revision: t.revision });
  }
}

/**
 * A published config is never rewritten unless the user names it: a split people measured on stays
 * byte-identical, and a release adds its own config or split beside it.
 */
function refuseRewrites(plan: Plan, replace: readonly string[]): void {
  const rewritten = [...rewrittenConfigs(plan)].filter(([config]) => !replace.includes(config));
  if (!rewritten.length) return;
  const what = rewritten.map(([config, files]) => `${config} (${files.join(', ')})`).join('; ');
  throw new ForesightError(`publish refused: it would rewrite published config(s) ${what} on ${plan.target.repoId}`, {
    remedy: `a published config stays as it is: publish the new rows as a config or split of their own (foresight release), or pass --replace ${rewritten.map(([c]) => c).join(',')} to replace it on purpose`,
  });
}

/** Tag `oid` on the hub (POST /api/datasets/{id}/tag/{oid}); a tag that exists already is an error naming it. */
async function tagRevision(t: HubTarget, token: string, oid: string, tag: string, print: (text: string) => void): Promise<void> {
  const url = `${t.endpoint.replace(/\/+$/, '')}/api/datasets/${t.repoId}/tag/${encodeURIComponent(oid)}`;
  const res = await t.fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ tag, message: `foresight release ${tag}` }) });
  if (res.status === 409) {
    throw new ForesightError(`the hub already has a tag ${tag} on ${t.repoId}: the files were published in ${oid}, untagged`, { remedy: 'name the release differently (each release is tagged once)', external: true });
  }
  if (!res.ok) {
    const body = (await res.text().catch(() => '')).replace(/\s+/g, ' ').slice(0, 200);
    throw new ForesightError(`tagging ${t.repoId}@${oid.slice(0, 12)} as ${tag} failed: HTTP ${res.status} ${body}`, { remedy: 'tag it on the hub by hand, or rerun foresight publish --tag (the files are published)', external: true });
  }
  print(`tagged ${oid} as ${tag}`);
}

/**
 * `foresight publish`: the emitted dataset to the Hugging Face hub in one commit. The gate runs first
 * (no network write before it passes); the repository is created when missing; the commit's parent is
 * the head read before, so a publish that raced another fails instead of overwriting it. Uploads take
 * the classic LFS path (`useXet: false`): the library's default, Xet, chunks files for a separate CAS
 * service with its own tokens; the hub still takes LFS from clients that do not offer Xet, and a local
 * hub (the tests') can implement LFS in a few lines. Files the hub already has byte for byte are kept.
 */
export async function publish(opts: PublishOptions): Promise<PublishOutcome> {
  const revision = opts.revision ?? 'main';
  if (!REPO_ID.test(opts.repoId)) {
    throw new ForesightError(`--repo-id ${opts.repoId} is not a hub repository name`, { remedy: 'pass --repo-id owner/name (letters, digits, - _ .), e.g. --repo-id my-org/foresight-django' });
  }
  const source = remoteSource(opts);
  checkToken(opts.token, opts.dryRun ?? false);
  if (source.kind === 'copy') await checkCopyFolder(source.dir);
  const selection = await selectFiles(opts.dataset);
  const python = await findDatasetsPython(opts.pyVenv, opts.signal);
  const work = await mkdtemp(join(tmpdir(), 'foresight-publish-'));
  try {
    const staged = await stage(selection, join(work, 'dataset'), opts.repoId);
    const gate = await runGate({ staged: join(work, 'dataset'), files: staged.files, emitDir: opts.emitDir ?? dirname(opts.dataset), python, work, signal: opts.signal });
    if (gate.kind === 'refused') throw new ForesightError(`publish refused: ${gate.message}`, { remedy: gate.remedy });
    opts.log.info(gate.summary);

    const t: HubTarget = { endpoint: opts.endpoint, repoId: opts.repoId, revision, token: opts.token, fetch: hubFetch({ log: opts.log, fetch: opts.fetch, signal: opts.signal, attempts: opts.attempts }) };
    let plan = await makePlan({ target: t, source, remote: await readState(source, t), selection: staged, private: opts.private ?? false });
    opts.print(formatPlan(plan));
    refuseRewrites(plan, opts.replace ?? []);
    if (opts.dryRun) {
      opts.print(source.kind === 'hub' ? 'dry run: nothing was changed on the hub' : 'dry run: the hub was not asked; nothing was sent to it');
      return { kind: 'dry-run', plan };
    }
    if (upToDate(plan)) {
      opts.print(`nothing to publish: ${opts.repoId}@${revision} already holds exactly this dataset`);
      if (opts.tag && plan.parent) await tagRevision(t, opts.token!, plan.parent, opts.tag, opts.print);
      return { kind: 'up-to-date', plan };
    }
    const token = opts.token!;
    if (plan.create) {
      await createIfMissing(t, token, plan);
      // The new repository's first commit is the parent; a repository someone else just made is read as it is.
      plan = await makePlan({ target: t, source, remote: await readRemote(t), selection: staged, private: opts.private ?? false });
      refuseRewrites(plan, opts.replace ?? []);
      if (plan.create) throw new ForesightError(`the hub created ${opts.repoId} but does not show it`, { remedy: 'rerun foresight publish in a minute', external: true });
    }
    const operations: CommitOperation[] = [
      ...(await Promise.all(plan.uploads.filter((u) => u.change !== 'unchanged').map(async (u) => ({ operation: 'addOrUpdate' as const, path: u.path, content: await openAsBlob(u.local) })))),
      ...plan.deletes.map((path) => ({ operation: 'delete' as const, path })),
    ];
    const message = commitMessage(plan, gate.summary);
    let out;
    try {
      out = await commit({
        repo: { type: 'dataset', name: opts.repoId },
        operations,
        title: message.title,
        description: message.description,
        branch: revision,
        parentCommit: plan.parent ?? undefined,
        hubUrl: opts.endpoint,
        accessToken: token,
        fetch: t.fetch,
        useXet: false,
        abortSignal: opts.signal,
      });
    } catch (err) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (isStaleParent(err)) {
        throw new ForesightError(`someone else published to ${opts.repoId}@${revision} meanwhile (its head moved past ${plan.parent?.slice(0, 12)}); nothing of this publish was committed`, {
          remedy: 'rerun foresight publish: it reads the new head and shows what changes (--dry-run first to see it)',
          external: true,
          cause: err,
        });
      }
      throw hubError(err, { what: `committing to ${opts.repoId}`, endpoint: opts.endpoint, repoId: opts.repoId, revision });
    }
    if (!out?.commit.oid) throw new ForesightError(`the hub accepted the commit to ${opts.repoId} but named no commit`, { remedy: 'check the repository on the hub; rerun foresight publish if the files are missing', external: true });
    opts.print(`published ${operations.length} change(s) to ${opts.endpoint}/datasets/${opts.repoId} in commit ${out.commit.oid}`);
    if (opts.tag) await tagRevision(t, token, out.commit.oid, opts.tag, opts.print);
    return { kind: 'published', plan, commit: { oid: out.commit.oid, url: out.commit.url }, tag: opts.tag ?? null };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
