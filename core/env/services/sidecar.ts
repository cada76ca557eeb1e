/**
 * A database service next to the test containers: a per-chain `--internal` network (no outside access)
 * and a sidecar container on it, reached as `db`; the test containers join the network and keep every
 * other limit. Both are labelled as containers are (swept by removeStaleContainers when a process dies)
 * and removed on close() and at once when the run aborts.
 */
import { randomBytes } from 'node:crypto';
import type Docker from 'dockerode';
import { ForesightError } from '../../foundation/errors.ts';
import { forceRemove, ownerLabels, removeNetwork, removeOnAbort } from '../container/cleanup.ts';
import { runExec } from '../container/exec.ts';
import { dockerError } from '../image/docker-image.ts';
import { ensureServiceImage, SERVICE_LABEL, type ServiceImageOptions } from './image.ts';
import { getBackend } from './registry.ts';
import { SERVICE_HOST, SETTINGS_DIR, type ServiceSpec } from './types.ts';

/** How long a sidecar may take to accept connections. */
const READY_TIMEOUT_MS = 90_000;
const SIDECAR_MEMORY = 1024 ** 3;

export interface ServiceSession {
  backend: string;
  /** The internal network the test containers join (null: no service, NetworkMode none as before). */
  network: string | null;
  /** Environment of the test runs on this backend (empty without a service). */
  env: Readonly<Record<string, string>>;
  /** Seconds from creating the sidecar to its first successful probe (0 without a service). */
  readySec: number;
  /** Whether the service image was built by this call. */
  imageBuilt: boolean;
  close(): Promise<void>;
}

export interface StartServiceOptions extends ServiceImageOptions {
  backend: string;
}

/** A recipe's test environment on a backend: the service's variables over the recipe's, PYTHONPATH joined. */
export function backendEnv(recipeEnv: Readonly<Record<string, string>>, session: Pick<ServiceSession, 'env'>): Record<string, string> {
  const out: Record<string, string> = { ...recipeEnv, ...session.env };
  if (Object.keys(session.env).length) out['PYTHONPATH'] = [recipeEnv['PYTHONPATH'], SETTINGS_DIR].filter(Boolean).join(':');
  return out;
}

/** Start the backend's service (nothing for `sqlite`): resolves once it accepts connections; a failure throws. */
export async function startService(opts: StartServiceOptions): Promise<ServiceSession> {
  const backend = getBackend(opts.backend);
  if (backend.kind === 'none') return { backend: backend.name, network: null, env: {}, readySec: 0, imageBuilt: false, close: async () => undefined };
  opts.signal?.throwIfAborted();
  const img = await ensureServiceImage(backend, opts);
  const { docker } = opts;
  const name = `foresight-db-${randomBytes(6).toString('hex')}`;
  try {
    await docker.createNetwork({ Name: name, Driver: 'bridge', Internal: true, CheckDuplicate: true, Labels: ownerLabels() });
  } catch (err) {
    throw dockerError(`cannot create the internal network for the ${backend.name} service`, err);
  }
  const dropNetwork = onAbort(opts.signal, () => void removeNetwork(docker, name).catch(() => undefined));
  let sidecar: Docker.Container | null = null;
  let dispose = (): void => undefined;
  const close = async (): Promise<void> => {
    dispose();
    dropNetwork();
    if (sidecar) await forceRemove(docker, sidecar.id).catch(() => undefined);
    await removeNetwork(docker, name);
  };
  try {
    const t0 = Date.now();
    try {
      sidecar = await docker.createContainer({
        Image: img.image,
        Labels: { ...ownerLabels(), [SERVICE_LABEL]: backend.name },
        HostConfig: {
          NetworkMode: name,
          Memory: SIDECAR_MEMORY,
          MemorySwap: SIDECAR_MEMORY,
          PidsLimit: 512,
          SecurityOpt: ['no-new-privileges'],
          CapDrop: ['ALL'],
          Init: true,
        },
        NetworkingConfig: { EndpointsConfig: { [name]: { Aliases: [SERVICE_HOST] } } },
      });
    } catch (err) {
      throw dockerError(`cannot create the ${backend.name} sidecar`, err);
    }
    dispose = removeOnAbort(docker, sidecar.id, opts.signal);
    await sidecar.start().catch((err: unknown) => {
      throw dockerError(`cannot start the ${backend.name} sidecar`, err);
    });
    await waitReady(sidecar, backend, opts.signal);
    return { backend: backend.name, network: name, env: backend.env, readySec: (Date.now() - t0) / 1000, imageBuilt: img.built, close };
  } catch (err) {
    await close().catch(() => undefined);
    if (opts.signal?.aborted) throw opts.signal.reason;
    throw err;
  }
}

/** Probe until the service answers; a sidecar that exits or never answers is an error naming its last output. */
async function waitReady(sidecar: Docker.Container, spec: ServiceSpec, signal: AbortSignal | undefined): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    signal?.throwIfAborted();
    const info = await sidecar.inspect();
    if (!info.State.Running) throw new ForesightError(`the ${spec.name} sidecar exited (code ${info.State.ExitCode}): ${await logTail(sidecar)}`, { remedy: 'rebuild its image (docker rmi foresight-service:<key>) and read the log above', external: true });
    const probe = await runExec(sidecar, [...spec.ready], { capture: 'combined', deadlineMs: 10_000 }).catch(() => null);
    if (probe?.exitCode === 0) return;
    if (Date.now() > deadline) throw new ForesightError(`the ${spec.name} sidecar did not accept connections within ${READY_TIMEOUT_MS / 1000} s: ${await logTail(sidecar)}`, { remedy: 'check the host load and the sidecar log (docker logs)', external: true });
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function logTail(c: Docker.Container): Promise<string> {
  const buf = await c.logs({ stdout: true, stderr: true, tail: 5 }).catch(() => Buffer.from(''));
  // Multiplexed frames: keep the printable text.
  return buf.toString('utf8').replace(/[\0-\x08\x0e-\x1f]/g, '').trim().split('\n').slice(-3).join(' | ');
}

function onAbort(signal: AbortSignal | undefined, fn: () => void): () => void {
  if (!signal) return () => undefined;
  if (signal.aborted) {
    fn();
    return () => undefined;
  }
  signal.addEventListener('abort', fn, { once: true });
  return () => signal.removeEventListener('abort', fn);
}
