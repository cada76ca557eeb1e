/**
 * The go runner (`go test -json`): its report parser on the cases real go cannot be made to show on
 * demand, then real Go end to end. Generated Go modules (real git, no third-party module) whose env
 * image is built by the env tier from the recipe `{runner: "go", systemPackages: ["golang-go"]}`
 * (Debian bookworm's Go 1.19): run in a chain container as validate runs runners (states checked out
 * and overlaid by run_state.sh, reports read by the runner's parser), and graded in an eval image with
 * the runner's harness (guarded, the report through the grader's pipe).
 * Skipped only when the daemon is unreachable AND CI is unset; in CI a missing daemon fails loudly.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import {
  applyCachePolicy,
  connectDocker,
  ensureEvalImage,
  envImageFor,
  gradeInstance,
  isDockerReachable,
  noEvidenceUnderPatch,
  openChainEnv,
  type ChainEnv,
  type GradeResult,
  type GradingBundle,
} from '../../../core/env/index.ts';
import { execRunner } from '../../../core/env/container/run-report.ts';
import { runProblem } from '../../../core/env/runners/evidence.ts';
import { goRunner, isGoTestFile } from '../../../core/env/runners/go/index.ts';
import { parseGoReport } from '../../../core/env/runners/go/parse-go.ts';
import { getRunner } from '../../../core/env/runners/registry.ts';
import { RecipeSchema } from '../../../core/env/recipes/schema.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) console.warn('[runners-go.test] SKIPPED: Docker is not reachable and CI is unset (start dockerd to run these tests)');

const DATE = '2024-01-01T00:00:00Z';

/** A report as run_state.sh writes it: the header, the lines given, the end line. */
const report = (...lines: object[]): string =>
  [{ Action: 'foresight-go', Version: 1 }, ...lines, { Action: 'foresight-end', Code: 0 }].map((l) => JSON.stringify(l)).join('\n') + '\n';
const ev = (Action: string, Test?: string): object => ({ Time: '2024-01-01T00:00:00Z', Action, Package: 'example.com/m/p', ...(Test ? { Test } : {}) });
const dir = (Dir: string, Files: Record<string, string[]>): object => ({ Action: 'foresight-dir', Dir, Files });
const exit = (Dir: string, Code: number): object => ({ Action: 'foresight-exit', Dir, Code });

