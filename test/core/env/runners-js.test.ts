/**
 * The JavaScript runners (jest, vitest, mocha) for real: their run_state.sh on the host (no Docker) over
 * a git repository built here, the repository's dependencies in the folder FORESIGHT_NODE_MODULES names
 * (jest and mocha installed from the npm registry into a temporary project once, cached under the system
 * temp dir by version; vitest is foresight's own), the report read through a pipe as guarded grading
 * reads it, and parse() on it. Then grading's harness restore (runners/harness.py) on patched work trees,
 * and guarded grading's choice of the runner binary.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readlink, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HARNESS_PY, testDirsOf } from '../../../core/env/container/grade-steps.ts';
import { jestRunner } from '../../../core/env/runners/jest/index.ts';
import { mochaRunner } from '../../../core/env/runners/mocha/index.ts';
import type { ParsedRun, Runner } from '../../../core/env/runners/types.ts';
import { vitestRunner } from '../../../core/env/runners/vitest/index.ts';
import { PROJECT_ROOT } from '../../../core/foundation/version.ts';
import { freshRepos, type GitRepo } from '../../helpers/git-repo.ts';

const JEST = '29.7.0';
const MOCHA = '10.8.2';
const DATE = '2024-01-01T00:00:00Z';

function exec(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** jest and mocha at pinned versions, installed once per version pair under the temp dir; the node_modules folder. */
async function installedJestMocha(): Promise<string> {
  return installed(`jest${JEST}-mocha${MOCHA}`, [`jest@${JEST}`, `mocha@${MOCHA}`]);
}

