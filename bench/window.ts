/** What the validate benchmarks share: a repository window mined up to extract, once, offline. */
import { join, resolve } from 'node:path';
import { loadConfig } from '../core/foundation/config.ts';
import { createLogger, type Logger } from '../core/foundation/log.ts';
import { makeDemoRepo } from '../pipeline/demo/make-demo-repo.ts';
import { runPipeline } from '../pipeline/pipeline.ts';

export interface BenchWindow {
  repo: string;
  clone: string;
  dataRoot: string;
  log: Logger;
  /** The environment every pass loads its configuration from (offline, the window). */
  env: NodeJS.ProcessEnv;
}

/**
 * The clone given (else the generated demo in `work`/demo), mined up to extract into `work`/data: every
 * pass of a benchmark then validates the same chains.
 */
export async function mineWindow(opts: { work: string; clone?: string; repo?: string; since?: string; until?: string; env?: NodeJS.ProcessEnv }): Promise<BenchWindow> {
  const clone = opts.clone ? resolve(opts.clone) : join(opts.work, 'demo');
  if (!opts.clone) await makeDemoRepo(clone);
  const dataRoot = join(opts.work, 'data');
  const repo = opts.repo ?? (opts.clone ? 'bench/repo' : 'demo/minilib');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FORESIGHT_OFFLINE: '1',
    ...opts.env,
    ...(opts.since ? { FORESIGHT_SINCE: opts.since } : {}),
    ...(opts.until ? { FORESIGHT_UNTIL: opts.until } : {}),
  };
  const log = createLogger({ level: 'warn' });
  for (const only of ['discover', 'szz', 'extract'] as const) await runPipeline({ dataRoot, repo: { name: repo, clone }, log, config: loadConfig(env), only });
  return { repo, clone, dataRoot, log, env };
}
