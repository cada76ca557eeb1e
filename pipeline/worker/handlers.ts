import type { Config, Secrets } from '../../core/foundation/config.ts';
import { probeHandler, type AnyJobHandler } from '../../core/queue/index.ts';
import { validateChainHandler } from '../../stages/validate/index.ts';

/**
 * Every job kind `foresight worker` runs, one handler each (core/queue registers them by kind name), built
 * with the worker's own configuration (its Docker, its image settings) and credentials (never a job's).
 */
export function workerHandlers(local: { config: Config; secrets: Secrets }): AnyJobHandler[] {
  return [probeHandler, validateChainHandler(local)];
}