describe('go runner: declaration and parser', () => {
  it('is registered, runs only the *_test.go files go builds, and restores test files, fixtures and vendored modules', () => {
    expect(getRunner('go')).toBe(goRunner);
    expect(['a_test.go', 'pkg/x/b_test.go'].every(isGoTestFile)).toBe(true);
    for (const f of ['a.go', 'test_a.py', 'pkg/testdata/x_test.go', 'vendor/m/x_test.go', 'pkg/_old/x_test.go', 'pkg/.hidden_test.go', '_x_test.go']) {
      expect(isGoTestFile(f), f).toBe(false);
    }
    expect(goRunner.harness).toMatchObject({ whole: ['**/*_test.go', '**/testdata/**', 'vendor/**'], newFiles: ['**/*_test.go'], reportPipe: true });
    expect(goRunner.selectArg!('pkg/a_test.go::TestAdd', ['pkg/a_test.go'])).toBe('TestAdd');
    expect(goRunner.selectArg!('pkg/a_test.go::TestAdd', ['pkg/b_test.go'])).toBeNull();
    expect(goRunner.selectArg!('pkg/a_test.go::TestAdd/sub', ['pkg/a_test.go'])).toBeNull();
  });

  it('a pass printed by a test that then exits is no pass: it is the failed binary\'s last word', () => {
    // Go before 1.20 reads `--- PASS: TestA` from the test's own output (test2json) as TestA's pass.
    const r = report(dir('p', { 'p/a_test.go': ['TestA', 'TestB'] }), ev('run', 'TestA'), ev('pass', 'TestA'), ev('fail'), exit('p', 1));
    expect(parseGoReport(r, ['p/a_test.go'])).toEqual({ tests: { 'p/a_test.go::TestA': 'fail', 'p/a_test.go::TestB': 'fail' }, collectionErrors: [] });
    // A pass before the test during which the binary died stands (the chain container case below: a panic).
    const died = report(dir('p', { 'p/a_test.go': ['TestA', 'TestB'] }), ev('run', 'TestA'), ev('pass', 'TestA'), ev('run', 'TestB'), ev('fail'), exit('p', 1));
    expect(parseGoReport(died, ['p/a_test.go']).tests).toEqual({ 'p/a_test.go::TestA': 'pass', 'p/a_test.go::TestB': 'fail' });
    // A printed pass after the real fail does not undo it; a real failure of another test keeps a real pass.
    const twice = report(dir('p', { 'p/a_test.go': ['TestA', 'TestB'] }), ev('pass', 'TestA'), ev('fail', 'TestB'), ev('pass', 'TestB'), ev('fail'), exit('p', 1));
    expect(parseGoReport(twice, ['p/a_test.go']).tests).toEqual({ 'p/a_test.go::TestA': 'pass', 'p/a_test.go::TestB': 'fail' });
  });

  it('a go command that cannot run (toolchain, go.mod) is a problem, not a file that does not build', () => {
    const stderr = (Output: string): object => ({ Action: 'foresight-stderr', Output });
    const r = report(dir('p', { 'p/a_test.go': ['TestA'] }), stderr('go: go.mod requires go >= 1.22 (running go 1.19; GOTOOLCHAIN=local)'), exit('p', 1));
    const parsed = parseGoReport(r, ['p/a_test.go']);
    expect(parsed).toMatchObject({ tests: {}, collectionErrors: [] });
    expect(parsed.problem).toMatch(/^go test in p: go: go\.mod requires go >= 1\.22/);
    // A positioned error under a `go:` line is the package's own (go 1.15: a module its test imports is missing).
    const own = report(dir('p', { 'p/a_test.go': ['TestA'] }), stderr('go: finding module for package github.com/x/y'), stderr('a_test.go:3:2: cannot find module providing package github.com/x/y'), exit('p', 1));
    expect(parseGoReport(own, ['p/a_test.go'])).toEqual({ tests: {}, collectionErrors: ['p/a_test.go'] });
  });

  it('a report cut short, written to after its end, or not JSON is not taken at its word', () => {
    const cut = [{ Action: 'foresight-go', Version: 1 }, dir('p', { 'p/a_test.go': ['TestA'] }), ev('pass', 'TestA')].map((l) => JSON.stringify(l)).join('\n');
    expect(parseGoReport(cut, ['p/a_test.go']).problem).toMatch(/ends inside the run of p/);
    const after = `${report(dir('p', { 'p/a_test.go': ['TestA'] }), ev('fail', 'TestA'), exit('p', 1))}${JSON.stringify(ev('pass', 'TestA'))}\n`;
    expect(() => parseGoReport(after, ['p/a_test.go'])).toThrow(ForesightError);
    expect(() => parseGoReport(after, ['p/a_test.go'])).toThrow(/line 6: text after the end line/);
    expect(() => parseGoReport(`${report().slice(0, -5)}\n`, [])).toThrow(/not JSON/);
    expect(() => parseGoReport('<?xml version="1.0"?><testsuites/>\n', [])).toThrow(/no foresight-go header/);
    // A directory line cannot name a file that was not requested.
    const extra = report(dir('p', { 'p/a_test.go': ['TestA'], 'p/z_test.go': ['TestZ'] }), ev('pass', 'TestA'), ev('pass', 'TestZ'), ev('pass'), exit('p', 0));
    expect(parseGoReport(extra, ['p/a_test.go']).tests).toEqual({ 'p/a_test.go::TestA': 'pass' });
  });
});

