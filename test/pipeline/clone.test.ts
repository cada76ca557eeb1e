import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { cloneUrl, ensureClone } from '../../pipeline/clone.ts';
import { loadConfig, loadSecrets } from '../../core/foundation/config.ts';
import { clearSecrets, redact } from '../../core/foundation/secrets.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { makeDemoRepo } from '../../pipeline/demo/make-demo-repo.ts';
import { recordingLogger } from '../helpers/fake-github.ts';
import { gitRepo } from '../helpers/git-repo.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { runPipeline } from '../../pipeline/pipeline.ts';

const run = promisify(execFile);
const git = async (cwd: string, ...args: string[]): Promise<string> => (await run('git', args, { cwd })).stdout.trim();

/** A port on 127.0.0.1 that nothing listens on (opened, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('ensureClone', () => {
  let root: string;
  /** The generated demo repository (the source of the bare copy). */
  let demo: string;
  let head: string;
  let commits: number;
  /** A directory holding <remotes>/demo/minilib.git: FORESIGHT_GIT_URL = file://<remotes>. */
  let remotes: string;
  let gitUrl: string;
  const envBefore = { ...process.env };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'foresight-clone-'));
    demo = join(root, 'demo-src');
    ({ head } = await makeDemoRepo(demo));
    commits = Number(await git(demo, 'rev-list', '--count', '--all'));
    remotes = join(root, 'remotes');
    await mkdir(join(remotes, 'demo'), { recursive: true });
    await git(root, 'clone', '--quiet', '--bare', demo, join(remotes, 'demo', 'minilib.git'));
    gitUrl = `file://${remotes}`;
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
    expect(process.env).toEqual(envBefore);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('builds the URL from FORESIGHT_GIT_URL (trailing slashes dropped), GitHub by default', () => {
    expect(cloneUrl('demo/minilib')).toBe('https://github.com/demo/minilib.git');
    expect(cloneUrl('demo/minilib', loadConfig({ FORESIGHT_GIT_URL: `${gitUrl}//` }).clone.gitUrl)).toBe(`${gitUrl}/demo/minilib.git`);
  });

  it('clones owner/name from FORESIGHT_GIT_URL into data/<owner>__<name>/clone with full history and no checkout, then reuses it', async () => {
    const dataRoot = join(root, 'data-first');
    const log = recordingLogger();
    // As the CLI does: the URL comes from the one configuration.
    const path = await ensureClone({ repo: 'demo/minilib', dataRoot, log, gitUrl: loadConfig({ FORESIGHT_GIT_URL: gitUrl }).clone.gitUrl });
    expect(path).toBe(join(dataRoot, 'demo__minilib', 'clone'));
    // Full history: every commit of the source, the same head, and not shallow.
    expect(await git(path, 'rev-parse', 'HEAD')).toBe(head);
    expect(Number(await git(path, 'rev-list', '--count', '--all'))).toBe(commits);
    expect(await git(path, 'rev-parse', '--is-shallow-repository')).toBe('false');
    // No checkout: nothing but .git in the work tree.
    expect(await readdir(path)).toEqual(['.git']);
    expect(existsSync(`${path}.incomplete`)).toBe(false);
    expect(log.lines.filter((l) => /^cloning /.test(l.msg))).toHaveLength(1);
    expect(log.lines[0]!.msg).toContain(`${gitUrl}/demo/minilib.git`);

    // The second call clones nothing: it still works with the remote gone.
    await rm(join(remotes, 'demo', 'minilib.git'), { recursive: true, force: true });
    try {
      const again = await ensureClone({ repo: 'demo/minilib', dataRoot, log, gitUrl });
      expect(again).toBe(path);
      expect(log.lines.filter((l) => /^cloning /.test(l.msg))).toHaveLength(1);
      expect(await git(again, 'rev-parse', 'HEAD')).toBe(head);
    } finally {
      await git(root, 'clone', '--quiet', '--bare', demo, join(remotes, 'demo', 'minilib.git'));
    }
  });

  it('credentials in FORESIGHT_GIT_URL are never printed: the config holds the URL without them', async () => {
    const config = loadConfig({ FORESIGHT_GIT_URL: 'https://bot:hunter2-s3cret@git.example.org/' });
    const secrets = loadSecrets({ FORESIGHT_GIT_URL: 'https://bot:hunter2-s3cret@git.example.org/' });
    expect(config.clone.gitUrl).toBe('https://git.example.org');
    expect(JSON.stringify(config)).not.toContain('hunter2');
    expect(secrets.gitUrlCredentials).toBe('bot:hunter2-s3cret');
    const dataRoot = join(root, 'data-secret');
    const log = recordingLogger();
    const err = await ensureClone({ repo: 'demo/minilib', dataRoot, log, gitUrl: `file://${join(root, 'nowhere')}`, credentials: secrets.gitUrlCredentials }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect(redact((err as ForesightError).oneLine())).not.toContain('hunter2');
    expect(JSON.stringify(log.lines)).not.toContain('hunter2');
    clearSecrets();
  });

  it('an offline run never clones: it asks for a local clone', async () => {
    const dataRoot = join(root, 'data-offline');
    const err = await ensureClone({ repo: 'demo/minilib', dataRoot, log: recordingLogger(), gitUrl, offline: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toContain('offline run does not clone');
    expect((err as ForesightError).remedy).toContain('--clone');
    expect(existsSync(dataRoot)).toBe(false);
  });

  it('uses an explicit path as is, cloning nothing', async () => {
    const dataRoot = join(root, 'data-explicit');
    const log = recordingLogger();
    // Relative to the working directory, resolved.
    const rel = relative(process.cwd(), demo);
    expect(await ensureClone({ repo: 'demo/minilib', dataRoot, explicit: rel, log, gitUrl })).toBe(demo);
    expect(await ensureClone({ repo: 'demo/minilib', dataRoot, explicit: demo, log, gitUrl })).toBe(demo);
    expect(existsSync(dataRoot)).toBe(false);
    expect(log.lines).toEqual([]);
  });

  it('rejects a missing explicit path with a ForesightError naming --clone', async () => {
    const dataRoot = join(root, 'data-missing');
    const missing = join(root, 'no-such-clone');
    const err = await ensureClone({ repo: 'demo/minilib', dataRoot, explicit: missing, log: recordingLogger(), gitUrl }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    const fe = err as ForesightError;
    expect(fe.message).toContain(missing);
    expect(fe.remedy).toContain('--clone');
    // It never falls back to cloning.
    expect(existsSync(dataRoot)).toBe(false);
  });

  it.each([
    ['a missing repository', async () => `file://${join(root, 'nowhere')}`, /does not appear to be a git repository|not found|No such file/i],
    ['a refused connection', async () => `http://127.0.0.1:${await closedPort()}`, /unable to access .*(Failed to connect|Connection refused|Couldn't connect)/i],
  ])('reports %s as a ForesightError carrying git\'s reason, and leaves no clone behind', async (_what, base, reason) => {
    const dataRoot = join(root, `data-unreachable-${Math.random().toString(36).slice(2)}`);
    const url = await base();
    const err = await ensureClone({ repo: 'demo/minilib', dataRoot, log: recordingLogger(), gitUrl: url }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ForesightError);
    const fe = err as ForesightError;
    expect(fe.external).toBe(true);
    expect(fe.message).toMatch(new RegExp(`^could not clone ${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/demo/minilib\\.git: `));
    expect(fe.message).toMatch(reason);
    // git's reason, one line: no "fatal:" prefix, no stack trace.
    expect(fe.message).not.toContain('\n');
    expect(fe.message).not.toMatch(/fatal:|\bat .*\.(?:js|ts):\d+/);
    expect(fe.oneLine()).toContain('--clone');
    const dir = join(dataRoot, 'demo__minilib');
    expect(existsSync(join(dir, 'clone'))).toBe(false);
    expect(existsSync(join(dir, 'clone.incomplete'))).toBe(false);
  });
});

describe('runPipeline on a shallow clone', () => {
  it('refuses it before any stage runs, naming the cut and `fetch --unshallow`', async () => {
    const repo = await gitRepo();
    const root = await mkdtemp(join(tmpdir(), 'foresight-shallow-'));
    try {
      await repo.commit({ files: { 'pkg/a.py': 'x = 1\n' }, message: 'Add a (#1)', date: '2024-01-01T00:00:00Z' });
      await repo.commit({ files: { 'pkg/a.py': 'x = 2\n' }, message: 'Fix a (#2)', date: '2024-01-02T00:00:00Z' });
      await repo.commit({ files: { 'pkg/a.py': 'x = 3\n', 'tests/test_a.py': 'def test_a():\n    pass\n' }, message: 'Fix a again (#3)', date: '2024-01-03T00:00:00Z' });
      const clone = join(root, 'clone');
      await git(root, 'clone', '--quiet', '--depth', '2', `file://${repo.dir}`, clone);
      const dataRoot = join(root, 'data');
      const err = await runPipeline({ dataRoot, repo: { name: 'test/shallow', clone }, config: loadConfig({}, { offline: true }), log: silentLogger }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ForesightError);
      expect((err as ForesightError).oneLine()).toBe(
        `${clone} is a shallow clone (history cut at 2 commits): mining would miss most changes — git -C ${clone} fetch --unshallow`,
      );
      expect(existsSync(dataRoot)).toBe(false);
    } finally {
      await repo.remove();
      await rm(root, { recursive: true, force: true });
    }
  });
});