/** npm packages installed once in a temp project named by them; its node_modules. */
async function installed(name: string, packages: string[]): Promise<string> {
  const dir = join(tmpdir(), `foresight-js-runners-${name}`);
  const nodeModules = join(dir, 'node_modules');
  if (packages.every((p) => existsSync(join(nodeModules, '.bin', p.split('@')[0]!)))) return nodeModules;
  // Installed beside, then moved in whole: an install cut short never looks usable.
  const partial = `${dir}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  await writeFile(join(partial, 'package.json'), JSON.stringify({ name: 'js-runners', version: '1.0.0', private: true }));
  const res = await exec('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', ...packages], partial);
  if (res.code !== 0) throw new Error(`npm install ${packages.join(' ')} failed: ${res.stderr.slice(-2000)}`);
  await rm(dir, { recursive: true, force: true });
  await rename(partial, dir);
  return nodeModules;
}

interface StateRun {
  exitCode: number | null;
  output: string;
  report: string;
  parsed: ParsedRun;
}

const scratch = await mkdtemp(join(tmpdir(), 'foresight-js-runners-'));
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});
let counter = 0;

/** Checkout's in-place mode links /tmp/testbed to the work tree when nothing is there: not left behind on the host. */
async function dropTestbedLink(target: string): Promise<void> {
  const st = await lstat('/tmp/testbed').catch(() => null);
  if (st?.isSymbolicLink() && (await readlink('/tmp/testbed')) === target) await unlink('/tmp/testbed');
}

/**
 * One state: `run_state.sh <checkout> - <report> <files...>` with the report through fd 3 (grading's pipe),
 * or to a file when `reportFile` (validate's way); `checkout` "." runs in place in `testbed`.
 */
async function runState(
  runner: Runner,
  o: { src: GitRepo; checkout: string; files: string[]; nodeModules: string; testbed?: string; reportFile?: boolean; env?: Record<string, string> },
): Promise<StateRun> {
  const n = ++counter;
  const testbed = o.testbed ?? join(scratch, `testbed-${n}`);
  const home = join(scratch, `home-${n}`);
  await mkdir(home, { recursive: true });
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8', FORESIGHT_SRC: join(o.src.dir, '.git'), FORESIGHT_TESTBED: testbed, FORESIGHT_NODE_MODULES: o.nodeModules, ...o.env };
  const script = join(runner.dir!, runner.script);
  // A real pipe, as docker exec's output is (a socket, what Node gives a child, cannot be opened as /dev/fd/3).
  const fifo = join(scratch, `pipe-${n}`);
  const reportPath = join(scratch, `report-${n}.json`);
  let piped: Promise<string> = Promise.resolve('');
  let args: string[];
  if (o.reportFile) {
    args = [script, o.checkout, '-', reportPath, ...o.files];
  } else {
    if ((await exec('mkfifo', [fifo], scratch)).code !== 0) throw new Error('mkfifo failed');
    piped = readFile(fifo, 'utf8');
    args = ['-c', 'exec 3>"$0" || exit 1; exec sh "$@"', fifo, script, o.checkout, '-', '/dev/fd/3', ...o.files];
  }
  const child = spawn('sh', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (b: Buffer) => (output += b.toString()));
  child.stderr.on('data', (b: Buffer) => (output += b.toString()));
  const exitCode = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  if (o.checkout === '.') await dropTestbedLink(testbed);
  const report = o.reportFile ? await readFile(reportPath, 'utf8') : await piped;
  return { exitCode, output, report, parsed: runner.parse({ junitXml: report, output, testFiles: o.files }) };
}

const newRepo = freshRepos();
let jestMochaModules = '';
const vitestModules = join(PROJECT_ROOT, 'node_modules');

beforeAll(async () => {
  jestMochaModules = await installedJestMocha();
}, 600_000);

type Kind = 'jest' | 'vitest' | 'mocha';

/** The same suite in each runner's dialect: a pass, a fail, a skip, a todo/pending, duplicate titles, nesting. */
const SUITES: Record<Kind, { ext: string; head: string; eq: (a: string, b: string) => string; todo: string }> = {
  jest: { ext: 'js', head: "const { parse } = require('./parse.cjs');\n", eq: (a, b) => `expect(${a}).toBe(${b})`, todo: "it.todo('later');" },
  vitest: { ext: 'ts', head: "import { describe, expect, it, test } from 'vitest';\nimport { parse } from './parse.ts';\n", eq: (a, b) => `expect(${a}).toBe(${b})`, todo: "it.todo('later');" },
  mocha: { ext: 'js', head: "const assert = require('assert');\nconst { parse } = require('./parse.cjs');\nconst test = it;\n", eq: (a, b) => `assert.strictEqual(${a}, ${b})`, todo: "it('later');" },
};

/** The module under test: counts the first word only (wrong), or every word. */
function parseModule(kind: Kind, fixed: boolean): Record<string, string> {
  const body = fixed ? "(s === '' ? 0 : s.split(' ').length)" : "(s === '' ? 0 : 1)";
  return kind === 'vitest' ? { 'src/parse.ts': `export const parse = (s: string): number => ${body};\n` } : { 'src/parse.cjs': `exports.parse = (s) => ${body};\n` };
}

function parseSuite(kind: Kind): string {
  const s = SUITES[kind];
  return `${s.head}describe('parse', () => {
  it('handles empty input', () => { ${s.eq("parse('')", '0')}; });
  it('counts words', () => { ${s.eq("parse('a b')", '2')}; });
  it.skip('is skipped', () => {});
  ${s.todo}
  it('dup', () => {});
  it('dup', () => {});
  describe('nested', () => {
    it('dup', () => {});
  });
});
describe('other', () => {
  it('dup', () => {});
});
test('top level', () => {});
`;
}

/** A repository whose parse() is wrong for two words ("counts words" fails), with a broken test file beside the good one. */
async function suiteRepo(kind: Kind): Promise<{ repo: GitRepo; sha: string; good: string; broken: string }> {
  const repo = await newRepo();
  const ext = SUITES[kind].ext;
  const good = `src/parse.test.${ext}`;
  const broken = `src/broken.test.${ext}`;
  const sha = await repo.commit({
    files: {
      'package.json': JSON.stringify({ name: `${kind}-demo`, version: '1.0.0', private: true }, null, 2),
      ...parseModule(kind, false),
      [good]: parseSuite(kind),
      [broken]: `${SUITES[kind].head}describe('broken', () => { it('never', () => { ) });\n`,
    },
    message: 'demo',
    date: DATE,
  });
  return { repo, sha, good, broken };
}

function expectedTests(file: string): Record<string, string> {
  return {
    [`${file}::parse > handles empty input`]: 'pass',
    [`${file}::parse > counts words`]: 'fail',
    [`${file}::parse > is skipped`]: 'skip',
    [`${file}::parse > later`]: 'skip',
    [`${file}::parse > dup`]: 'pass',
    [`${file}::parse > dup #2`]: 'pass',
    [`${file}::parse > nested > dup`]: 'pass',
    [`${file}::other > dup`]: 'pass',
    [`${file}::top level`]: 'pass',
  };
}