// The module: calc (two test files, subtests, a skip, a failure), strs (a second package), broken (a
// test file that does not compile), exitmain (a TestMain that exits 0 without running the tests),
// panics (a goroutine's panic kills the binary mid-run).
const GO_MOD = 'module example.com/foresight/gomod\n\ngo 1.19\n';
const CALC = 'package calc\n\nfunc Add(a, b int) int { return a + b }\n\n// Clamp keeps v within [lo, hi].\nfunc Clamp(v, lo, hi int) int {\n\tif v < lo {\n\t\treturn lo\n\t}\n\tif v > hi {\n\t\treturn lo\n\t}\n\treturn v\n}\n';
const CALC_FIXED = CALC.replace('\tif v > hi {\n\t\treturn lo\n', '\tif v > hi {\n\t\treturn hi\n');
const ADD_TEST = [
  'package calc',
  '',
  'import (',
  '\t"testing"',
  '\tT "testing"',
  ')',
  '',
  '// A test the scanner must not take for one: it is inside a raw string.',
  'const sample = `',
  'func TestInsideString(t *testing.T) {}',
  '`',
  '',
  '/*',
  'func TestInsideComment(t *testing.T) {}',
  '*/',
  '',
  'func TestAdd(t *testing.T) {',
  '\tif Add(2, 3) != 5 {',
  '\t\tt.Fatal("2+3")',
  '\t}',
  '}',
  '',
  'func TestAddTable(t *testing.T) {',
  '\tfor _, c := range []struct{ name string; a, b, want int }{{"zero", 0, 0, 0}, {"neg", -1, 1, 0}} {',
  '\t\tc := c',
  '\t\tt.Run(c.name, func(t *testing.T) {',
  '\t\t\tif Add(c.a, c.b) != c.want {',
  '\t\t\t\tt.Fatal(c.name)',
  '\t\t\t}',
  '\t\t})',
  '\t}',
  '}',
  '',
  'func TestLater(t *T.T) { t.Skip("not yet") }',
  '',
  'func TestSubFails(t *testing.T) {',
  '\tt.Run("ok", func(t *testing.T) {})',
  '\tt.Run("bad", func(t *testing.T) { t.Fatal("bad case") })',
  '}',
  '',
  'func Testlowercase(t *testing.T) {}',
  '',
  'func helper(t *testing.T) {}',
  '',
].join('\n');
const CLAMP_TEST = 'package calc_test\n\nimport (\n\t"testing"\n\n\t"example.com/foresight/gomod/calc"\n)\n\nfunc TestClampLow(t *testing.T) {\n\tif calc.Clamp(-5, 0, 10) != 0 {\n\t\tt.Fatal("low")\n\t}\n}\n';
const CLAMP_HIGH_TEST = 'package calc_test\n\nimport (\n\t"testing"\n\n\t"example.com/foresight/gomod/calc"\n)\n\nfunc TestClampHigh(t *testing.T) {\n\tif got := calc.Clamp(50, 0, 10); got != 10 {\n\t\tt.Fatalf("Clamp(50, 0, 10) = %d", got)\n\t}\n}\n';
const STRS = 'package strs\n\nimport "strings"\n\nfunc Shout(s string) string { return strings.ToUpper(s) + "!" }\n';
const STRS_TEST = 'package strs\n\nimport "testing"\n\nfunc TestShout(t *testing.T) {\n\tif Shout("hi") != "HI!" {\n\t\tt.Fatal(Shout("hi"))\n\t}\n}\n\nfunc FuzzShout(f *testing.F) {\n\tf.Add("a")\n\tf.Fuzz(func(t *testing.T, s string) { _ = Shout(s) })\n}\n';
const BROKEN = 'package broken\n\nfunc One() int { return 1 }\n';
const BROKEN_TEST = 'package broken\n\nimport "testing"\n\nfunc TestOne(t *testing.T) {\n\tvar n int = "one"\n\t_ = n\n}\n';
const EXIT_TEST = 'package exitmain\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n\nfunc TestNeverRuns(t *testing.T) { t.Fatal("TestMain never runs me") }\n';
const PANIC_TEST = 'package panics\n\nimport (\n\t"testing"\n\t"time"\n)\n\nfunc TestFirst(t *testing.T) {}\n\nfunc TestBoom(t *testing.T) {\n\tgo func() { panic("boom") }()\n\ttime.Sleep(time.Second)\n}\n\nfunc TestAfter(t *testing.T) {}\n';

