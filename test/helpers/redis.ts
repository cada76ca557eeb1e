import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestRedis {
  url: string;
  port: number;
  /** SIGKILL the server (no shutdown save) and wait for it to exit. */
  kill(): Promise<void>;
  /** Start it again on the same port and folder (with persistence it reloads its append-only file). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartRedisOptions {
  /** `--appendonly yes`: every write is in the folder's append-only file, so a restart keeps the jobs. */
  appendonly?: boolean;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/**
 * A private redis-server on 127.0.0.1 (its own temp dir; no persistence unless asked), stopped by `stop()`.
 * Missing redis-server fails the test with the remedy: the queue tests never skip.
 */
export async function startRedis(opts: StartRedisOptions = {}): Promise<TestRedis> {
  if (spawnSync('redis-server', ['--version']).error) {
    throw new Error('redis-server is not installed: run `bash scripts/setup.sh` (or `apt-get install -y redis-server`)');
  }
  const dir = await mkdtemp(join(tmpdir(), 'foresight-redis-'));
  const serve = (port: number): ChildProcess =>
    spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', opts.appendonly ? 'yes' : 'no', '--daemonize', 'no', '--loglevel', 'warning'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  for (let tries = 0; ; tries++) {
    const port = await freePort();
    let child = serve(port);
    if (await waitReady(child, port)) {
      const kill = async (): Promise<void> => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      };
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        kill,
        restart: async () => {
          await kill();
          child = serve(port);
          if (!(await waitReady(child, port))) throw new Error(`redis-server did not start again on 127.0.0.1:${port}`);
        },
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) {
            const exited = new Promise((resolve) => child.once('exit', resolve));
            child.kill('SIGTERM');
            await exited;
          }
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
