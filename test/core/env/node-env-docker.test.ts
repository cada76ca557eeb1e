/**
 * A Node env image, with real Docker and the npm registry: built for a generated repository and run as the
 * test runs are (uid 65534, no network), chosen by the verify loop after its first candidate fails.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { absoluteGitDir } from '../../../core/foundation/git.ts';
import { silentLogger } from '../../../core/foundation/log.ts';
import { clearSecrets } from '../../../core/foundation/secrets.ts';
import { CHOICE_FILE, connectDocker, EnvImages, ensureBaseImage, envImageKey, eraEnvironment, isDockerReachable, REPO_LABEL, type ChoiceFile } from '../../../core/env/index.ts';
import { runLockedDown } from '../../helpers/locked-down.ts';
import { freshRepos } from '../../helpers/git-repo.ts';

const newRepo = freshRepos();
const DATE = '2024-03-01T00:00:00Z';

const docker = connectDocker();
const reachable = await isDockerReachable(docker);
const skip = !reachable && !process.env['CI'];
if (skip) console.warn('[node-env-docker.test] SKIPPED: Docker is not reachable and CI is unset');

const NONCE = randomBytes(6).toString('hex');
const TOKEN = `foresight-test-npm-token-${NONCE}`;

/** package.json and the lockfile the host's npm writes for it (as a repository's would be, with resolved URLs). */
async function lockedProject(pkg: object): Promise<{ 'package.json': string; 'package-lock.json': string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'foresight-node-lock-'));
  try {
    const text = `${JSON.stringify(pkg, null, 2)}\n`;
    await writeFile(path.join(dir, 'package.json'), text);
    await new Promise<void>((resolve, reject) =>
      execFile('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund', '--omit-lockfile-registry-resolved=false'], { cwd: dir, timeout: 120_000 }, (err, _o, stderr) =>
        err ? reject(new Error(`npm install --package-lock-only failed: ${stderr}`)) : resolve(),
      ),
    );
    return { 'package.json': text, 'package-lock.json': await readFile(path.join(dir, 'package-lock.json'), 'utf8') };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe.skipIf(skip)('a Node env image, built and chosen by the verify loop (real Docker, the npm registry)', () => {
  const repoName = `acme/nodeprobe-${NONCE}`;
  let dataDir: string;

  beforeAll(async () => {
    await ensureBaseImage({ log: (c) => process.stderr.write(c) });
    dataDir = await mkdtemp(path.join(tmpdir(), 'foresight-node-env-'));
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    clearSecrets();
    const images = await docker.listImages({ filters: { label: [`${REPO_LABEL}=${repoName}`] } });
    for (const img of images) await docker.getImage(img.Id).remove({ force: true }).catch(() => undefined);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it("its first candidate's runner is not installed: rejected for its report; the mocha image has the pinned Node, read-only dependencies and no token", async () => {
    const repo = await newRepo();
    // `npm test` names jest, which nothing installs; mocha is what the dependencies have.
    const project = await lockedProject({
      name: 'nodeprobe',
      version: '1.0.0',
      private: true,
      description: `foresight node probe ${NONCE}`,
      scripts: { test: 'jest' },
      dependencies: { 'is-number': '7.0.0' },
      devDependencies: { mocha: '10.8.2' },
    });
    await repo.commit({ files: { ...project, '.nvmrc': '20\n', 'index.js': "module.exports = require('is-number');\n" }, message: 'init', date: DATE });
    const pr = await repo.commit({
      files: { 'test/index.test.js': "const assert = require('assert');\nconst isNumber = require('..');\ndescribe('isNumber', () => { it('knows 5', () => assert.ok(isNumber(5))); });\n" },
      message: 'PR: tests (#1)',
      date: DATE,
    });

    // The host's npm configuration, with a token for the registry: it must reach the deps step and nothing else.
    const rc = path.join(dataDir, 'npmrc');
    await writeFile(rc, `//registry.npmjs.org/:_authToken=${TOKEN}\n`);
    vi.stubEnv('npm_config_userconfig', rc);

    const repoDir = path.join(dataDir, 'repo');
    const t0 = Date.now();
    const env = await eraEnvironment(
      { repo: repoName, clone: repo.dir, gitDir: await absoluteGitDir(repo.dir), repoDir, log: silentLogger, images: new EnvImages({ docker }), image: null, runner: 'pytest', signal: new AbortController().signal, limits: { runTimeoutSec: 120 } },
      pr,
      ['test/index.test.js'],
    );
    console.log(`[node-env.test] two Node candidates built and probed in ${Math.round((Date.now() - t0) / 1000)} s`);
    expect(env).toMatchObject({ kind: 'ready', label: 'node20 npm@10 mocha', built: true });
    if (env.kind !== 'ready') return;
    const [era] = Object.values((JSON.parse(await readFile(path.join(repoDir, CHOICE_FILE), 'utf8')) as ChoiceFile).eras);
    expect(era!.tried.map((t) => [t.label, t.outcome, t.stage ?? null])).toEqual([
      ['node20 npm@10 jest', 'rejected', 'report'],
      ['node20 npm@10 mocha', 'chosen', null],
    ]);
    expect(era!.tried[0]!.reason).toMatch(/^unusable report: .*node_modules\/\.bin\/jest/);
    expect(era!.tried[1]!.check).toMatch(/^trustworthy: 1 tests ran \(1 passed/);

    // As the test runs see it: the chosen Node first on PATH, the dependencies root's and read-only.
    const run = await runLockedDown(
      docker,
      env.image,
      [
        'node --version',
        'command -v node',
        'echo "modules=$FORESIGHT_NODE_MODULES"',
        'test -f "$FORESIGHT_NODE_MODULES/is-number/index.js" && echo is-number-present',
        'touch "$FORESIGHT_NODE_MODULES/is-number/planted" 2>/dev/null && echo writable || echo read-only',
        'mkdir -p /tmp/w && cd /tmp/w && ln -s "$FORESIGHT_NODE_MODULES" node_modules',
        "node -e \"process.stdout.write('is-number(5)=' + require('is-number')(5) + '\\n')\"",
        'python -c "print(\'python ok\')"',
      ].join('\n'),
    );
    expect(run.code, run.out).toBe(0);
    const lines = run.out.trim().split('\n');
    expect(lines[0]).toMatch(/^v20\.\d+\.\d+$/);
    expect(lines.slice(1)).toEqual(['/opt/node/bin/node', 'modules=/opt/foresight-node/node_modules', 'is-number-present', 'read-only', 'is-number(5)=true', 'python ok']);

    // The token went nowhere but the deps step's exec: not in the image's config or history, not in the log.
    const inspect = JSON.stringify(await docker.getImage(env.image).inspect());
    const history = JSON.stringify(await docker.getImage(env.image).history());
    expect(inspect).not.toContain(TOKEN);
    expect(history).not.toContain(TOKEN);
    expect(inspect).toContain('FORESIGHT_NODE_MODULES=/opt/foresight-node/node_modules');
    const log = await readFile(path.join(repoDir, 'validate', 'env-logs', `foresight-env-${env.image.split(':')[1]}.log`), 'utf8');
    expect(log).toContain('token yes');
    expect(log).not.toContain(TOKEN);
    expect(log).toMatch(/npm ci --ignore-scripts/);

    // The key follows the lockfile, the Node and the client; the same inputs give the same key.
    const recipe = env.recipe;
    const key = (r: typeof recipe, commit = pr) => envImageKey({ clone: repo.dir, commit, recipe: r, baseId: 'sha256:base' }).then((k) => k.key);
    expect(await key(recipe)).toBe(await key(recipe));
    expect(await key({ ...recipe, node: '22' })).not.toBe(await key(recipe));
    expect(await key({ ...recipe, packageManager: 'npm@11' })).not.toBe(await key(recipe));
    const bumped = await repo.commit({ files: { 'package-lock.json': project['package-lock.json'].replace('"version": "1.0.0"', '"version": "1.0.1"') }, message: 'bump', date: DATE });
    expect(await key(recipe, bumped)).not.toBe(await key(recipe));
  }, 300_000);
});