const ALL = ['calc/add_test.go', 'calc/clamp_test.go', 'strs/strs_test.go', 'broken/broken_test.go', 'exitmain/main_test.go', 'panics/panics_test.go'];

/** The env image of a module: built by the env tier from the recipe, Debian bookworm's Go (golang-go). */
const recipe = RecipeSchema.parse({ runner: 'go', systemPackages: ['golang-go'], install: [], dependencyFiles: ['go.mod'] });
const images = new Set<string>();
let logDir = '';

async function goEnvImage(repo: GitRepo, commit: string): Promise<string> {
  logDir ||= await mkdtemp(path.join(tmpdir(), 'foresight-go-logs-'));
  const t0 = Date.now();
  const built = await envImageFor({ clone: repo.dir, repo: 'test/gomod', commit, recipe, logDir });
  if (!built.ok) throw new Error(`the go env image did not build: ${built.detail}`);
  images.add(built.image);
  console.info(`[runners-go.test] env image ${built.image} ${built.built ? 'built' : 'reused'} in ${Date.now() - t0} ms`);
  return built.image;
}

afterAll(async () => {
  if (images.size) await applyCachePolicy('base', { used: [...images] });
  if (logDir) await rm(logDir, { recursive: true, force: true });
});

describe.skipIf(skip)('go runner in a chain container (real Go, Debian bookworm)', () => {
  let repo: GitRepo;
  let image: string;
  let env: ChainEnv;
  /** A: the module with Clamp's bug; B: the fix and its test (calc/clamp_high_test.go). */
  let A: string, B: string;

  beforeAll(async () => {
    repo = await gitRepo();
    A = await repo.commit({
      files: {
        'go.mod': GO_MOD,
        'calc/calc.go': CALC,
        'calc/add_test.go': ADD_TEST,
        'calc/clamp_test.go': CLAMP_TEST,
        'strs/strs.go': STRS,
        'strs/strs_test.go': STRS_TEST,
        'broken/broken.go': BROKEN,
        'broken/broken_test.go': BROKEN_TEST,
        'exitmain/exitmain.go': 'package exitmain\n',
        'exitmain/main_test.go': EXIT_TEST,
        'panics/panics.go': 'package panics\n',
        'panics/panics_test.go': PANIC_TEST,
      },
      message: 'A',
      date: DATE,
    });
    B = await repo.commit({ files: { 'calc/calc.go': CALC_FIXED, 'calc/clamp_high_test.go': CLAMP_HIGH_TEST }, message: 'B: Clamp returns hi above it', date: DATE });
    image = await goEnvImage(repo, A);
    env = await openChainEnv({ gitDir: repo.dir, image, runner: goRunner, docker });
  });

  afterAll(async () => {
    await env?.close();
    await repo?.remove();
  });

  it('reports top-level tests by file, subtests folded, a build failure as its directory\'s collection error, and no pass from a TestMain that exits 0', async () => {
    const run = await env.runState({ checkout: A, overlay: null, testFiles: ALL });
    expect(run.kind, run.outputTail).toBe('report');
    console.info(`[runners-go.test] one state of ${ALL.length} files in 5 packages, cold cache: ${run.durationMs} ms`);
    // broken/ does not build: go test exits 2 there.
    expect(run.exitCode).toBe(2);
    expect(run.parsed).toEqual({
      tests: {
        'calc/add_test.go::TestAdd': 'pass',
        'calc/add_test.go::TestAddTable': 'pass',
        'calc/add_test.go::TestLater': 'skip',
        'calc/add_test.go::TestSubFails': 'fail',
        'calc/clamp_test.go::TestClampLow': 'pass',
        'strs/strs_test.go::TestShout': 'pass',
        'strs/strs_test.go::FuzzShout': 'pass',
        // The goroutine's panic killed the binary during TestBoom: it and the test after it fail.
        'panics/panics_test.go::TestFirst': 'pass',
        'panics/panics_test.go::TestBoom': 'fail',
        'panics/panics_test.go::TestAfter': 'fail',
        // exitmain/main_test.go::TestNeverRuns did not run: absent, never a pass.
      },
      collectionErrors: ['broken/broken_test.go'],
    });
    expect(runProblem(run, goRunner.exitCodes)).toBeNull();
    // The tests' own output and go's compiler errors are in the run's log.
    expect(run.outputTail).toMatch(/bad case/);
    expect(run.outputTail).toMatch(/broken_test\.go:6:\d+: cannot use "one"/);

    const warm = await env.runState({ checkout: A, overlay: null, testFiles: ALL });
    expect(warm.parsed).toEqual(run.parsed);
    console.info(`[runners-go.test] the same state again, warm cache: ${warm.durationMs} ms`);
  });

  it('a TestMain that exits 0 alone: nothing collected, so no evidence', async () => {
    const run = await env.runState({ checkout: A, overlay: null, testFiles: ['exitmain/main_test.go'] });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.exitCode).toBe(0);
    expect(run.parsed).toEqual({ tests: {}, collectionErrors: [] });
    expect(runProblem(run, goRunner.exitCodes)).toMatchObject({ kind: 'infra', reason: 'no_tests_collected' });
  });

  it('states across commits: B\'s new test fails at A with B\'s tests laid over, passes at B', async () => {
    const files = ['calc/clamp_test.go', 'calc/clamp_high_test.go'];
    const before = await env.runState({ checkout: A, overlay: B, testFiles: files });
    expect(before.kind, before.outputTail).toBe('report');
    expect(before.exitCode).toBe(1);
    expect(before.parsed).toEqual({ tests: { 'calc/clamp_test.go::TestClampLow': 'pass', 'calc/clamp_high_test.go::TestClampHigh': 'fail' }, collectionErrors: [] });
    expect(before.outputTail).toContain('Clamp(50, 0, 10) = 0');
    const after = await env.runState({ checkout: B, overlay: null, testFiles: files });
    expect(after.exitCode).toBe(0);
    expect(after.parsed).toEqual({ tests: { 'calc/clamp_test.go::TestClampLow': 'pass', 'calc/clamp_high_test.go::TestClampHigh': 'pass' }, collectionErrors: [] });
  });

  it('no requested file exists: an empty report, exit 0', async () => {
    const run = await env.runState({ checkout: A, overlay: null, testFiles: ['calc/clamp_high_test.go', 'nowhere/x_test.go'] });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.exitCode).toBe(0);
    expect(run.parsed).toEqual({ tests: {}, collectionErrors: [] });
    expect(run.outputTail).toMatch(/none of the test files exists at this state: 0 tests/);
  });

  it('a selection runs exactly the selected tests', async () => {
    const ids = ['calc/add_test.go::TestAdd', 'strs/strs_test.go::TestShout'];
    const select = ids.map((id) => ({ file: id.split('::')[0]!, arg: goRunner.selectArg!(id, ALL) }));
    const run = await env.runState({ checkout: A, overlay: null, testFiles: ALL, select });
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.parsed).toEqual({ tests: { 'calc/add_test.go::TestAdd': 'pass', 'strs/strs_test.go::TestShout': 'pass' }, collectionErrors: [] });
  });

  it('through the grader\'s pipe, guarded: the same report, read from the pipe', async () => {
    const container = docker.getContainer(env.containerId);
    const run = await execRunner(
      container,
      { runner: goRunner, checkout: A, overlay: '-', testFiles: ['calc/add_test.go', 'broken/broken_test.go'], env: ['FORESIGHT_GUARD=1'], timeoutSec: 120, reportPipe: true },
      { what: 'go runner through the pipe', onDeadline: () => container.kill(), alive: () => true },
    );
    expect(run.kind, run.outputTail).toBe('report');
    expect(run.parsed).toEqual({
      tests: { 'calc/add_test.go::TestAdd': 'pass', 'calc/add_test.go::TestAddTable': 'pass', 'calc/add_test.go::TestLater': 'skip', 'calc/add_test.go::TestSubFails': 'fail' },
      collectionErrors: ['broken/broken_test.go'],
    });
    // The log, not the report, has the tests' output.
    expect(run.outputTail).toMatch(/--- FAIL: TestSubFails/);
  });
});