describe.each([
  { runner: jestRunner, kind: 'jest' as const, kindOfFailure: 'Error' },
  { runner: vitestRunner, kind: 'vitest' as const, kindOfFailure: 'AssertionError' },
  { runner: mochaRunner, kind: 'mocha' as const, kindOfFailure: 'AssertionError' },
])('$kind runner, run for real (run_state.sh on the host, the report through a pipe)', ({ runner, kind, kindOfFailure }) => {
  const modules = (): string => (kind === 'vitest' ? vitestModules : jestMochaModules);

  it('ids are file::describe path > title; a fail, a skip, todo/pending as skip, duplicate titles kept apart; the broken file is a collection error and the other file stays', async () => {
    const { repo, sha, good, broken } = await suiteRepo(kind);
    const run = await runState(runner, { src: repo, checkout: sha, files: [good, broken, 'src/absent.test.js'], nodeModules: modules() });
    expect(run.exitCode, run.output).toBe(1);
    expect(runner.exitCodes.ok).toContain(run.exitCode);
    expect(run.parsed.tests).toEqual(expectedTests(good));
    expect(run.parsed.collectionErrors).toEqual([broken]);
    expect(run.parsed.failureKinds).toEqual({ [`${good}::parse > counts words`]: kindOfFailure });
    expect(run.parsed.problem).toBeUndefined();
    // The same state again gives the same ids (nothing random or timed in them).
    const again = await runState(runner, { src: repo, checkout: sha, files: [good, broken], nodeModules: modules() });
    expect(Object.keys(again.parsed.tests)).toEqual(Object.keys(run.parsed.tests));
  });

  it.runIf(kind === 'vitest')('vitest older than 1.3 (it rejects --no-cache) runs: its cache goes to a node_modules of links', async () => {
    const old = await installed('vitest1.2.2', ['vitest@1.2.2']);
    const { repo, good } = await suiteRepo(kind);
    const fixed = await repo.commit({ files: parseModule(kind, true), message: 'fix', date: DATE });
    const run = await runState(runner, { src: repo, checkout: fixed, files: [good], nodeModules: old });
    expect(run.exitCode, run.output).toBe(0);
    expect(run.parsed.tests[`${good}::parse > counts words`]).toBe('pass');
  }, 300_000);

  it('the fixed code passes every test; the report can be a file too', async () => {
    const { repo, good } = await suiteRepo(kind);
    const fixed = await repo.commit({ files: parseModule(kind, true), message: 'fix', date: DATE });
    const run = await runState(runner, { src: repo, checkout: fixed, files: [good], nodeModules: modules(), reportFile: true });
    expect(run.exitCode, run.output).toBe(0);
    expect(run.parsed.tests[`${good}::parse > counts words`]).toBe('pass');
    expect(Object.values(run.parsed.tests).filter((s) => s === 'fail')).toEqual([]);
    expect(run.parsed.collectionErrors).toEqual([]);
  });

  it('no requested test file exists at the state: an empty valid report, exit 0, nothing collected', async () => {
    const { repo, sha } = await suiteRepo(kind);
    for (const reportFile of [false, true]) {
      const run = await runState(runner, { src: repo, checkout: sha, files: ['src/later.test.js'], nodeModules: modules(), reportFile });
      expect(run.exitCode, run.output).toBe(0);
      expect(run.output).toContain('none of the test files exists at this state');
      expect(run.parsed).toEqual({ tests: {}, collectionErrors: [] });
    }
  });
});

describe('mocha: one file that cannot be loaded ends the joint run, so each file runs on its own', () => {
  it('two good files and a broken one: both good files keep their results, the broken one alone is a collection error', async () => {
    const { repo, good, broken } = await suiteRepo('mocha');
    const sha = await repo.commit({ files: { 'src/more.test.js': "describe('more', () => { it('works', () => {}); });\n" }, message: 'more', date: DATE });
    const run = await runState(mochaRunner, { src: repo, checkout: sha, files: [good, broken, 'src/more.test.js'], nodeModules: jestMochaModules });
    expect(run.exitCode, run.output).toBe(1);
    expect(run.output).toContain('each runs on its own');
    expect(run.parsed.collectionErrors).toEqual([broken]);
    expect(run.parsed.tests).toEqual({ ...expectedTests(good), 'src/more.test.js::more > works': 'pass' });
    // One line of JSON per mocha process, and one load error.
    expect(run.report.trim().split('\n').map((l) => Object.keys(JSON.parse(l) as object)[0])).toEqual(['stats', 'loadError', 'stats']);
  });

  it('a failing before hook is an error under its own id; the tests it kept from running are absent', async () => {
    const repo = await newRepo();
    const sha = await repo.commit({
      files: {
        'package.json': '{"name":"hooks","version":"1.0.0"}\n',
        'test/hook.test.js': "describe('db', () => {\n  before(() => { throw new TypeError('no db'); });\n  it('reads', () => {});\n});\nit('free', () => {});\n",
      },
      message: 'hooks',
      date: DATE,
    });
    const run = await runState(mochaRunner, { src: repo, checkout: sha, files: ['test/hook.test.js'], nodeModules: jestMochaModules });
    expect(run.exitCode, run.output).toBe(1);
    expect(run.parsed.tests).toEqual({ 'test/hook.test.js::free': 'pass', 'test/hook.test.js::db > "before all" hook for "reads"': 'error' });
  });
});


