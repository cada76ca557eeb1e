/**
 * `szz-eval --execute` through real Docker on a history the test generates (squash-merged PRs "Title (#N)"):
 *  - #5 fixes greet() crashing on None; blame names #1, which wrote the fixed lines, but #3 deleted the None
 *    guard of the helper greet relies on: the bisection names #3, so blame + execution scores what blame misses;
 *  - #7's test module imports a package this environment does not have: its tests cannot run at the fix, so it
 *    is dropped with that reason and scored by neither;
 *  - #8 changes only a JavaScript test, which pytest does not run: dropped as touching no test module, not as infra.
 * A rerun reads the checkpoints and does no container work. `ceiling` probes only at the oracle's commit: #3 (the
 * true inducer) is named, #2 (an oracle naming an earlier commit, where the tests still pass) is not. One container
 * per fix (the bookworm base image has pytest; a root conftest.py puts the work tree on sys.path).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/foundation/config.ts';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable } from '../../core/env/index.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { readOracle } from '../../stages/szz/index.ts';
import { ceilingMainline, executeOracle, formatExecuteReport, type ExecuteReport } from '../../pipeline/szz-eval/execute.ts';
import { copyProject } from '../helpers/code-copy.ts';
import { gitRepo, type GitRepo } from '../helpers/git-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[szz-execute.test] SKIPPED: Docker is not reachable and CI is unset');

const day = (n: number): string => `2024-03-${String(n).padStart(2, '0')}T12:00:00Z`;
const NORMALIZE_GUARDED = "def normalize(s):\n    if s is None:\n        return ''\n    return ' '.join(s.split())\n";
const GREET = "from text import normalize\n\n\ndef greet(name):\n    return 'hello ' + normalize(name)\n";
const TEST_GREET = "from greet import greet\n\n\ndef test_greet():\n    assert greet('  ann ') == 'hello ann'\n";

describe.skipIf(skip)('szz-eval --execute (Docker, a generated history)', () => {
  let repo: GitRepo;
  let dataRoot: string;
  const sha: Record<number, string> = {};
  let first: ExecuteReport;
  let run: () => Promise<ExecuteReport>;
  let config: ReturnType<typeof loadConfig>;
  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    repo = await gitRepo();
    const prs: Array<{ title: string; files: Record<string, string> }> = [
      { title: 'Add text helpers', files: { 'text.py': NORMALIZE_GUARDED, 'greet.py': GREET, 'tests/test_greet.py': TEST_GREET } },
      { title: 'Document the helpers', files: { 'README.md': 'demo: greet and normalize\n' } },
      { title: 'Simplify normalize', files: { 'text.py': "def normalize(s):\n    return ' '.join(s.split())\n" } },
      { title: 'Update the docs', files: { 'README.md': 'demo: greet, normalize\n' } },
      {
        title: 'Fix greet crashing on a missing name',
        files: {
          'greet.py': "from text import normalize\n\n\ndef greet(name):\n    if name is None:\n        return 'hello '\n    return 'hello ' + normalize(name)\n",
          'tests/test_greet.py': `${TEST_GREET}\n\ndef test_greet_none():\n    assert greet(None) == 'hello '\n`,
        },
      },
      { title: 'Add a settings loader', files: { 'loader.py': "def load(text):\n    return dict(line.split('=') for line in text.splitlines())\n" } },
      {
        title: 'Fix the loader on blank lines',
        files: {
          'loader.py': "def load(text):\n    return dict(line.split('=') for line in text.splitlines() if line.strip())\n",
          // A package no environment here installs: the test module cannot be imported, not even at the fix.
          'tests/test_loader.py': "import not_installed_anywhere\nfrom loader import load\n\n\ndef test_blank_lines():\n    assert load('a=1\\n\\nb=2') == {'a': '1', 'b': '2'}\n",
        },
      },
      {
        title: 'Fix the widget on small screens',
        files: { 'static/widget.js': 'export const width = 12;\n', 'js_tests/widget.test.js': "test('width', () => expect(width).toBe(12));\n" },
      },
    ];
    await repo.commit({ files: { 'README.md': 'demo\n', 'conftest.py': '' }, message: 'Initial commit', date: day(1) });
    for (const [i, pr] of prs.entries()) sha[i + 1] = await repo.commit({ files: pr.files, message: `${pr.title} (#${i + 1})`, date: day(i + 2) });
    dataRoot = await mkdtemp(join(tmpdir(), 'foresight-szz-execute-'));
    const oraclePath = join(dataRoot, 'oracle.jsonl');
    await writeFile(oraclePath, [{ fix: sha[5], inducing: [sha[3]] }, { fix: sha[7], inducing: [sha[6]] }, { fix: sha[8], inducing: [sha[1]] }].map((e) => JSON.stringify(e)).join('\n') + '\n');
    const oracle = await readOracle(oraclePath);
    config = loadConfig({ FORESIGHT_OFFLINE: '1', FORESIGHT_IMAGE: DEFAULT_BASE_ALIAS });
    const ac = new AbortController();
    run = () => executeOracle({ repo: 'gen/szzexec', clone: repo.dir, oracle, config, repoDir: join(dataRoot, 'gen__szzexec'), jobs: 1, log: silentLogger, signal: ac.signal });
    first = await run();
    console.log(`[szz-execute]\n${formatExecuteReport(first)}`);
  }, 300_000);
  afterAll(async () => {
    await repo?.remove();
    if (dataRoot) await rm(dataRoot, { recursive: true, force: true });
  });

  it("scores #5 on blame alone (wrong: #1's lines) and on blame + execution (the bisection's #3), on the same entry", () => {
    const row = first.rows.find((r) => r.fix === sha[5])!;
    expect(row.blame).not.toContain(sha[3]);
    expect(row.execution).toMatchObject({ kind: 'bisected', outcome: 'found', commit: sha[3], failToPass: ['tests/test_greet.py::test_greet_none'] });
    expect(row.combined).toEqual([sha[3]]);
    expect(first.blame.fixes).toBe(1);
    expect(first.combined.fixes).toBe(1);
    expect(first.blame.f1).toBe(0);
    expect(first.combined.f1).toBe(1);
    // S4 and S5, then the bisection's probes (its bad end is S4, not run again), in one container.
    expect(row.execution.cost.containers).toBe(1);
    expect(row.execution.cost.runs).toBeGreaterThanOrEqual(4);
  });

  it('drops #7, whose test module cannot be imported even at the fix, with that reason, and scores it nowhere', () => {
    expect(first.dropped).toContainEqual({ fix: sha[7], reason: 'fix_tests_broken', detail: expect.stringContaining('tests/test_loader.py cannot be imported at the fix') });
    const printed = formatExecuteReport(first);
    expect(printed).toContain('scored: 1 of 3 oracle fixes');
    expect(printed).toMatch(/blame only\s+1\s+\d+\s+0\s+.*0\.000/);
    expect(printed).toMatch(/blame \+ execution\s+1\s+1\s+1\s+1\.000\s+1\.000\s+1\.000/);
    expect(printed).toContain('fix_tests_broken: sqlite: tests/test_loader.py cannot be imported at the fix');
    expect(printed).toContain("rule: blame + execution: the bisection's commit");
  });

  it('drops #8, whose only test module is one pytest does not run (a JavaScript test), as touching no test module: no infra failure', () => {
    expect(first.dropped).toContainEqual({ fix: sha[8], reason: 'no_test_files', detail: expect.stringContaining('touched no test file the pytest runner runs: js_tests/widget.test.js') });
    expect(first.dropped).toHaveLength(2);
    expect(first.rows.find((r) => r.fix === sha[8])!.execution.cost.runs).toBe(0);
  });

  it('a rerun with the same inputs reads every fix from its checkpoint: no container, no run', async () => {
    const again = await run();
    expect(again.rows.every((r) => r.reused)).toBe(true);
    expect(again.work).toEqual({ fixesRun: 0, containers: 0, runs: 0, seconds: 0 });
    expect(again.combined).toEqual(first.combined);
    expect(again.blame).toEqual(first.blame);
    expect(again.dropped).toEqual(first.dropped);
  }, 60_000);

  it('a one-line change to the execution code (pipeline/szz-eval/fix-probe.ts) makes a rerun execute the fix again', async () => {
    const copy = await copyProject();
    try {
      type ExecuteModule = typeof import('../../pipeline/szz-eval/execute.ts');
      const fromCopy = await copy.load<ExecuteModule>('pipeline/szz-eval/execute.ts');
      const oracle = (await readOracle(join(dataRoot, 'oracle.jsonl'))).filter((e) => e.fix === sha[5]);
      const once = (): Promise<ExecuteReport> =>
        fromCopy.executeOracle({ repo: 'gen/szzexec', clone: repo.dir, oracle, config, repoDir: join(dataRoot, 'gen__szzexec'), jobs: 1, log: silentLogger, signal: new AbortController().signal });
      // The same code in another folder keeps the key: read from the checkpoint.
      expect((await once()).rows[0]!.reused).toBe(true);
      await copy.editLine('pipeline/szz-eval/fix-probe.ts', /^function /);
      const again = await once();
      expect(again.rows[0]!.reused).toBe(false);
      expect(again.work.fixesRun).toBe(1);
      expect(again.rows[0]!.execution).toMatchObject({ outcome: 'found', commit: sha[3] });
    } finally {
      await copy.remove();
    }
  }, 300_000);

  it("the bisection's budget (FORESIGHT_BISECT_*) is part of a fix's checkpoint key: the search stops within a smaller one, and the default's answer is kept beside it", async () => {
    const small = loadConfig({ FORESIGHT_OFFLINE: '1', FORESIGHT_IMAGE: DEFAULT_BASE_ALIAS, FORESIGHT_BISECT_MAX_PROBES: '2', FORESIGHT_BISECT_GOOD_END_PROBES: '1' });
    const ac = new AbortController();
    const oracle = (await readOracle(join(dataRoot, 'oracle.jsonl'))).slice(0, 1);
    const r = await executeOracle({ repo: 'gen/szzexec', clone: repo.dir, oracle, config: small, repoDir: join(dataRoot, 'gen__szzexec'), jobs: 1, log: silentLogger, signal: ac.signal });
    const row = r.rows[0]!;
    expect(row.reused).toBe(false);
    expect(row.execution.kind).toBe('bisected');
    const steps = row.execution.kind === 'bisected' ? row.execution.steps : [];
    expect(steps.filter((st) => st.role === 'good_end').length).toBeLessThanOrEqual(1);
    // One good-end probe cannot reach #2, where the tests pass: #3 is not found.
    expect(row.execution).not.toMatchObject({ outcome: 'found', commit: sha[3] });
    // The default budget again: its own answer for #5 is still in the checkpoint beside the small budget's, and read back.
    const again = await run();
    const five = again.rows.find((x) => x.fix === sha[5])!;
    expect(again.rows.every((x) => x.reused)).toBe(true);
    expect(five.execution).toMatchObject({ outcome: 'found', commit: sha[3] });
  }, 300_000);

  it("ceiling: probed only at the oracle's commit, #5's tests name #3 (its parent passes) and cannot name #2 (they still pass there)", async () => {
    const ceilingOf = async (inducer: number, dir: string): Promise<ExecuteReport> => {
      const path = join(dataRoot, `${dir}.jsonl`);
      await writeFile(path, JSON.stringify({ fix: sha[5], inducing: [sha[inducer]] }) + '\n');
      const ac = new AbortController();
      return executeOracle({ repo: 'gen/szzexec', clone: repo.dir, oracle: await readOracle(path), config, repoDir: join(dataRoot, dir), jobs: 1, log: silentLogger, signal: ac.signal, ceiling: true });
    };
    const right = await ceilingOf(3, 'ceiling-3');
    expect(right.rows[0]!.execution).toMatchObject({ kind: 'bisected', outcome: 'found', commit: sha[3] });
    // Only #3's parent, #3 and the bad end (#4, #5's parent) were probed: blame's candidate #1 never was.
    const probedAt = right.rows[0]!.execution.kind === 'bisected' ? right.rows[0]!.execution.steps.map((st) => st.commit) : [];
    expect(probedAt).toEqual(expect.arrayContaining([sha[2], sha[3]]));
    expect(probedAt.every((c) => [sha[2], sha[3], sha[4]].includes(c))).toBe(true);
    expect(right.ceiling).toEqual({ named: 1 });
    expect(right.combined.f1).toBe(1);
    expect(formatExecuteReport(right)).toContain("they named it for 1 of 1 scored fixes");
    // An oracle naming #2, after which the tests still pass: they name the first commit where they fail, not #2.
    const wrong = await ceilingOf(2, 'ceiling-2');
    expect(wrong.rows[0]!.execution).toMatchObject({ kind: 'bisected', outcome: 'found', commit: sha[4] });
    expect(wrong.ceiling).toEqual({ named: 0 });
    expect(wrong.combined.f1).toBe(0);
    // The ceiling's checkpoints are its own: the first run's are untouched and still read.
    expect((await run()).rows.every((r) => r.reused)).toBe(true);
  }, 300_000);
});

describe('ceilingMainline', () => {
  const mainline = ['a', 'b', 'c', 'd', 'e', 'f'].map((sha, i) => ({ sha, date: `2024-01-0${i + 1}T00:00:00Z` }));
  it("keeps each oracle commit's parent, the commit and the fix's parent, oldest first", () => {
    expect(ceilingMainline(mainline, ['c'], 'f').map((c) => c.sha)).toEqual(['b', 'c', 'f']);
    expect(ceilingMainline(mainline, ['d', 'b'], 'e').map((c) => c.sha)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });
  it("leaves out an oracle commit that is not below the fix's parent, or is the first commit (no parent)", () => {
    expect(ceilingMainline(mainline, ['f', 'a', 'zz'], 'e').map((c) => c.sha)).toEqual(['e']);
    expect(ceilingMainline(mainline, ['c'], 'zz')).toEqual([]);
  });
});
