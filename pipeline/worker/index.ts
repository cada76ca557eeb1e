import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { Config, Secrets } from '../../core/foundation/config.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import type { Logger } from '../../core/foundation/log.ts';
import { assertRedisReachable, handlerRegistry, startQueueWorker, type AnyJobHandler } from '../../core/queue/index.ts';
import { workerHandlers } from './handlers.ts';

export { workerHandlers } from './handlers.ts';

export interface RunWorkerOptions {
  config: Config;
  /** The worker's own credentials (a re-extraction's sources): jobs carry none. */
  secrets: Secrets;
  log: Logger;
  /**
   * Aborted on SIGINT/SIGTERM/SIGHUP: take no more jobs, stop the running ones (their containers are
   * removed; they are retried on a worker), remove the warm containers, return.
   */
  signal: AbortSignal;
  handlers?: readonly AnyJobHandler[];
}

/** `foresight worker`: run jobs from the queue at config.queue.url until stopped. */
export async function runWorker(opts: RunWorkerOptions): Promise<void> {
  const { config, log } = opts;
  const url = config.queue.url;
  if (!url) {
    throw new ForesightError('foresight worker needs a queue', { remedy: 'pass --queue redis://HOST:PORT (or set FORESIGHT_QUEUE): the Redis the coordinator uses' });
  }
  const name = `${hostname()}:${process.pid}`;
  const handlers = handlerRegistry(opts.handlers ?? workerHandlers({ config, secrets: opts.secrets }));
  const dataDir = resolve(config.data);
  // Checked before anything is written: a worker that cannot start leaves no folder behind.
  await assertRedisReachable(url);
  // The worker's own record, from its first job on (a remote host's log is where a failed job's story is).
  log.toFile(join(dataDir, 'worker', `${name.replace(/[^\w.-]/g, '_')}.log`));
  const lockDurationMs = config.queue.lockSec * 1000;
  const worker = await startQueueWorker({ url, handlers, concurrency: config.queue.concurrency, dataDir, log, name, lockDurationMs, stalledIntervalMs: Math.min(30_000, lockDurationMs) });
  log.info(`worker ${worker.name}: taking ${[...handlers.keys()].join(', ')} jobs from ${url} (${config.queue.concurrency} at once)`);
  if (!opts.signal.aborted) await new Promise((done) => opts.signal.addEventListener('abort', done, { once: true }));
  log.info(`worker ${worker.name}: stopping: the running jobs stop (they run again on a worker) and this worker's containers are removed`);
  // A job is stopped with the worker, not waited for (minutes): its signal aborts, it unwinds at once and goes
  // back to the queue with no attempt used up; then the shared resources go (the warm containers).
  await worker.close(true);
  log.info(`worker ${worker.name}: stopped`);
}