// Grading: BASE (Add) → PR1 (Clamp and its test: FAIL_TO_PASS) → PR2 (swapped bounds: ANTICIPATION).
const CLAMP_PR1 = 'package calc\n\nfunc Clamp(v, lo, hi int) int {\n\tif v < lo {\n\t\treturn lo\n\t}\n\tif v > hi {\n\t\treturn hi\n\t}\n\treturn v\n}\n';
const CLAMP_PR2 = CLAMP_PR1.replace('{\n\tif v < lo', '{\n\tif lo > hi {\n\t\tlo, hi = hi, lo\n\t}\n\tif v < lo');
const G_ADD_TEST = 'package calc\n\nimport "testing"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal("2+3")\n\t}\n}\n';
const G_CLAMP_TEST = 'package calc\n\nimport "testing"\n\nfunc TestClamp(t *testing.T) {\n\tfor _, v := range []int{-1, 5} {\n\t\tif got := Clamp(v, 0, 3); got < 0 || got > 3 {\n\t\t\tt.Fatalf("Clamp(%d, 0, 3) = %d", v, got)\n\t\t}\n\t}\n}\n';
const G_EDGE_TEST = 'package calc\n\nimport "testing"\n\nfunc TestSwappedBounds(t *testing.T) {\n\tif Clamp(-5, 3, 0) != 0 {\n\t\tt.Fatal("swapped")\n\t}\n}\n';
const F2P = ['calc/clamp_test.go::TestClamp'];
const P2P = ['calc/add_test.go::TestAdd'];
const ANTI = ['calc/edge_test.go::TestSwappedBounds'];
/** A Clamp that does not clamp: what an agent that games the tests submits. */
const NO_CLAMP = 'package calc\n\nfunc Clamp(v, lo, hi int) int { return v }\n';