/** harness.py as grading runs it: the system Python, isolated, in the patched work tree. */
async function restoreHarness(dir: string, runner: Runner, protect: string[]): Promise<{ changes: Array<{ path: string; action: string }> }> {
  const h = runner.harness;
  const spec = { gold: 'HEAD', whole: h.whole, sections: h.sections, newFiles: h.newFiles, plugins: h.plugins, configModules: h.configModules, testDirs: testDirsOf(protect), protect };
  const res = await exec('python3', ['-I', '-c', HARNESS_PY, JSON.stringify(spec)], dir);
  if (res.code !== 0) throw new Error(`harness.py failed: ${res.stderr}`);
  return JSON.parse(res.stdout) as { changes: Array<{ path: string; action: string }> };
}

describe('harness restore (runners/harness.py) against a patch that games jest', () => {
  it('the config, the "jest" key of package.json and the setup file it names are restored; the other key the patch changed stays; the graded test fails again', async () => {
    const repo = await newRepo();
    const gold = {
      'package.json': `${JSON.stringify({ name: 'calc', version: '1.0.0', description: 'adds', jest: { setupFilesAfterEnv: ['<rootDir>/test/setup.js'] } }, null, 2)}\n`,
      'packages/web/jest.config.js': "module.exports = { testEnvironment: 'node' };\n",
      'test/setup.js': 'global.answer = 42;\n',
      'src/math.js': 'exports.add = (a, b) => a - b;\n',
      'test/math.test.js': "const { add } = require('../src/math');\ntest('adds', () => { expect(add(1, 2)).toBe(3); });\ntest('answer', () => { expect(global.answer).toBe(42); });\n",
    };
    await repo.commit({ files: gold, message: 'base', date: DATE });
    // The agent's patch: no fix, but a setup file that makes every expectation pass, wired in twice.
    const patched = {
      'package.json': `${JSON.stringify({ name: 'calc', version: '1.0.0', description: 'adds numbers', jest: { setupFilesAfterEnv: ['<rootDir>/test/setup.js'], bail: 0 } }, null, 2)}\n`,
      'packages/web/jest.config.js': "module.exports = { testEnvironment: 'node', setupFiles: ['../../test/setup.js'] };\n",
      'test/setup.js': 'global.answer = 42;\nglobal.expect = () => new Proxy({}, { get: () => () => undefined });\n',
    };
    for (const [path, text] of Object.entries(patched)) await writeFile(join(repo.dir, path), text);

    // The attack works on the patched tree: the wrong add() "passes".
    const before = await runState(jestRunner, { src: repo, checkout: '.', testbed: repo.dir, files: ['test/math.test.js'], nodeModules: jestMochaModules });
    expect(before.parsed.tests, before.output).toEqual({ 'test/math.test.js::adds': 'pass', 'test/math.test.js::answer': 'pass' });
    await unlink(join(repo.dir, 'node_modules'));

    const res = await restoreHarness(repo.dir, jestRunner, ['test/math.test.js']);
    expect(res.changes).toEqual([
      { path: 'package.json', action: 'sections' },
      { path: 'packages/web/jest.config.js', action: 'reset' },
      { path: 'test/setup.js', action: 'reset' },
    ]);
    const pkg = JSON.parse(await readFile(join(repo.dir, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(pkg).toEqual({ name: 'calc', version: '1.0.0', description: 'adds numbers', jest: { setupFilesAfterEnv: ['<rootDir>/test/setup.js'] } });
    expect(await readFile(join(repo.dir, 'package.json'), 'utf8')).toMatch(/^\{\n {2}"name": "calc",\n/);
    expect(await readFile(join(repo.dir, 'packages/web/jest.config.js'), 'utf8')).toBe(gold['packages/web/jest.config.js']);
    expect(await readFile(join(repo.dir, 'test/setup.js'), 'utf8')).toBe(gold['test/setup.js']);

    const after = await runState(jestRunner, { src: repo, checkout: '.', testbed: repo.dir, files: ['test/math.test.js'], nodeModules: jestMochaModules });
    expect(after.parsed.tests, after.output).toEqual({ 'test/math.test.js::adds': 'fail', 'test/math.test.js::answer': 'pass' });
  });

  it('guarded grading runs the jest of FORESIGHT_NODE_MODULES, not one a node_modules in the work tree holds', async () => {
    const repo = await newRepo();
    await repo.commit({
      files: {
        'package.json': '{"name":"calc","version":"1.0.0"}\n',
        'src/math.js': 'exports.add = (a, b) => a - b;\n',
        'test/math.test.js': "const { add } = require('../src/math');\ntest('adds', () => { expect(add(1, 2)).toBe(3); });\n",
      },
      message: 'base',
      date: DATE,
    });
    // A stand-in jest that writes a passing report without running anything.
    const forged = JSON.stringify({ testResults: [{ name: `${repo.dir}/test/math.test.js`, status: 'passed', assertionResults: [{ ancestorTitles: [], title: 'adds', status: 'passed' }] }] });
    await mkdir(join(repo.dir, 'node_modules/.bin'), { recursive: true });
    await writeFile(join(repo.dir, 'node_modules/.bin/jest'), `#!/bin/sh\nfor a do case $a in --outputFile=*) out=\${a#--outputFile=} ;; esac; done\nprintf '%s' '${forged}' >"$out"\n`, { mode: 0o755 });
    const files = ['test/math.test.js'];
    const open = await runState(jestRunner, { src: repo, checkout: '.', testbed: repo.dir, files, nodeModules: jestMochaModules });
    expect(open.parsed.tests, open.output).toEqual({ 'test/math.test.js::adds': 'pass' });
    const guarded = await runState(jestRunner, { src: repo, checkout: '.', testbed: repo.dir, files, nodeModules: jestMochaModules, env: { FORESIGHT_GUARD: '1' } });
    expect(guarded.parsed.tests, guarded.output).toEqual({ 'test/math.test.js::adds': 'fail' });
  });

  it("each runner restores the modules its own configuration names (mocha's require, vitest's setupFiles), and a node_modules the patch adds is removed", async () => {
    const repo = await newRepo();
    await repo.commit({
      files: {
        'package.json': '{\n  "name": "m",\n  "mocha": { "file": ["test/first.js"] }\n}\n',
        '.mocharc.yml': 'require:\n  - test/helpers/setup.js\n',
        'vitest.config.ts': "export default { test: { setupFiles: ['./test/vsetup.ts'] } };\n",
        'test/helpers/setup.js': '// gold\n',
        'test/first.js': '// gold\n',
        'test/vsetup.ts': '// gold\n',
        'src/app.js': '// gold\n',
      },
      message: 'base',
      date: DATE,
    });
    const touch = async (): Promise<void> => {
      for (const f of ['test/helpers/setup.js', 'test/first.js', 'test/vsetup.ts', 'src/app.js']) await writeFile(join(repo.dir, f), '// patched\n');
      await mkdir(join(repo.dir, 'node_modules/.bin'), { recursive: true });
      await writeFile(join(repo.dir, 'node_modules/.bin/mocha'), '#!/bin/sh\nexit 0\n');
    };
    const read = (f: string): Promise<string> => readFile(join(repo.dir, f), 'utf8');

    await touch();
    const mocha = await restoreHarness(repo.dir, mochaRunner, []);
    expect(mocha.changes).toEqual([
      { path: 'node_modules/.bin/mocha', action: 'removed' },
      { path: 'test/first.js', action: 'reset' },
      { path: 'test/helpers/setup.js', action: 'reset' },
    ]);
    expect([await read('test/vsetup.ts'), await read('src/app.js')]).toEqual(['// patched\n', '// patched\n']);

    await touch();
    const vitest = await restoreHarness(repo.dir, vitestRunner, []);
    expect(vitest.changes).toEqual([
      { path: 'node_modules/.bin/mocha', action: 'removed' },
      { path: 'test/vsetup.ts', action: 'reset' },
    ]);
    expect(await read('test/helpers/setup.js')).toBe('// patched\n');
    expect(await read('src/app.js')).toBe('// patched\n');
  });
});
