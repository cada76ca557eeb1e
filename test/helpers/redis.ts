import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/**
 * A private redis-server on 127.0.0.1 (no persistence, its own temp dir), stopped by `stop()`. Missing
 * redis-server fails the test with the remedy: the queue tests never skip.
 */
export async function startRedis(): Promise<TestRedis> {
  if (spawnSync('redis-server', ['--version']).error) {
    throw new Error('redis-server is not installed: run `bash scripts/setup.sh` (or `apt-get install -y redis-server`)');
  }
  const dir = await mkdtemp(join(tmpdir(), 'foresight-redis-'));
  for (let tries = 0; ; tries++) {
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--loglevel', 'warning'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ready = await waitReady(child, port);
    if (ready) {
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        stop: async () => {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          if (child.exitCode === null) child.kill('SIGTERM');
          await exited;
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    // The port was taken between freePort and the bind: take another.
    if (tries >= 3) throw new Error(`redis-server did not start on 127.0.0.1 (last port ${port})`);
  }
}

async function waitReady(child: ChildProcess, port: number): Promise<boolean> {
  const { connect } = await import('node:net');
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) return false;
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.write('PING\r\n');
        s.once('data', (d) => {
          s.destroy();
          resolve(d.toString().startsWith('+PONG'));
        });
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  return false;
}
