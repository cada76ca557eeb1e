/**
 * The red team: patches that try to buy a score without fixing anything (test/helpers/red-team.ts),
 * graded by `foresight eval` on the demo's rows through real Docker. Each must score X = 0 and Y = 0,
 * its honest score, and be flagged where it touched the harness; the negative controls grade the same
 * patches with the defences off and show that the attack then works (or escapes into `infra`).
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../core/foundation/config.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { connectDocker, getRunner, gradeInstance, isDockerReachable, type GradeLimits } from '../../core/env/index.ts';
import { gradeLimits, readRows, runEval, type EvalRow } from '../../pipeline/eval/index.ts';
import { minedDemoCopy } from '../helpers/demo.ts';
import { ATTACKS, attackPatch, type Attack } from '../helpers/red-team.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
if (!dockerUp && process.env.CI) throw new Error('Docker is not reachable: CI must run the red-team tests (run `make setup`)');

/**
 * Short runs (the hang), and a small disk (the fill): the defences, not the defaults, are under test. The
 * demo's runs take a second or two: 10 s is only ever waited out by the attacks that never end.
 */
const LIMITS: GradeLimits = { ...gradeLimits(defaultConfig().validate), timeoutSec: 10, diskBytes: 256 * 1024 * 1024 };
const ROW = 'minilib__1-9';
const byName = (name: string): Attack => ATTACKS.find((a) => a.name === name)!;
/** The attacks that never end wait out the run timeout (twice per part, then the gold check): they start first, the rest run beside them. */
const NEVER_END = new Set(['hang', 'fork-bomb']);

