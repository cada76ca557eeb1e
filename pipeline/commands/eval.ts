import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseIsoDate, type Flags } from '../../core/foundation/config.ts';
import { assertDockerReachable, connectDocker, removeStaleContainers } from '../../core/env/index.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { createLogger } from '../../core/foundation/log.ts';
import { formatReport, gradeLimits, runEval, type Split } from '../eval/index.ts';
import { abortOnSignals } from '../signals.ts';
import { exitState, settings } from './shared.ts';

export interface EvalOpts extends Flags {
  dataset: string;
  predictions?: string;
  gold?: boolean;
  split: Split;
  out?: string;
  /** An ISO date: grade only the rows whose PR1 merged on or after it. */
  mergedAfter?: string;
}

/** `foresight eval`: grade predictions (or the gold patches) on an emitted dataset, print the table; exit 0 when it ran. */
export async function evaluate(opts: EvalOpts): Promise<void> {
  if (Boolean(opts.predictions) === Boolean(opts.gold)) {
    throw new ForesightError('eval needs exactly one of --predictions <file> and --gold', {
      remedy: 'pass --predictions preds.jsonl (SWE-bench format) to grade an agent, or --gold to grade each row\'s own patch',
    });
  }
  // Checked before Docker is reached: a bad date costs nothing.
  const mergedAfter = opts.mergedAfter === undefined ? null : parseIsoDate({ name: '--merged-after', flag: true }, opts.mergedAfter);
  const { config } = settings('eval', opts);
  const log = createLogger(config.log);
  const dataset = resolve(opts.dataset);
  if (!existsSync(dataset) || !statSync(dataset).isDirectory()) {
    throw new ForesightError(`--dataset ${opts.dataset} is not a folder`, { remedy: 'pass the emitted dataset folder (data/<owner>__<name>/emit/hf)' });
  }
  const docker = connectDocker(config.docker.host);
  await assertDockerReachable(docker);
  const stale = await removeStaleContainers(docker);
  if (stale.length) log.info(`removed ${stale.length} container(s) left by a killed run`);
  const cfg = config.validate;
  const owner = abortOnSignals({ docker, log, onSignal: (sig) => log.warn(`${sig}: stopping; live containers are removed, graded instances are kept`) });
  try {
    const res = await runEval({
      dataset,
      split: opts.split,
      predictions: opts.gold ? 'gold' : { path: resolve(opts.predictions!) },
      jobs: cfg.jobs,
      out: opts.out ?? null,
      mergedAfter,
      docker,
      limits: gradeLimits(cfg),
      log,
      signal: owner.signal,
    });
    log.info(`graded ${res.graded}, reused ${res.reused} from the checkpoint; report: ${res.reportPath}`);
    process.stdout.write(formatReport(res.report) + '\n');
  } catch (err) {
    exitState.signal = owner.exitCode();
    throw owner.signal.aborted ? owner.signal.reason : err;
  } finally {
    await owner.close();
  }
}
