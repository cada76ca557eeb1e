import { probeHandler, type AnyJobHandler } from '../../core/queue/index.ts';

/**
 * Every job kind `foresight worker` runs, one handler each (core/queue registers them by kind name).
 * The stages' kinds (validate's chain, eval's instance, bisection) join this list as they are wired.
 */
export const WORKER_HANDLERS: readonly AnyJobHandler[] = [probeHandler];
