/**
 * A database service through real Docker: the PostgreSQL sidecar (Debian's packages over the base image)
 * on a per-chain internal network. A test container that joins it reaches `db:5432` and nothing outside;
 * a network that is not internal is refused; close() and an abort leave no container and no network.
 * Prints the measurements (image build, start-to-ready).
 */
import { describe, expect, it } from 'vitest';
import { hostname } from 'node:os';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, getBackend, ensureServiceImage, isDockerReachable, openChainEnv, ownContainerIds, ownNetworkNames, removeStaleContainers, RUN_LABEL, startService } from '../../../../core/env/index.ts';
import { runExec } from '../../../../core/env/container/exec.ts';
import { pytestRunner } from '../../../../core/env/runners/pytest/index.ts';
import { gitRepo } from '../../../helpers/git-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
if (!dockerUp && process.env['CI']) throw new Error('Docker is not reachable: CI must run the service tests');

/** Python in the test container: connect to each host:port, print ok or the error's class. */
const PROBE = `import socket, sys
for target in sys.argv[1:]:
    host, port = target.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
        print(target, "ok")
    except Exception as e:
        print(target, type(e).__name__)
`;

describe.skipIf(!dockerUp)('database sidecar (Docker)', () => {
  it('postgresql: ready, reached as db:5432 from a joined test container, nothing outside; removed on close', async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    const spec = getBackend('postgresql');
    if (spec.kind !== 'service') throw new Error('postgresql must be a service');
    const t0 = Date.now();
    const img = await ensureServiceImage(spec, { docker });
    const buildSec = (Date.now() - t0) / 1000;
    const repo = await gitRepo();
    await repo.commit({ files: { 'a.txt': 'a\n' }, message: 'a', date: '2024-01-01T00:00:00Z' });
    const service = await startService({ backend: 'postgresql', docker });
    try {
      expect(service.network).toMatch(/^foresight-db-[0-9a-f]{12}$/);
      expect(service.env).toMatchObject({ FORESIGHT_DB: 'postgresql', PGHOST: 'db', PGPORT: '5432' });
      console.info(`[sidecar.test] postgresql image ${img.built ? 'built' : 'reused'} in ${buildSec.toFixed(1)} s; start-to-ready ${service.readySec.toFixed(2)} s`);
      const env = await openChainEnv({ gitDir: `${repo.dir}/.git`, image: DEFAULT_BASE_ALIAS, runner: pytestRunner, docker, network: service.network });
      try {
        const c = docker.getContainer(env.containerId);
        const out = await runExec(c, ['python3', '-c', PROBE, 'db:5432', '1.1.1.1:80', '172.17.0.1:2375'], { capture: 'combined', deadlineMs: 60_000 });
        const lines = out.text.trim().split('\n');
        expect(lines[0]).toBe('db:5432 ok');
        expect(lines.slice(1).every((l) => !l.endsWith(' ok')), out.text).toBe(true);
        // The test container keeps its limits (non-root, memory) on the service network.
        const info = await c.inspect();
        expect(info.Config.User).toBe('65534:65534');
        expect(info.HostConfig.Memory).toBeGreaterThan(0);
        expect(Object.keys(info.NetworkSettings.Networks)).toEqual([service.network]);
      } finally {
        await env.close();
      }
      // Only an internal network may be joined: the default bridge reaches the outside.
      await expect(openChainEnv({ gitDir: `${repo.dir}/.git`, image: DEFAULT_BASE_ALIAS, runner: pytestRunner, docker, network: 'bridge' })).rejects.toThrow(/not internal/);
    } finally {
      await service.close();
      await repo.remove();
    }
    expect(await ownContainerIds(docker)).toEqual([]);
    expect(await ownNetworkNames(docker)).toEqual([]);
  }, 600_000);

  it('an abort removes the sidecar and its network at once', async () => {
    const ac = new AbortController();
    const service = await startService({ backend: 'postgresql', docker, signal: ac.signal });
    expect(await ownNetworkNames(docker)).toEqual([service.network]);
    ac.abort(new Error('test abort'));
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && ((await ownContainerIds(docker)).length || (await ownNetworkNames(docker)).length)) await new Promise((r) => setTimeout(r, 200));
    expect(await ownContainerIds(docker)).toEqual([]);
    expect(await ownNetworkNames(docker)).toEqual([]);
    await service.close(); // idempotent after an abort
  }, 120_000);

  it('a network left by a killed process is swept at the next run; a live process\'s is kept', async () => {
    const dead = `foresight-db-stale-${process.pid}`;
    // pid 2^22 + 1 is above Linux's pid_max: never a live process.
    await docker.createNetwork({ Name: dead, Internal: true, Labels: { [RUN_LABEL]: '1', 'foresight.pid': String(4194305), 'foresight.host': hostname() } });
    const live = await startService({ backend: 'postgresql', docker });
    try {
      await removeStaleContainers(docker);
      const names = (await docker.listNetworks()).map((n) => n.Name);
      expect(names).not.toContain(dead);
      expect(names).toContain(live.network);
    } finally {
      await live.close();
      await docker.getNetwork(dead).remove().catch(() => undefined);
    }
  }, 120_000);
});
