import { join } from 'node:path';
import { repoDataDir } from '../core/foundation/artifacts.ts';
import type { Config, Secrets } from '../core/foundation/config.ts';
import { ForesightError } from '../core/foundation/errors.ts';
import { assertFullClone } from '../core/foundation/git.ts';
import type { Logger } from '../core/foundation/log.ts';
import { STAGE_DEFS } from './registry.ts';
import { runStage, type StageResult } from './run-stage.ts';
import { STAGES, type RepoContext, type StageName } from '../core/foundation/stage.ts';

export interface RunPipelineOptions {
  dataRoot: string;
  repo: RepoContext;
  config: Config;
  secrets?: Secrets;
  log: Logger;
  /** Start here (forced), using the cached artifacts of earlier stages; later stages are forced too. */
  from?: StageName;
  /** Run only this stage (forced when `force`). */
  only?: StageName;
  force?: boolean;
  signal?: AbortSignal;
}

export function parseStage(name: string): StageName {
  if ((STAGES as readonly string[]).includes(name)) return name as StageName;
  throw new ForesightError(`unknown stage "${name}"`, { remedy: `use one of: ${STAGES.join(', ')}` });
}

/** The stages to run and whether each is forced. */
export function plan(opts: Pick<RunPipelineOptions, 'from' | 'only' | 'force'>): Array<{ stage: StageName; force: boolean }> {
  if (opts.only) return [{ stage: opts.only, force: opts.force ?? false }];
  const start = opts.from ? STAGES.indexOf(opts.from) : 0;
  // --from reruns that stage and everything after it, on the cached artifacts before it.
  return STAGES.slice(start).map((stage) => ({ stage, force: (opts.force ?? false) || opts.from !== undefined }));
}

export function logFile(dataRoot: string, repo: string): string {
  return join(repoDataDir(dataRoot, repo), 'foresight.log.jsonl');
}

/** Run the pipeline (or a part of it) for one repository; each stage skips itself when up to date. */
export async function runPipeline(opts: RunPipelineOptions): Promise<StageResult[]> {
  await assertFullClone(opts.repo.clone);
  opts.log.toFile(logFile(opts.dataRoot, opts.repo.name));
  const results: StageResult[] = [];
  for (const step of plan(opts)) {
    const def = STAGE_DEFS.get(step.stage)!;
    results.push(await runStage(def, { ...opts, force: step.force }));
  }
  return results;
}
