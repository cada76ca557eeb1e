/**
 * A chain env's lifecycle through real Docker: close() removes its container, a dead process's containers
 * are swept, and SIGTERM removes the live ones before the process exits 143.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertDockerReachable,
  connectDocker,
  DEFAULT_BASE_ALIAS,
  ensureImage,
  isDockerReachable,
  openChainEnv,
  ownContainerIds,
  removeStaleContainers,
  type ChainEnv,
} from '../../../core/env/index.ts';
import { pytestRunner } from '../../../core/env/runners/pytest/index.ts';
import { isContainerGone, makeCalcRepo } from '../../helpers/calc-repo.ts';

const docker = connectDocker();
const skip = !(await isDockerReachable(docker)) && !process.env['CI'];
if (skip) console.warn('[container-lifecycle.test] SKIPPED: Docker is not reachable and CI is unset');

const IMAGE = DEFAULT_BASE_ALIAS;
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe.skipIf(skip)('chain env lifecycle (Docker)', () => {
  let tmp: string;
  let revs: { A: string; B: string; C: string };
  let env: ChainEnv;
  const gitDir = (): string => path.join(tmp, 'repo', '.git');

  beforeAll(async () => {
    await assertDockerReachable(docker);
    await ensureImage(IMAGE, { docker });
    tmp = mkdtempSync(path.join(tmpdir(), 'foresight-container-lifecycle-'));
    mkdirSync(path.join(tmp, 'repo'));
    revs = makeCalcRepo(path.join(tmp, 'repo'));
    env = await openChainEnv({ gitDir: gitDir(), image: IMAGE, runner: pytestRunner, docker });
  });

  afterAll(async () => {
    await env?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('close() removes the container, and is idempotent', async () => {
    const e = await openChainEnv({ gitDir: gitDir(), image: IMAGE, runner: pytestRunner, docker });
    expect(await isContainerGone(docker, e.containerId)).toBe(false);
    await e.close();
    await e.close();
    await expect(docker.getContainer(e.containerId).inspect()).rejects.toMatchObject({ statusCode: 404 });
    expect(await ownContainerIds(docker)).not.toContain(e.containerId);
    await expect(e.runState({ checkout: revs.A, overlay: null, testFiles: [] })).rejects.toThrow(/closed/);
  });

  it('removeStaleContainers removes containers of dead processes only', async () => {
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('exit', r));
    const orphan = await docker.createContainer({
      Image: IMAGE,
      Cmd: ['sleep', 'infinity'],
      Labels: { 'foresight.run': '1', 'foresight.pid': String(dead.pid), 'foresight.host': hostname() },
      HostConfig: { NetworkMode: 'none' },
    });
    const removed = await removeStaleContainers(docker);
    expect(removed).toContain(orphan.id);
    expect(removed).not.toContain(env.containerId);
    expect(await isContainerGone(docker, orphan.id)).toBe(true);
    expect(await isContainerGone(docker, env.containerId)).toBe(false);
    expect(await removeStaleContainers(docker)).not.toContain(env.containerId); // twice is fine
  });

  it('SIGTERM removes the live containers and exits 143', async () => {
    const script = path.join(tmp, 'sigterm.mts');
    const envTs = path.join(ROOT, 'core/env/index.ts');
    const signalsTs = path.join(ROOT, 'pipeline/signals.ts');
    const runnerTs = path.join(ROOT, 'core/env/runners/pytest/index.ts');
    writeFileSync(
      script,
      [
        `import { openChainEnv } from ${JSON.stringify(envTs)};`,
        `import { abortOnSignals } from ${JSON.stringify(signalsTs)};`,
        `import { pytestRunner } from ${JSON.stringify(runnerTs)};`,
        'const owner = abortOnSignals();',
        `const env = await openChainEnv({ gitDir: ${JSON.stringify(gitDir())}, image: ${JSON.stringify(IMAGE)}, runner: pytestRunner, signal: owner.signal });`,
        'console.log(`ID ${env.containerId}`);',
        // What a stage does: it stops at the abort and closes what it opened on the way out.
        'const alive = setInterval(() => {}, 1000);',
        'await new Promise((r) => owner.signal.addEventListener("abort", r));',
        'clearInterval(alive);',
        'await env.close();',
        'process.exitCode = owner.exitCode() ?? 0;',
        'export {};',
      ].join('\n'),
    );
    chmodSync(script, 0o644);
    const child = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), [script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const id = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /ID ([0-9a-f]{64})/.exec(out);
        if (m?.[1]) resolve(m[1]);
      });
      child.on('exit', (code) => reject(new Error(`child exited ${code} before opening: ${stderr}`)));
    });
    expect(await isContainerGone(docker, id)).toBe(false);
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
    expect(await isContainerGone(docker, id)).toBe(true);
  });
});
