/**
 * The repeat strategy through real Docker: each state once, then only the tests that
 * can still be in a set, selected by node id. A test that flips in the repeats is flaky and in no set:
 * pinned deterministically on a generated repository (a test that passes its first two runs in the
 * container, then fails), and on the demo, whose flaky test fails at random half the time.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable, openChainEnv, type ChainEnv } from '../../../core/env/index.ts';
import { runExec } from '../../../core/env/container/exec.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import { computeSets } from '../../../stages/validate/compute-sets.ts';
import { runChainStates, type ChainStates, type RepeatStrategy } from '../../../stages/validate/run-states.ts';
import { validatedChain } from '../../helpers/chain-fixture.ts';
import { minedDemoCopy } from '../../helpers/demo.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

/** The states of a run that did not stop on an outgrown environment (these tests give no install candidate). */
async function statesOf(p: Promise<ChainStates>): Promise<Extract<ChainStates, { kind: 'ran' }>> {
  const r = await p;
  if (r.kind !== 'ran') throw new Error(`unexpected outgrown environment at ${r.state}`);
  return r;
}

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[repeat-docker.test] SKIPPED: Docker is not reachable and CI is unset');

const LOG = '/tmp/foresight-ran.log';
// Every test logs its node id to a file outside the work tree (it survives the checkouts of one container).
const HEADER = `import os
import pytest
from m import f


@pytest.fixture(autouse=True)
def _log(request):
    with open("${LOG}", "a") as out:
        out.write(request.node.nodeid + "\\n")
    yield
`;
const FLIP = `

def test_flip():
    # Passes its first two runs in this container, then fails: flaky, whatever the code does.
    path = "/tmp/foresight-flip-count"
    n = int(open(path).read()) if os.path.exists(path) else 0
    open(path, "w").write(str(n + 1))
    assert n < 2
`;
const DEAD = Array.from({ length: 20 }, (_, i) => `\n\ndef test_dead_${String(i).padStart(2, '0')}():\n    assert False\n`).join('');
const PR1_TESTS = `${HEADER}

def test_f():
    assert f() == 2


def test_keep():
    assert True
${FLIP}${DEAD}`;
const EDGE_TESTS = `${HEADER}

def test_edge():
    assert f(-1) == 0
`;

describe.skipIf(skip)('repeat strategy (Docker): a flip in the repeats is caught', () => {
  let repo: GitRepo;
  let shas: { pr1_base: string; pr1_head: string; pr2_base: string; pr2_head: string };

  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    repo = await gitRepo();
    const pr1_base = await repo.commit({ files: { 'm.py': 'def f(x=0):\n    return 1\n' }, message: 'base', date: '2024-01-01T00:00:00Z' });
    const pr1_head = await repo.commit({ files: { 'm.py': 'def f(x=0):\n    return 2 + x\n', 'tests/test_m.py': PR1_TESTS }, message: 'PR1', date: '2024-01-02T00:00:00Z' });
    const pr2_base = await repo.commit({ files: { 'README': 'x\n' }, message: 'docs', date: '2024-01-03T00:00:00Z' });
    const pr2_head = await repo.commit({ files: { 'm.py': 'def f(x=0):\n    return max(0, 2 + x * 2)\n', 'tests/test_edge.py': EDGE_TESTS }, message: 'PR2', date: '2024-01-04T00:00:00Z' });
    shas = { pr1_base, pr1_head, pr2_base, pr2_head };
  }, 120_000);

  afterAll(async () => {
    await repo?.remove();
  });

  async function validate(repeat: RepeatStrategy) {
    const chain = validatedChain({
      instance_id: 'flip__1-2', ...shas,
      pr1_test_files: ['tests/test_m.py'], pr1_overlay_files: [], anticipation_test_files: ['tests/test_edge.py'], anticipation_overlay_files: [],
    });
    const env: ChainEnv = await openChainEnv({ gitDir: join(repo.dir, '.git'), image: DEFAULT_BASE_ALIAS, runner: pytestRunner, docker, env: { PYTHONPATH: '/tmp/testbed' } });
    try {
      const { states, cost } = await statesOf(runChainStates({ chain, runs: 3, repeat, signal: new AbortController().signal, envFor: async () => ({ kind: 'ready', env, runner: pytestRunner }) }));
      const ran = await runExec(docker.getContainer(env.containerId), ['cat', LOG], { capture: 'stdout' });
      return { sets: computeSets(states), states, cost, ran: ran.text.trim().split('\n') };
    } finally {
      await env.close();
    }
  }

  it('candidates: test_flip is flaky and in no set; the sets hold; tests in no set are run again only as the sample', async () => {
    const { sets, cost, ran } = await validate('candidates');
    expect(sets).toMatchObject({
      FAIL_TO_PASS: ['tests/test_m.py::test_f'],
      PASS_TO_PASS: ['tests/test_m.py::test_keep'],
      PR2_FAIL_TO_PASS: ['tests/test_edge.py::test_edge'],
      ANTICIPATION_FAIL_TO_PASS: ['tests/test_edge.py::test_edge'],
      flaky_tests: ['tests/test_m.py::test_flip'],
      exclusion: null,
    });
    // Candidates run three times at S1 and S2, as before.
    expect(ran.filter((l) => l === 'tests/test_m.py::test_f')).toHaveLength(6);
    // The 20 dead tests: all once at S1 and S2, then a sample of 2 in each repeat of S1 and S2 (old: 120).
    expect(ran.filter((l) => l.includes('test_dead_'))).toHaveLength(40 + 2 * 2 * 2);
    // 5 first runs, then S1, S2 (test_flip, test_f, test_keep), S3, S4, S5 (test_edge) twice; no fallback.
    expect(cost.stateRuns).toBe(15);
  }, 300_000);

  it('all (the old strategy, the baseline of make bench-validate): the same sets, every test run three times', async () => {
    const { sets, ran } = await validate('all');
    expect(sets).toMatchObject({
      FAIL_TO_PASS: ['tests/test_m.py::test_f'],
      PASS_TO_PASS: ['tests/test_m.py::test_keep'],
      ANTICIPATION_FAIL_TO_PASS: ['tests/test_edge.py::test_edge'],
      flaky_tests: ['tests/test_m.py::test_flip'],
    });
    expect(ran.filter((l) => l.includes('test_dead_'))).toHaveLength(120);
  }, 300_000);
});

