/**
 * A real Docker registry for tests: Debian's `docker-registry` (scripts/setup.sh installs it) serving on
 * 127.0.0.1 at a free port with its storage in a temp dir. Docker allows 127.0.0.0/8 registries over
 * plain HTTP by default, so no daemon configuration is needed.
 */
import { spawn } from 'node:child_process';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const REGISTRY_BIN = '/usr/bin/docker-registry';

export const hasRegistryBin = (): Promise<boolean> => access(REGISTRY_BIN).then(() => true, () => false);

export interface TestRegistry {
  /** `127.0.0.1:<port>/<namespace>`: what --registry takes. */
  registry: string;
  /** `http://127.0.0.1:<port>`: its HTTP API. */
  url: string;
  namespace: string;
  stop(): Promise<void>;
}

/** A port nothing listens on right now (nothing answers there: a registry that is down). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** Starts a registry and resolves once `GET /v2/` answers 200; `stop()` ends it and removes its storage. */
export async function startRegistry(namespace = 'foresight-test'): Promise<TestRegistry> {
  const dir = await mkdtemp(path.join(tmpdir(), 'foresight-registry-'));
  const port = await freePort();
  const config = path.join(dir, 'config.yml');
  await writeFile(
    config,
    ['version: 0.1', 'log:', '  level: warn', 'storage:', '  filesystem:', `    rootdirectory: ${path.join(dir, 'storage')}`, 'http:', `  addr: 127.0.0.1:${port}`, ''].join('\n'),
  );
  let output = '';
  const proc = spawn(REGISTRY_BIN, ['serve', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout.on('data', (d: Buffer) => void (output += d.toString()));
  proc.stderr.on('data', (d: Buffer) => void (output += d.toString()));
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) {
      await stop();
      throw new Error(`docker-registry exited with ${proc.exitCode}: ${output.slice(-2000)}`);
    }
    if (await fetch(`${url}/v2/`).then((r) => r.status === 200, () => false)) break;
    if (i >= 200) {
      await stop();
      throw new Error(`docker-registry did not answer on ${url} within 20 s: ${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { registry: `127.0.0.1:${port}/${namespace}`, url, namespace, stop };
}
