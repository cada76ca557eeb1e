/**
 * core/foundation/git.ts on real repositories: revisions from data never become options, and a shallow clone
 * is refused before anything is mined from it.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../core/foundation/errors.ts';
import { assertFullClone, notAnOption, revParse } from '../../core/foundation/git.ts';
import { gitRepo, type GitRepo } from '../helpers/git-repo.ts';

const run = promisify(execFile);
const git = async (cwd: string, ...args: string[]): Promise<string> => (await run('git', args, { cwd })).stdout.trim();

describe('core/foundation/git.ts', () => {
  let repo: GitRepo;
  let root: string;
  const shas: string[] = [];

  beforeAll(async () => {
    repo = await gitRepo();
    root = await mkdtemp(join(tmpdir(), 'foresight-git-test-'));
    for (let i = 1; i <= 5; i++) {
      shas.push(await repo.commit({ files: { 'pkg/a.py': `x = ${i}\n` }, message: `Change ${i}`, date: `2024-01-0${i}T00:00:00Z` }));
    }
  });
  afterAll(async () => {
    await repo.remove();
    await rm(root, { recursive: true, force: true });
  });

  it('revParse reads a revision starting with "-" as a revision, not an option', async () => {
    // git forbids such branch names but not such refs: a tag named "-release" is reachable as "-release".
    await repo.git(['update-ref', 'refs/tags/-release', shas[2]!]);
    expect(await revParse(repo.dir, '-release')).toBe(shas[2]);
    // One that names nothing is an unknown revision (a ForesightError), never an option git obeys.
    const err = await revParse(repo.dir, '--git-dir').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as Error).message).toMatch(/^git rev-parse --verify --end-of-options failed/);
  });

  it('notAnOption refuses a revision that reads as an option (for commands without --end-of-options)', () => {
    expect(notAnOption(shas[0]!)).toBe(shas[0]);
    expect(() => notAnOption('--output=/tmp/x')).toThrow(ForesightError);
    expect(() => notAnOption('-L1,1')).toThrow(/starts with "-": git would take it as an option/);
  });

  it('assertFullClone accepts a full clone and refuses a shallow one, naming the cut and the remedy', async () => {
    const full = join(root, 'full');
    await git(root, 'clone', '--quiet', `file://${repo.dir}`, full);
    await expect(assertFullClone(full)).resolves.toBeUndefined();

    const shallow = join(root, 'shallow');
    await git(root, 'clone', '--quiet', '--depth', '2', `file://${repo.dir}`, shallow);
    expect(await git(shallow, 'rev-parse', '--is-shallow-repository')).toBe('true');
    const err = await assertFullClone(shallow).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForesightError);
    const fe = err as ForesightError;
    expect(fe.message).toBe(`${shallow} is a shallow clone (history cut at 2 commits): mining would miss most changes`);
    expect(fe.remedy).toBe(`git -C ${shallow} fetch --unshallow`);

    // The remedy works: the same clone, unshallowed, is accepted.
    await git(shallow, 'fetch', '--quiet', '--unshallow');
    await expect(assertFullClone(shallow)).resolves.toBeUndefined();
  });

  it('assertFullClone refuses a folder that is not a git repository', async () => {
    await expect(assertFullClone(root)).rejects.toThrow(`${root} is not a git repository`);
  });
});