const FLAKY = 'tests/test_text.py::test_normalize_space_random_input';
const SETS = ['FAIL_TO_PASS', 'PASS_TO_PASS', 'p2p_excluded_gold_fail', 'ANTICIPATION_FAIL_TO_PASS', 'PR2_FAIL_TO_PASS', 'PR2_PASS_TO_PASS'] as const;

describe.skipIf(skip)('repeat strategy (Docker): the demo', () => {
  it('validates the demo with the default strategy: its flaky test is in no set, the true chains keep their sets', async () => {
    // The demo as `foresight demo` mines it (default strategy), shared with the other files that read it.
    const data = await minedDemoCopy();
    const dir = join(data, 'demo__minilib', 'validate');
    const items = await readFile(join(dir, 'items.jsonl'), 'utf8');
    const manifest = await readFile(join(dir, 'manifest.json'), 'utf8');
    await rm(data, { recursive: true, force: true });
    const rows = items.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const byId = Object.fromEntries(rows.map((r) => [String(r.instance_id), r] as const));
    for (const r of rows) for (const set of SETS) expect(r[set] as string[], `${String(r.instance_id)} ${set}`).not.toContain(FLAKY);
    expect(byId['minilib__1-9']).toMatchObject({ FAIL_TO_PASS: ['tests/test_text.py::test_slugify_basic'], ANTICIPATION_FAIL_TO_PASS: ['tests/test_text.py::test_slugify_collapses_whitespace'], excluded: null });
    expect(byId['minilib__3-8']).toMatchObject({ ANTICIPATION_FAIL_TO_PASS: ['tests/test_timeparse.py::test_parse_uppercase_units'], excluded: null });
    // minilib__1-9 runs tests/test_text.py in all five states, and its candidates with it: the flaky
    // test, whenever it is a candidate, is run three times in each of them, as before.
    const states = byId['minilib__1-9']!.states as Array<{ name: string; runs: number }>;
    expect(states.map((s) => [s.name, s.runs])).toEqual([['S1', 3], ['S2', 3], ['S3', 3], ['S4', 3], ['S5', 3]]);
    const { stats } = JSON.parse(manifest) as { stats: Record<string, number> };
    const validated = rows.filter((r) => r.cost !== null).length;
    expect(stats.state_runs).toBeGreaterThanOrEqual(5 * validated);
    expect(stats.state_runs).toBeLessThanOrEqual(15 * validated);
    // Every demo chain runs in the one env image of the demo; mined with --jobs 4 (minedDemoCopy), the
    // chains after the first four reuse their warm containers.
    const envImages = new Set(rows.flatMap((r) => [r.env_image_pr1, r.env_image_pr2]).filter((x) => x !== null));
    expect(envImages.size).toBe(1);
    expect(validated).toBeGreaterThan(2);
    expect(stats.container_starts).toBeLessThanOrEqual(4);
  }, 600_000);
});
