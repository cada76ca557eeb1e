import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDemoRepo } from '../../pipeline/demo/make-demo-repo.ts';

const execFileAsync = promisify(execFile);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function git(dir: string, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', ['-C', dir, ...args], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
  return stdout.trim();
}

const EXPECTED_SUBJECTS = [
  'Merge pull request #13 from frank/bump-version',
  'Revert "Add word_count helper (#5)" (#12)',
  'Add binary units option to format_bytes (#11)',
  'Fix clamp truncating floats (#10)',
  'Fix slugify producing empty segments (#9)',
  'Fix parse_duration ignoring uppercase units (#8)',
  'Merge pull request #7 from erin/contributing',
  'clamp: return an int so callers can index with it',
  'Add clamp helper (#6)',
  'Add word_count helper (#5)',
  'Add format_bytes helper (#4)',
  'Merge pull request #3 from carol/parse-duration',
  'Merge pull request #2 from bob/readme',
  'Add slugify helper (#1)',
  'Initial commit',
];

/**
 * Pinned so a change in any machine's or git version's output shows up here. Update it only when
 * the demo repository's content or history is changed on purpose.
 */
const EXPECTED_HEAD = '60027cd5abacd5fb504ae544df187c1c7dd0f049';

describe('makeDemoRepo', () => {
  let root: string;
  let dirA: string;
  let dirB: string;
  let headA: string;
  let headB: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'make-demo-repo-test-'));
    dirA = join(root, 'a');
    dirB = join(root, 'b');
    [{ head: headA }, { head: headB }] = await Promise.all([makeDemoRepo(dirA), makeDemoRepo(dirB)]);
  });

  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('is deterministic', async () => {
    expect(headA).toMatch(/^[0-9a-f]{40}$/);
    expect(headB).toBe(headA);
    expect(headA).toBe(EXPECTED_HEAD);
    expect(await git(dirA, 'rev-parse', 'main')).toBe(headA);
  });

  it('has the expected mainline subjects in order', async () => {
    const subjects = (await git(dirA, 'log', '--first-parent', '--format=%s', 'main')).split('\n');
    expect(subjects).toEqual(EXPECTED_SUBJECTS);
  });

  it('makes merges with two parents and every other mainline commit with one', async () => {
    const lines = (await git(dirA, 'log', '--first-parent', '--format=%P%x09%s%x09%cn', 'main')).split('\n');
    for (const line of lines) {
      const [parents = '', subject = '', committer = ''] = line.split('\t');
      const n = parents === '' ? 0 : parents.split(' ').length;
      if (subject.startsWith('Merge pull request')) {
        expect(n, subject).toBe(2);
        expect(committer, subject).toBe('GitHub');
      } else if (subject === 'Initial commit') {
        expect(n).toBe(0);
      } else {
        expect(n, subject).toBe(1);
        // Squash merges are committed by GitHub; the direct commit is not.
        expect(committer, subject).toBe(/\(#\d+\)$/.test(subject) ? 'GitHub' : 'Alice Maintainer');
      }
    }
  });

  it("names the reverted commit's real sha in the revert body", async () => {
    const log = (await git(dirA, 'log', '--first-parent', '--format=%H%x09%s', 'main')).split('\n');
    const wordCount = log.find((l) => l.endsWith('\tAdd word_count helper (#5)'))?.split('\t')[0];
    expect(wordCount).toMatch(/^[0-9a-f]{40}$/);
    const revert = log.find((l) => l.startsWith('Revert', 41))?.split('\t')[0];
    expect(revert).toBeDefined();
    const body = await git(dirA, 'log', '-1', '--format=%b', revert!);
    expect(body).toBe(`This reverts commit ${wordCount}.\n\nword_count duplicated str.split.`);
  });

  it('leaves only the main branch, checked out and clean', async () => {
    expect(await git(dirA, 'for-each-ref', '--format=%(refname)')).toBe('refs/heads/main');
    expect(await git(dirA, 'symbolic-ref', 'HEAD')).toBe('refs/heads/main');
    expect(await git(dirA, 'status', '--porcelain')).toBe('');
  });

  it('a generation killed midway leaves no target folder, and the next call makes the full repository', async () => {
    const parent = join(root, 'killed');
    await mkdir(parent);
    const dir = join(parent, 'clone');
    // The CLI (tsx) runs the script in a child process: its own process group is killed as a whole.
    const child = spawn('node_modules/.bin/tsx', ['pipeline/demo/make-demo-repo.ts', dir], { detached: true, stdio: 'ignore' });
    const exited = new Promise<void>((res) => child.on('exit', () => res()));
    let partial = '';
    try {
      // Wait for the first commits in the partial folder (HEAD's reflog has a line per commit).
      for (const started = Date.now(); Date.now() - started < 30_000; await new Promise((r) => setTimeout(r, 5))) {
        partial = (await readdir(parent)).find((n) => n.startsWith('clone.partial-')) ?? '';
        const reflog = partial ? await readFile(join(parent, partial, '.git', 'logs', 'HEAD'), 'utf8').catch(() => '') : '';
        if (reflog.split('\n').filter(Boolean).length >= 2) break;
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
    }
    await exited;
    expect(partial).not.toBe('');
    // The generator (tsx's child, named in the folder) is gone once the system has reaped it.
    const pid = Number(/^clone\.partial-(\d+)-/.exec(partial)?.[1]);
    for (const started = Date.now(); alive(pid) && Date.now() - started < 10_000; ) await new Promise((r) => setTimeout(r, 20));
    expect(alive(pid)).toBe(false);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(join(parent, partial))).toBe(true); // killed midway: its leftover is there

    const { head } = await makeDemoRepo(dir);
    expect(head).toBe(EXPECTED_HEAD);
    expect(await git(dir, 'rev-parse', 'main')).toBe(EXPECTED_HEAD);
    expect(await git(dir, 'status', '--porcelain')).toBe('');
    // The dead run's partial folder is gone, and nothing else is left next to the clone.
    expect(await readdir(parent)).toEqual(['clone']);
  });

  it('refuses a non-empty directory', async () => {
    const dir = join(root, 'busy');
    await mkdir(dir);
    await writeFile(join(dir, 'x'), '');
    await expect(makeDemoRepo(dir)).rejects.toThrow(/not empty/);
  });
});