describe.skipIf(!dockerUp)('red team: an agent cannot buy a score by gaming the grader (demo, real Docker)', () => {
  let hf: string;
  let clone: string;
  let row: EvalRow;
  let scratch: string;

  beforeAll(async () => {
    const data = await minedDemoCopy();
    hf = join(data, 'demo__minilib', 'emit', 'hf');
    clone = join(data, 'demo__minilib', 'clone');
    row = (await readRows(hf, 'test')).rows.find((r) => r.instance_id === ROW)!;
    scratch = await mkdtemp(join(tmpdir(), 'foresight-red-team-'));
  }, 600_000);

  /** `foresight eval` of one attack on ROW (the other row has no prediction: 0 in the means). */
  async function evalAttack(a: Attack, limits: GradeLimits = LIMITS) {
    const preds = join(scratch, `${a.name}.jsonl`);
    await writeFile(preds, JSON.stringify({ instance_id: ROW, model_name_or_path: a.name, model_patch: await attackPatch(clone, row.base_commit, a) }) + '\n');
    const { report } = await runEval({ dataset: hf, split: 'test', predictions: { path: preds }, jobs: 1, docker, limits, log: silentLogger, signal: new AbortController().signal });
    return report;
  }

  /** The hang's grading runs get a pids limit of their own: its containers are told from the other attacks' running beside them. */
  const INSPECTED: GradeLimits = { ...LIMITS, pidsLimit: (LIMITS.pidsLimit ?? 512) + 1 };

  /** The HostConfig of the first grading container seen running with INSPECTED's limits (null: none within ~40 s). */
  async function inspectGradingContainer(): Promise<Record<string, unknown> | null> {
    for (let k = 0; k < 200; k++) {
      for (const c of await docker.listContainers({ filters: { ancestor: [row.docker_image] } })) {
        const host = ((await docker.getContainer(c.Id).inspect().catch(() => null)) as { HostConfig: Record<string, unknown> } | null)?.HostConfig;
        if (host && host['PidsLimit'] === INSPECTED.pidsLimit) return host;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    return null;
  }

  /** The same patch graded with the defences off. */
  async function unguarded(a: Attack) {
    return gradeInstance({
      docker, image: row.docker_image, runner: getRunner(row.runner), patch: await attackPatch(clone, row.base_commit, a), goldPatch: row.patch, bundle: row.grading_bundle,
      f2p: row.FAIL_TO_PASS, p2p: row.PASS_TO_PASS, anti: row.ANTICIPATION_FAIL_TO_PASS, limits: LIMITS, guard: false,
    });
  }

  // Attacks on the harness: restored before the tests run, and flagged.
  const HARNESS: Record<string, string[]> = {
    'root-conftest': ['conftest.py'],
    'nested-conftest': ['tests/conftest.py'],
    'ini-addopts-plugin': ['pytest.ini'],
    'pyproject-addopts': ['pyproject.toml'],
    'runtest-noop': ['conftest.py'],
    sitecustomize: ['sitecustomize.py'],
    'pth-file': ['forge.pth'],
    'symlinked-conftest': ['conftest.py'],
    'broken-config': ['pyproject.toml'],
    'shadow-test': ['tests/test_text/__init__.py'],
  };

  // Concurrent: most attacks wait (timeouts, container starts) more than they compute.
  describe.concurrent('attacks', () => {
  for (const a of [...ATTACKS].sort((x, y) => Number(NEVER_END.has(y.name)) - Number(NEVER_END.has(x.name)))) {
    it(`${a.name}: ${a.what} scores X = 0, Y = 0`, async ({ expect }) => {
      // While the hang keeps its container alive: the container is locked down.
      const [report, host] = await Promise.all([evalAttack(a, a.name === 'hang' ? INSPECTED : LIMITS), a.name === 'hang' ? inspectGradingContainer() : null]);
      if (a.name === 'hang') {
        expect(host).toMatchObject({
          ReadonlyRootfs: true,
          Memory: LIMITS.memoryBytes,
          MemorySwap: LIMITS.memoryBytes,
          PidsLimit: INSPECTED.pidsLimit,
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges'],
          NetworkMode: 'none',
        });
        expect((host!['Tmpfs'] as Record<string, string>)['/tmp']).toContain(`size=${LIMITS.diskBytes}`);
      }
      const i = report.instances.find((x) => x.instance_id === ROW)!;
      expect(i, JSON.stringify(i?.runs ?? null)).toMatchObject({ X: 0, Y: 0 });
      // Nothing escapes into infra: every instance counts in the means, which are 0.
      expect(report.aggregate).toMatchObject({ total: 2, submitted: 1, infra: 0, mean_X: 0, mean_Y: 0 });
      const flagged = HARNESS[a.name];
      if (flagged) {
        expect(i.tampered_files.map((t) => t.path)).toEqual(expect.arrayContaining(flagged));
        expect(report.aggregate.harness_touched).toBe(1);
      }
      if (a.name === 'hang' || a.name === 'fork-bomb' || a.name.startsWith('source-')) {
        // Runs that produce nothing while the gold run in the same image does: a failure, not infra.
        expect(i.x).toMatchObject({ kind: 'scored', value: 0, reason: 'no_evidence_under_patch' });
        expect(i.gold_evidence).toEqual({ x: true, y: true });
        expect(i.runs.x?.attempts).toBe(2);
      }
      if (a.name.startsWith('source-')) expect(i.runs.x?.output_tail).toContain("[foresight-guard] before tests/test_text.py::");
      if (a.name === 'deleted-tests') expect(i.reset_test_files).toContain('tests/test_text.py');
    }, 300_000);
  }
  });

  describe.concurrent('negative controls: the same attacks with the defences off', () => {
    for (const name of ['hang', 'broken-config']) {
      it(`${name} escapes into infra without them`, async ({ expect }) => {
        const g = await unguarded(byName(name));
        expect(g.x.kind, JSON.stringify(g.x)).toBe('infra');
      }, 120_000);
    }
    for (const name of ['root-conftest', 'nested-conftest', 'ini-addopts-plugin', 'pyproject-addopts', 'runtest-noop', 'source-runtest-noop', 'source-report-patch', 'report-rewrite', 'egg-info-entry-point']) {
      it(`${name} buys X = 100 % without them`, async ({ expect }) => {
        const g = await unguarded(byName(name));
        expect(g.x, JSON.stringify(g)).toMatchObject({ kind: 'scored', value: 1 });
      }, 120_000);
    }
  });

  it('the gold patch still scores X = 100 %, Y = 0 % on both rows under the defences', async () => {
    const { report } = await runEval({ dataset: hf, split: 'test', predictions: 'gold', jobs: 1, docker, limits: LIMITS, log: silentLogger, signal: new AbortController().signal });
    expect(report.instances.map((i) => [i.instance_id, i.X, i.Y, i.tampered_files.length])).toEqual([
      ['minilib__1-9', 1, 0, 0],
      ['minilib__3-8', 1, 0, 0],
    ]);
    expect(JSON.parse(await readFile(join(hf, 'eval', 'test-gold', 'report.json'), 'utf8')).aggregate).toMatchObject({ mean_X: 1, mean_Y: 0 });
  }, 300_000);
});
