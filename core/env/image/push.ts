/**
 * Eval images leave the machine: `foresight-eval:<key>` is tagged
 * `<registry>/foresight-eval:<key>` and pushed with the daemon's own push, so a dataset row can name an
 * image anyone can pull. Docker uploads only the layers the registry lacks; the push itself is skipped
 * when the registry's tag already names this image's manifest (the daemon recorded that manifest's digest
 * in the image's RepoDigests when it pushed or pulled it, and `/distribution/<ref>/json` says what the
 * registry's tag names now: equal digests mean the same content, since a manifest digest covers the
 * image config and with it the image id).
 *
 * Registry-side failures (unreachable, refused, out of space) resolve to `{ kind: 'failed', detail }`:
 * the caller decides what a failed push means. Docker itself being unreachable, or a local image that
 * does not exist, throws a ForesightError like every other image operation. No credentials: the push
 * sends an empty auth config, which suits a registry without login (a local or CI registry).
 */
import type Docker from 'dockerode';
import { registryProblem } from '../../foundation/config.ts';
import { ForesightError } from '../../foundation/errors.ts';
import { assertDockerReachable } from '../daemon.ts';
import { dockerError, inspectImage, logLine, splitRef, statusCode, type BuildLog } from './docker-image.ts';

export interface PushOptions {
  docker: Docker;
  /** The local image, `foresight-eval:<key>` (any `repo:tag` without a registry host). */
  image: string;
  /** `HOST[:PORT]/NAMESPACE[/...]` (config images.registry). */
  registry: string;
  /** The run's signal: an abort ends the push request and throws its reason. */
  signal?: AbortSignal;
  log?: BuildLog;
}

export type PushResult =
  | {
      kind: 'pushed';
      /** `<registry>/<repo>:<tag>`: what a consumer pulls. */
      ref: string;
      /** The manifest digest (`sha256:...`) the registry's tag names. */
      digest: string;
      /** True when the registry already had it and nothing was sent. */
      skipped: boolean;
    }
  | {
      kind: 'failed';
      ref: string;
      /** The registry's or the daemon's reason, one line. */
      detail: string;
    };

/** What the daemon streams while pushing (one JSON object per line). */
interface PushEvent {
  status?: string;
  error?: string;
  errorDetail?: { message?: string };
  aux?: { Tag?: string; Digest?: string; Size?: number };
}

/** An empty auth config: the daemon requires the header (or a body) even for a registry without login. */
const NO_AUTH = {};

/** `<registry>/<repo>:<tag>` for a local image `<repo>:<tag>`. */
export function pushedRef(image: string, registry: string): string {
  const { repo, tag } = splitRef(image);
  return `${registry.replace(/\/+$/, '')}/${repo}:${tag}`;
}

/** One line of an error, without the daemon's trailing newline. */
function oneLine(s: string): string {
  return s.trim().split('\n').filter(Boolean).pop() ?? s.trim();
}

/** The daemon answered with an HTTP status (the registry's side failed); no status: the daemon is gone. */
function daemonAnswered(err: unknown): boolean {
  return statusCode(err) !== undefined;
}

/** Follows a push stream to its end; an abort destroys it. */
function follow(docker: Docker, stream: NodeJS.ReadableStream, signal: AbortSignal | undefined): Promise<PushEvent[]> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      (stream as NodeJS.ReadableStream & { destroy?: (e?: Error) => void }).destroy?.();
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    docker.modem.followProgress(stream, (err: Error | null, output: PushEvent[]) => {
      signal?.removeEventListener('abort', onAbort);
      if (signal?.aborted) return;
      if (err) reject(err);
      else resolve(output);
    });
  });
}

/**
 * The manifest digest the registry's tag names now, or null when it has no such tag or cannot say (the
 * push then runs and reports what is wrong).
 */
async function remoteDigest(docker: Docker, ref: string): Promise<string | null> {
  try {
    const info = (await docker.getImage(ref).distribution({ authconfig: NO_AUTH })) as { Descriptor?: { digest?: string } };
    return info.Descriptor?.digest ?? null;
  } catch (err) {
    if (!daemonAnswered(err)) throw dockerError(`cannot ask the daemon about ${ref}`, err);
    return null;
  }
}

/** Tags `image` as `<registry>/<repo>:<tag>` and pushes it; see the file comment for what fails how. */
export async function pushImage(opts: PushOptions): Promise<PushResult> {
  const { docker, image, registry, signal } = opts;
  const problem = registryProblem(registry);
  if (problem) {
    throw new ForesightError(`pushImage: ${JSON.stringify(registry)} is not ${problem}`, { remedy: 'pass a registry such as 127.0.0.1:5000/foresight' });
  }
  signal?.throwIfAborted();
  await assertDockerReachable(docker);
  const info = await inspectImage(docker, image);
  if (!info) throw new ForesightError(`cannot push ${image}: it is not present`, { remedy: 'build it first (ensureEvalImage), then push', external: true });
  const ref = pushedRef(image, registry);
  const { repo, tag } = splitRef(ref);
  try {
    await docker.getImage(info.Id).tag({ repo, tag });
  } catch (err) {
    throw dockerError(`cannot tag ${image} as ${ref}`, err);
  }

  const known = await remoteDigest(docker, ref);
  if (known && (info.RepoDigests ?? []).includes(`${repo}@${known}`)) {
    logLine(opts.log, `${ref} is already in the registry (${known}): push skipped`);
    return { kind: 'pushed', ref, digest: known, skipped: true };
  }

  logLine(opts.log, `pushing ${image} as ${ref}`);
  // A local tag naming a registry that does not hold the image would mislead whoever reads `docker images`.
  const failed = async (detail: string): Promise<PushResult> => {
    await docker.getImage(ref).remove({ noprune: true }).catch(() => undefined);
    logLine(opts.log, `push of ${ref} failed: ${detail}`);
    return { kind: 'failed', ref, detail };
  };
  let events: PushEvent[];
  try {
    signal?.throwIfAborted();
    const stream = (await docker.getImage(repo).push({ tag, authconfig: NO_AUTH, abortSignal: signal })) as NodeJS.ReadableStream;
    events = await follow(docker, stream, signal);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    if (daemonAnswered(err)) return failed(oneLine((err as Error).message));
    throw dockerError(`cannot push ${ref}`, err);
  }
  const failure = events.find((e) => e.error || e.errorDetail);
  if (failure) return failed(oneLine(failure.errorDetail?.message ?? failure.error ?? 'the push failed'));
  const digest = events.map((e) => e.aux?.Digest).find((d): d is string => typeof d === 'string');
  if (!digest) return failed('the push ended without the registry reporting a digest');
  logLine(opts.log, `pushed ${ref} (${digest})`);
  return { kind: 'pushed', ref, digest, skipped: false };
}
