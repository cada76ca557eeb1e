/**
 * Where container work runs: in this process (the default), or as BullMQ jobs on Redis pulled by
 * `foresight worker` processes on any Docker host. A stage opens its queue with openWorkQueue, submits items
 * (kind, content key, JSON payload) and gets results; handlers, keyed by kind, do the work. README.md in
 * this folder has the semantics.
 */
export type { ItemProgress, JobContext, JobHandler, JobKind, JobProgress, SubmitOptions, WorkQueue } from './types.ts';
export { InfraError, JobFailedError, type JobFailureReason } from './errors.ts';
export { DEFAULT_RETRY, type RetryPolicy } from './backoff.ts';
export { defineJobKind, handlerRegistry, type AnyJobHandler, type HandlerRegistry } from './registry.ts';
export { inProcessQueue, type InProcessQueueOptions } from './in-process.ts';
export { openWorkQueue, type OpenWorkQueueOptions } from './open.ts';
export { redisQueue, QUEUE_NAME, type RedisQueueOptions } from './redis-queue.ts';
export { startQueueWorker, type QueueWorker, type QueueWorkerOptions } from './redis-worker.ts';
export { assertRedisReachable } from './reachable.ts';
export { redisUrlProblem } from '../foundation/config-values.ts';
export { probeHandler, probeKind } from './probe.ts';
export { SharedResources } from './shared.ts';
