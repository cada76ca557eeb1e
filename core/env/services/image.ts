/**
 * The service tier `foresight-service:<key>`: the default base image (Debian bookworm) plus the backend's
 * Debian packages (installed with Debian's mirror, the build's only network) and its data directory,
 * initialised at build time. Key = hash(base image id, packages, setup script, command); built once per key
 * (a lock file per key across processes), reused after.
 */
import path from 'node:path';
import { tmpdir } from 'node:os';
import type Docker from 'dockerode';
import { fingerprint } from '../../foundation/fingerprint.ts';
import { ensureBaseImage } from '../image/base.ts';
import { aptScript } from '../image/build-scripts.ts';
import { CLEAR_OWNER_LABELS, lastLines, openBuildLog, runBuildStep } from '../image/build.ts';
import { dockerError, inspectImage, logLine, splitRef, type BuildLog } from '../image/docker-image.ts';
import { withLock } from '../image/lock.ts';
import { touchImage } from '../image/cache.ts';
import { SERVICE_REPOSITORY } from '../image/key.ts';
import { forceRemove, ownerLabels, removeOnAbort } from '../container/cleanup.ts';
import { ForesightError } from '../../foundation/errors.ts';
import type { ServiceSpec } from './types.ts';

export { SERVICE_REPOSITORY };
export const SERVICE_LABEL = 'foresight.service';
const BUILD_TIMEOUT_SEC = 1200;

export interface ServiceImageOptions {
  docker: Docker;
  /** The base image's alias (config images.baseAlias). */
  baseAlias?: string;
  lockDir?: string | null;
  log?: BuildLog;
  /** Directory of the build log (default <tmpdir>/foresight-env-logs). */
  logDir?: string;
  signal?: AbortSignal;
}

export interface ServiceImage {
  image: string;
  built: boolean;
  durationMs: number;
}

/** The service's image, reused when its tag exists, else built (a failure throws: infrastructure, never evidence). */
export async function ensureServiceImage(spec: ServiceSpec, opts: ServiceImageOptions): Promise<ServiceImage> {
  const t0 = Date.now();
  const { docker } = opts;
  const base = await ensureBaseImage({ docker, alias: opts.baseAlias, lockDir: opts.lockDir, log: opts.log });
  const apt = aptScript({ systemPackages: [...spec.packages] })!;
  const key = fingerprint('foresight-service/1', base.id, spec.name, spec.packages, spec.setup, spec.user, spec.cmd).slice(0, 24);
  const image = `${SERVICE_REPOSITORY}:${key}`;
  if (await inspectImage(docker, image)) {
    await touchImage(image, docker); // its last use, for the cache policy's pruning
    return { image, built: false, durationMs: Date.now() - t0 };
  }
  return withLock(opts.lockDir, `service-${key}`, (BUILD_TIMEOUT_SEC + 120) * 1000, async () => {
    if (await inspectImage(docker, image)) return { image, built: false, durationMs: Date.now() - t0 };
    await build(spec, image, base.image, apt, opts);
    return { image, built: true, durationMs: Date.now() - t0 };
  });
}

async function build(spec: ServiceSpec, image: string, baseImage: string, apt: string, opts: ServiceImageOptions): Promise<void> {
  const { docker } = opts;
  const logPath = path.join(opts.logDir ?? path.join(tmpdir(), 'foresight-env-logs'), `${image.replace(':', '-')}.log`);
  const append = await openBuildLog(logPath, [`# ${image}: ${spec.name} (${spec.packages.join(' ')}) on ${baseImage}`, `# started ${new Date().toISOString()}`, '']);
  logLine(opts.log, `building the ${spec.name} service image ${image} (log: ${logPath})`);
  const deadline = Date.now() + BUILD_TIMEOUT_SEC * 1000;
  let container: Docker.Container;
  try {
    container = await docker.createContainer({
      Image: baseImage,
      Cmd: ['sleep', 'infinity'],
      User: '0:0',
      Labels: { ...ownerLabels(), [SERVICE_LABEL]: spec.name },
      HostConfig: { NetworkMode: 'bridge', SecurityOpt: ['no-new-privileges'], Init: true },
    });
  } catch (err) {
    throw dockerError(`cannot create the ${spec.name} service build container`, err);
  }
  const dispose = removeOnAbort(docker, container.id, opts.signal);
  const failed = (what: string, text: string): ForesightError =>
    new ForesightError(`building the ${spec.name} service image failed: ${what}: ${lastLines(text).split('\n').pop() ?? ''}`, {
      remedy: `read ${logPath}; the build needs Debian's mirror (/etc/apt/sources.list.d/debian.sources)`,
      external: true,
    });
  try {
    opts.signal?.throwIfAborted();
    await container.start().catch((err: unknown) => {
      throw dockerError(`cannot start the ${spec.name} service build container`, err);
    });
    const what = 'docker exec in the service build container failed';
    const aptRes = await runBuildStep(container, apt, [], deadline, append, what);
    if (aptRes.exitCode !== 0) throw failed('apt-get install', aptRes.text);
    // Setup needs no network: cut off before it, as env builds do.
    await docker.getNetwork('bridge').disconnect({ Container: container.id, Force: true }).catch((err: unknown) => {
      throw dockerError('cannot disconnect the service build container from the network', err);
    });
    const setup = await runBuildStep(container, spec.setup, [], deadline, append, what);
    if (setup.exitCode !== 0) throw failed('setup', setup.text);
    opts.signal?.throwIfAborted();
    const { repo, tag } = splitRef(image);
    await container
      .commit({ repo, tag, comment: `foresight ${spec.name} service`, changes: [`USER ${spec.user}`, `CMD ${JSON.stringify(spec.cmd)}`, 'WORKDIR /tmp', CLEAR_OWNER_LABELS] })
      .catch((err: unknown) => {
        throw dockerError(`cannot commit ${image}`, err);
      });
    await append(`\n# committed ${image}\n`);
    logLine(opts.log, `built ${image}`);
  } finally {
    dispose();
    await forceRemove(docker, container.id).catch(() => undefined);
  }
}
