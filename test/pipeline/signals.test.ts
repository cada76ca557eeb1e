/**
 * The signal owner's last resort (pipeline/signals.ts, core/env removeOwnContainers): whatever way a
 * process leaves after a signal, the containers it still owns are removed first, one whose creation was
 * in flight when the sweep began included. Real Docker.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable, ownContainerIds, ownerLabels, removeOwnContainers, RUN_LABEL } from '../../core/env/index.ts';
import { PROJECT_ROOT } from '../../core/foundation/version.ts';

const docker = connectDocker();
const skip = !(await isDockerReachable(docker)) && !process.env['CI'];
if (skip) console.warn('[signals.test] SKIPPED: Docker is not reachable and CI is unset');

/** A container as foresight creates one (labelled with this process as its owner), not tied to any signal. */
async function ownedContainer(labels: Record<string, string> = ownerLabels()): Promise<string> {
  const c = await docker.createContainer({ Image: DEFAULT_BASE_ALIAS, Cmd: ['sleep', 'infinity'], Labels: labels, HostConfig: { NetworkMode: 'none' } });
  await c.start();
  return c.id;
}

describe.skipIf(skip)('the final sweep after a signal (Docker)', () => {
  let tmp: string;
  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    tmp = mkdtempSync(path.join(tmpdir(), 'foresight-signals-'));
  });
  afterAll(async () => {
    await removeOwnContainers(docker, { deadlineMs: 10_000 });
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('trial: a worker stopped while a container was being created left it running → a container created after the final sweep began is removed too', async () => {
    const first = await ownedContainer();
    const sweep = removeOwnContainers(docker, { deadlineMs: 15_000, settleMs: 1_500 });
    // Created while the sweep runs, as a creation in flight at the signal lands.
    await new Promise((r) => setTimeout(r, 300));
    const late = await ownedContainer();
    const { removed, left } = await sweep;
    expect(left).toEqual([]);
    expect(removed).toEqual(expect.arrayContaining([first, late]));
    expect(await ownContainerIds(docker)).toEqual([]);
  }, 60_000);

  it('trial: workers whose jobs did not stop within the 20 s grace period exited 143 with their containers running → the grace-period exit and a second signal remove them first', async () => {
    const script = path.join(tmp, 'stuck.mts');
    writeFileSync(
      script,
      [
        `import { connectDocker, ownerLabels } from ${JSON.stringify(path.join(PROJECT_ROOT, 'core/env/index.ts'))};`,
        `import { abortOnSignals } from ${JSON.stringify(path.join(PROJECT_ROOT, 'pipeline/signals.ts'))};`,
        'const docker = connectDocker();',
        'abortOnSignals({ docker, graceMs: Number(process.argv[2]) });',
        // A container nothing closes or ties to the signal, and work that never unwinds.
        `const c = await docker.createContainer({ Image: ${JSON.stringify(DEFAULT_BASE_ALIAS)}, Cmd: ['sleep', 'infinity'], Labels: ownerLabels(), HostConfig: { NetworkMode: 'none' } });`,
        'await c.start();',
        'console.log(`ID ${c.id}`);',
        'setInterval(() => {}, 1000);',
      ].join('\n'),
    );
    const cases: Array<{ signals: NodeJS.Signals[]; code: number; graceMs: number }> = [
      { signals: ['SIGTERM'], code: 143, graceMs: 3_000 },
      { signals: ['SIGINT', 'SIGINT'], code: 130, graceMs: 60_000 },
    ];
    for (const { signals, code, graceMs } of cases) {
      const child = spawn(process.execPath, ['--import', 'tsx', script, String(graceMs)], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const exited = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
      const id = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (b: Buffer) => {
          out += b.toString();
          const m = /ID ([0-9a-f]{64})/.exec(out);
          if (m?.[1]) resolve(m[1]);
        });
        child.on('exit', (c) => reject(new Error(`exited ${c} before its container was up: ${stderr}`)));
      });
      const t0 = Date.now();
      for (const s of signals) {
        child.kill(s);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(await exited, stderr).toBe(code);
      // Within the grace period, or at once after a second signal: the sweep is part of it.
      expect(Date.now() - t0).toBeLessThan(Math.min(graceMs, 6_000) + 1_000);
      const left = await docker.listContainers({ all: true, filters: { label: [`${RUN_LABEL}=1`, `foresight.pid=${child.pid}`] } });
      expect(left.map((c) => c.Id)).toEqual([]);
      await expect(docker.getContainer(id).inspect()).rejects.toMatchObject({ statusCode: 404 });
    }
  }, 60_000);
});
