import type Docker from 'dockerode';
import { lockedDown } from '../../core/env/container/limits.ts';
import { DEFAULT_LIMITS } from '../../core/env/index.ts';

/**
 * `script` in a container of `image` as the test runs are (uid 65534, no network, read-only root, /tmp a
 * tmpfs), with `binds` mounted: its exit code and output (the multiplexed frames' headers dropped).
 */
export async function runLockedDown(docker: Docker, image: string, script: string, binds: readonly string[] = []): Promise<{ code: number; out: string }> {
  const c = await docker.createContainer({
    Image: image,
    Cmd: ['sh', '-c', script],
    User: '65534:65534',
    WorkingDir: '/tmp',
    Env: ['HOME=/tmp'],
    NetworkDisabled: true,
    HostConfig: { ...lockedDown(DEFAULT_LIMITS), NetworkMode: 'none', ...(binds.length ? { Binds: [...binds] } : {}) },
  });
  try {
    await c.start();
    const { StatusCode } = (await c.wait()) as { StatusCode: number };
    const logs = await c.logs({ stdout: true, stderr: true, follow: false });
    let out = '';
    for (let i = 0; i + 8 <= logs.length; ) {
      const n = logs.readUInt32BE(i + 4);
      out += logs.subarray(i + 8, i + 8 + n).toString('utf8');
      i += 8 + n;
    }
    return { code: StatusCode, out };
  } finally {
    await c.remove({ force: true });
  }
}
