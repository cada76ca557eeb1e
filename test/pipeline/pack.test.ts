/**
 * The package as a user gets it: `npm pack` (its prepack runs `npm run build`), the tarball installed
 * offline into another folder, and the installed `foresight` run from a third one, with no TypeScript
 * and no repository in sight. Slow (a tsc build and an npm install): about a minute and a half.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STAGES } from '../../core/foundation/stage.ts';
import { PROJECT_ROOT } from '../../core/foundation/version.ts';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Result> {
  const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface LockEntry {
  version?: string;
  resolved?: string;
  dev?: boolean;
  link?: boolean;
}

/**
 * A lockfile for the consumer folder pinning the versions the repository installed (its
 * package-lock.json without the dev entries). Why: npm 11 resolves a tarball's dependencies from full
 * registry documents, while `npm ci` leaves only the tarballs (and abbreviated documents) in the cache,
 * so a bare `npm install --offline <tarball>` stops at ENOTCACHED; and this machine's npm writes locks
 * without `resolved` (omit-lockfile-registry-resolved), so the registry's tarball URLs are filled in
 * here: the cache holds the tarballs under exactly those URLs.
 */
async function consumerLock(registry: string): Promise<string> {
  const lock = JSON.parse(await readFile(join(PROJECT_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const packages: Record<string, LockEntry> = { '': { version: '1.0.0' } };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path || entry.dev || entry.link) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const resolved = entry.resolved ?? `${registry.replace(/\/+$/, '')}/${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
    packages[path] = { ...entry, resolved };
  }
  return JSON.stringify({ name: 'consumer', version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 1);
}

describe('npm pack: the installed CLI runs from another folder, offline', () => {
  let tmp: string;
  let bin: string;
  let elsewhere: string;
  let tarFiles: string[];
  /** Only PATH and HOME: no FORESIGHT_* of the caller, no node_modules/.bin of the repository on PATH. */
  const env = { PATH: (process.env.PATH ?? '/usr/bin:/bin').split(':').filter((p) => !p.includes('node_modules')).join(':'), HOME: process.env.HOME ?? '/tmp' };

  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'foresight-pack-'));
    const [packDir, installDir] = [join(tmp, 'pack'), join(tmp, 'install')];
    elsewhere = join(tmp, 'elsewhere');
    for (const d of [packDir, installDir, elsewhere]) await mkdir(d);

    const pack = await run('npm', ['pack', '--pack-destination', packDir], PROJECT_ROOT);
    expect(pack.code, pack.stderr).toBe(0);
    const [tarball] = (await readdir(packDir)).filter((f) => f.endsWith('.tgz'));
    expect(tarball, pack.stdout + pack.stderr).toBeDefined();
    const list = await run('tar', ['-tzf', join(packDir, tarball!)], tmp);
    tarFiles = list.stdout.trim().split('\n');

    const registry = (await run('npm', ['config', 'get', 'registry'], tmp)).stdout.trim() || 'https://registry.npmjs.org/';
    await writeFile(join(installDir, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
    await writeFile(join(installDir, 'package-lock.json'), await consumerLock(registry));
    const install = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(packDir, tarball!)], installDir);
    expect(install.code, install.stderr).toBe(0);
    bin = join(installDir, 'node_modules', '.bin', 'foresight');
  }, 300_000);

  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('trial: no LICENSE, tsx needed at run time → the package ships compiled JS, its runtime files and the LICENSE, and no TypeScript', () => {
    expect(tarFiles).toContain('package/dist/pipeline/bin.js');
    expect(tarFiles).toContain('package/dist/core/env/runners/pytest/run_state.sh');
    expect(tarFiles).toContain('package/dist/core/env/runners/checkout.sh');
    expect(tarFiles).toContain('package/dist/core/env/image/build-base-image.sh');
    expect(tarFiles).toContain('package/dist/core/env/recipes/demo__minilib.json');
    expect(tarFiles).toContain('package/dist/judges/solvability/prompt.md');
    expect(tarFiles.filter((f) => f.endsWith('.ts'))).toEqual([]);
    expect(tarFiles).toContain('package/LICENSE');
    // A development tool: not installed with the package.
    expect(existsSync(join(dirname(bin), '..', 'tsx'))).toBe(false);
    expect(tarFiles.filter((f) => !f.startsWith('package/dist/') && !['package/package.json', 'package/README.md', 'package/LICENSE'].includes(f))).toEqual([]);
  });

  it('foresight --help works from another folder and names the environment', async () => {
    const r = await run(bin, ['--help'], elsewhere, env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Usage: foresight');
    expect(r.stdout).toContain('foresight demo');
    expect(r.stdout).toMatch(/FORESIGHT_JOBS/);
    expect(r.stderr).toBe('');
  });

  it('foresight stages loads every stage and fingerprints the compiled code, the same on every run', async () => {
    const [a, b] = [await run(bin, ['stages'], elsewhere, env), await run(bin, ['stages'], elsewhere, env)];
    expect(a.code, a.stderr).toBe(0);
    const lines = a.stdout.trim().split('\n');
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual([...STAGES]);
    for (const l of lines) expect(l).toMatch(/^\w+\s+[0-9a-f]{16}\s+\d+ modules, \d+ runtime files, \d+ packages$/);
    expect(b.stdout).toBe(a.stdout);

    // What runs is what is hashed: the installed dist/ modules and the files they read, never sources.
    const files = await run(bin, ['stages', '--files'], elsewhere, env);
    const listed = files.stdout.split('\n').filter((l) => l.startsWith('    ')).map((l) => l.trim());
    const paths = listed.filter((l) => !/^(@[^/]+\/)?[^/@]+@[^/]+$/.test(l));
    expect(paths.length).toBeGreaterThan(0);
    expect(paths.filter((p) => !p.startsWith('dist/'))).toEqual([]);
    expect(paths.filter((p) => p.endsWith('.ts'))).toEqual([]);
    expect(paths).toContain('dist/stages/validate/index.js');
    expect(paths).toContain('dist/core/env/runners/pytest/run_state.sh');
    expect(paths).toContain('dist/judges/solvability/prompt.md');
  });

  it('leaves nothing in the repository but dist/, which git ignores', async () => {
    expect((await readdir(PROJECT_ROOT)).filter((f) => f.endsWith('.tgz'))).toEqual([]);
    expect((await run('git', ['check-ignore', '-q', 'dist/pipeline/bin.js'], PROJECT_ROOT)).code).toBe(0);
  });
});
