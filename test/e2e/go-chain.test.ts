/**
 * A Go module in the demo's style (test/helpers/go-demo-repo.ts), mined from discover through emit with real
 * Docker and the offline judges: the env image is detected from go.mod, the runner is `go test -json`. Its
 * go.mod says `go 1.19` while the code calls `cmp.Or` (Go 1.22): the verify loop passes over Go 1.21 (the
 * newest released by the history's dates; its check cannot build the tests), records why, and chooses Go
 * 1.22 (Debian bookworm-backports, whose go wraps a build failure in a JSON event). #1 Slugify
 * -> #3 (runs of whitespace) becomes a `test` row whose FAIL_TO_PASS is #1's new test (its file does not compile at pr1_base: PASS_TO_PASS is the test of that
 * file's base version) and whose ANTICIPATION_FAIL_TO_PASS is #3's new test; the row is `go`, and its
 * gold patches pass in its eval image. The red team's attacks, in Go: a TestMain that exits 0, a graded test
 * rewritten to pass, code that exits 0 before the tests; each beside a wrong Slugify (so the package
 * compiles), each scoring X = 0.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable, type GradeLimits } from '../../core/env/index.ts';
import { ChoiceFileSchema } from '../../core/env/image/choice-file.ts';
import { defaultConfig, loadConfig } from '../../core/foundation/config.ts';
import { gradeLimits } from '../../pipeline/eval/index.ts';
import { emittedRows, evalOne, type Row } from '../helpers/eval-one.ts';
import { attackPatch, type Attack } from '../helpers/red-team.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import { runPipeline } from '../../pipeline/pipeline.ts';
import { makeGoDemoRepo } from '../helpers/go-demo-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[go-chain.test] SKIPPED: Docker is not reachable and CI is unset');

describe.skipIf(skip)('a Go module mined to a `test` row (Docker, go test -json)', () => {
  let root: string;
  let clone: string;
  let test: Row[];
  let verified: Row[];
  let funnel: Row[];
  const hf = (): string => join(root, 'data', 'demo__gotext', 'emit', 'hf');

  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    root = await mkdtemp(join(tmpdir(), 'foresight-go-chain-'));
    clone = join(root, 'clone');
    await makeGoDemoRepo(clone, { newerStd: true });
    const config = loadConfig({ FORESIGHT_OFFLINE: '1', FORESIGHT_RUNS: '1', FORESIGHT_ATTRIBUTION: 'off', FORESIGHT_TIMEOUT_SEC: '300' });
    await runPipeline({ dataRoot: join(root, 'data'), repo: { name: 'demo/gotext', clone }, config, log: silentLogger });
    test = await emittedRows(hf(), 'test');
    verified = await emittedRows(hf(), 'verified');
    funnel = await emittedRows(hf(), 'funnel');
  }, 1_200_000);
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  const list = (v: unknown): unknown[] => JSON.parse(String(v)) as unknown[];

  it('the verify loop rejects go1.21 at its check (the test file does not load) and chooses go1.22', async () => {
    const file = ChoiceFileSchema.parse(JSON.parse(await readFile(join(root, 'data', 'demo__gotext', 'env-recipes.json'), 'utf8')));
    const eras = Object.values(file.eras);
    expect(eras.length).toBeGreaterThan(0);
    for (const era of eras) {
      expect(era.tried.slice(0, 2)).toMatchObject([
        { label: 'go1.21', outcome: 'rejected', stage: 'report', reason: expect.stringMatching(/unusable report: text\/text_test\.go/) },
        { label: 'go1.22', outcome: 'chosen' },
      ]);
      expect(era.chosen).toBe('go1.22');
    }
  });

  it('#1 -> #3 is a `test` row with the go ids of the new tests, subtests folded into their test', () => {
    const row = test.find((r) => r.instance_id === 'gotext__1-3');
    expect(row, JSON.stringify(funnel.map((r) => [r.instance_id, r.exclusion_reason, r.exclusion_detail]))).toBeDefined();
    expect(list(row!.FAIL_TO_PASS)).toEqual(['text/text_test.go::TestSlugifyBasic']);
    expect(list(row!.PASS_TO_PASS)).toEqual(['text/text_test.go::TestNormalizeSpace']);
    expect(list(row!.ANTICIPATION_FAIL_TO_PASS)).toEqual(['text/text_test.go::TestSlugifyCollapsesWhitespace']);
    expect(row!.runner).toBe('go');
    expect(row!.fully_gradeable).toBe(true);
  });

  const LIMITS: GradeLimits = { ...gradeLimits(defaultConfig().validate), timeoutSec: 120 };
  const evalOf = (who: string, patch: string | 'gold') => evalOne({ hf: hf(), id: 'gotext__1-3', who, patch, scratch: root, docker, limits: LIMITS });

  it('the gold patch scores X = 100 %, Y = 0 % in the eval image', async () => {
    const i = await evalOf('gold', 'gold');
    expect([i.X, i.Y, i.tampered_files]).toEqual([1, 0, []]);
  }, 300_000);

  const WRONG = 'package text\n\n// Slugify is not done.\nfunc Slugify(s string) string { return "" }\n';
  const ATTACKS: Attack[] = [
    {
      name: 'go-testmain-exit',
      what: 'a new _test.go whose TestMain exits 0 before any test',
      changes: { 'text/slug.go': WRONG, 'text/zz_main_test.go': 'package text\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n' },
    },
    {
      name: 'go-graded-test-rewritten',
      what: "the graded test file rewritten so Slugify's tests pass whatever it returns",
      changes: { 'text/slug.go': WRONG, 'text/text_test.go': 'package text\n\nimport "testing"\n\nfunc TestNormalizeSpace(t *testing.T) {}\n\nfunc TestSlugifyBasic(t *testing.T) {}\n' },
    },
    {
      name: 'go-init-exit',
      what: 'code under test that exits 0 when the test binary starts',
      changes: { 'text/slug.go': WRONG.replace('// Slugify', 'import "os"\n\nfunc init() { os.Exit(0) }\n\n// Slugify') },
    },
  ];
  for (const a of ATTACKS) {
    it(`red team ${a.name}: ${a.what} scores X = 0`, async () => {
      const row = test.find((r) => r.instance_id === 'gotext__1-3')!;
      const i = await evalOf(a.name, await attackPatch(clone, String(row.base_commit), a));
      expect([i.X, i.Y], JSON.stringify(i.runs)).toEqual([0, 0]);
      if (a.name === 'go-testmain-exit') expect(i.tampered_files.map((t) => t.path)).toContain('text/zz_main_test.go');
    }, 300_000);
  }

  it('the verified row says go', () => {
    const row = verified.find((r) => r.instance_id === 'gotext__1-3')!;
    expect(row.language).toBe('go');
    expect(String(row.install_cmd)).toContain('go test');
  });
});