function graded(r: GradeResult): Extract<GradeResult, { kind: 'graded' }> {
  if (r.kind !== 'graded') throw new Error(`expected a graded result, got ${r.kind}: ${r.detail}`);
  return r;
}

describe.skipIf(skip)('go runner in grading (eval image, guarded): a TestMain or init that exits 0 scores nothing', () => {
  let repo: GitRepo;
  let evalImage = '';
  let BASE: string;
  let gold: string;
  let bundle: GradingBundle;
  const grade = (patch: string): Promise<GradeResult> =>
    gradeInstance({ docker, image: evalImage, runner: goRunner, patch, goldPatch: gold, bundle, f2p: F2P, p2p: P2P, anti: ANTI, limits: { timeoutSec: 120 } });
  /** The diff of a commit on a branch off BASE that writes `files`. */
  const agentPatch = async (name: string, files: Record<string, string>): Promise<string> => {
    await repo.git(['checkout', '-q', '-b', name, BASE]);
    const agent = await repo.commit({ files, message: name, date: DATE });
    await repo.git(['checkout', '-q', 'main']);
    return repo.git(['diff', BASE, agent]);
  };

  beforeAll(async () => {
    repo = await gitRepo();
    BASE = await repo.commit({ files: { 'go.mod': GO_MOD, 'calc/calc.go': 'package calc\n\nfunc Add(a, b int) int { return a + b }\n', 'calc/add_test.go': G_ADD_TEST }, message: 'base', date: DATE });
    const PR1 = await repo.commit({ files: { 'calc/clamp.go': CLAMP_PR1, 'calc/clamp_test.go': G_CLAMP_TEST }, message: 'PR1: Clamp', date: DATE });
    const PR2 = await repo.commit({ files: { 'calc/clamp.go': CLAMP_PR2, 'calc/edge_test.go': G_EDGE_TEST }, message: 'PR2: swapped bounds', date: DATE });
    gold = await repo.git(['diff', BASE, PR1, '--', 'calc/clamp.go']);
    const show = (rev: string, file: string): Promise<string> => repo.git(['show', `${rev}:${file}`]);
    bundle = {
      version: 1,
      x: { files: [{ path: 'calc/add_test.go', encoding: 'utf8', content: await show(PR1, 'calc/add_test.go') }, { path: 'calc/clamp_test.go', encoding: 'utf8', content: await show(PR1, 'calc/clamp_test.go') }], run: ['calc/add_test.go', 'calc/clamp_test.go'] },
      y: { files: [{ path: 'calc/edge_test.go', encoding: 'utf8', content: await show(PR2, 'calc/edge_test.go') }], run: ['calc/edge_test.go'] },
    };
    const envImage = await goEnvImage(repo, BASE);
    const ev = await ensureEvalImage({ docker, clone: repo.dir, envImage, baseCommit: BASE, runner: goRunner, logDir });
    if (ev.kind !== 'ready') throw new Error(`eval image build failed:\n${ev.detail}`);
    evalImage = ev.image;
  }, 600_000);

  afterAll(async () => {
    if (evalImage) await docker.getImage(evalImage).remove().catch(() => undefined);
    await repo?.remove();
  });

  it('the gold patch: X = 1, Y = 0', async () => {
    const r = graded(await grade(gold));
    expect(r.x, r.runs.x?.outputTail).toEqual({ kind: 'scored', value: 1, passed: 1, total: 1 });
    expect(r.y).toEqual({ kind: 'scored', value: 0, passed: 0, total: 1 });
    expect(r.p2pRegressions).toEqual([]);
    expect(r.anti).toEqual({ [ANTI[0]!]: 'fail' });
    expect(r.tampered).toEqual([]);
  }, 120_000);

  it('a fix in a new source file beside the tests is graded as it is, not removed as a new file in a test directory', async () => {
    const r = graded(await grade(await agentPatch('newfile', { 'calc/bounds.go': CLAMP_PR1 })));
    expect(r.tampered).toEqual([]);
    expect(r.x, r.runs.x?.outputTail).toEqual({ kind: 'scored', value: 1, passed: 1, total: 1 });
  }, 120_000);

  it('a TestMain the patch adds (exit 0, no test run) is removed before the tests run: the broken Clamp fails', async () => {
    const patch = await agentPatch('testmain', {
      'calc/clamp.go': NO_CLAMP,
      'calc/zz_main_test.go': 'package calc\n\nimport (\n\t"os"\n\t"testing"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n',
    });
    const r = graded(await grade(patch));
    expect(r.tampered).toEqual([{ path: 'calc/zz_main_test.go', action: 'removed' }]);
    expect(r.f2p).toEqual({ [F2P[0]!]: 'fail' });
    expect(r.x).toEqual({ kind: 'scored', value: 0, passed: 0, total: 1 });
  }, 120_000);

  it('code that exits 0 as the test binary starts reports no test: no evidence under the patch, scored 0 against the gold run', async () => {
    const patch = await agentPatch('initexit', {
      'calc/clamp.go': `${NO_CLAMP}\nfunc init() {\n\tif strings.HasSuffix(os.Args[0], ".test") {\n\t\tos.Exit(0)\n\t}\n}\n`.replace('package calc\n', 'package calc\n\nimport (\n\t"os"\n\t"strings"\n)\n'),
    });
    const r = graded(await grade(patch));
    expect(r.f2p).toEqual({ [F2P[0]!]: 'missing' });
    expect(r.runs.x?.tests).toEqual({});
    expect(r.x).toMatchObject({ kind: 'infra', reason: 'no_tests_collected' });
    // foresight eval's gold run had evidence: the patch's silence scores 0, never infra.
    expect(noEvidenceUnderPatch(r.x, F2P.length, true)).toMatchObject({ kind: 'scored', value: 0, reason: 'no_evidence_under_patch' });
  }, 120_000);
});
