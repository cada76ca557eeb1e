import { resolve } from 'node:path';
import { connectDocker } from '../../core/env/index.ts';
import { repoDataDir } from '../../core/foundation/artifacts.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { git } from '../../core/foundation/git.ts';
import { commitToChange, listChanges } from '../../core/history/changes.ts';
import { createLogger } from '../../core/foundation/log.ts';
import { describeHorizon, ENOUGH, evaluateSzz, fitRepository, formatScores, MetaChanges, readOracle, type OracleEntry, type SzzVariant } from '../../stages/szz/index.ts';
import { abortOnSignals } from '../signals.ts';
import { executeOracle, formatExecuteReport } from '../szz-eval/execute.ts';
import { dataRootOf, exitState, repoName, settings } from './shared.ts';

export interface SzzEvalOpts {
  clone: string;
  oracle: string;
  variant: string;
  limit?: number;
  concurrency: number;
  /** Run the fixes' tests and bisect them (needs --repo for its recipe). */
  execute?: boolean;
  /** With execute: probe only at the oracle's commits (an upper figure for the search). */
  ceiling?: boolean;
  repo?: string;
  data?: string;
  since?: string;
  until?: string;
  jobs?: string;
  verbose?: boolean;
  quiet?: boolean;
}

/** `foresight szz-eval`: score SZZ variants on an oracle, print the table; with --execute, blame alone vs blame + execution. */
export async function szzEval(o: SzzEvalOpts): Promise<void> {
  if (o.ceiling && !o.execute) throw new ForesightError('szz-eval --ceiling needs --execute', { remedy: 'add --execute (the ceiling probes run the fixes\' tests in Docker)' });
  const clone = resolve(o.clone);
  const { config } = settings('szz-eval', o);
  const log = createLogger(config.log);
  const oracle = (await inWindow(clone, await readOracle(o.oracle), config.discover.since, config.discover.until)).slice(0, o.limit);
  if (!o.execute) {
    const variants: SzzVariant[] = o.variant === 'both' ? ['b-szz', 'foresight'] : [o.variant as SzzVariant];
    // Scored by commit and by change: a chain's PR1 is a change, so any commit of the inducing PR names it.
    const { changes } = await listChanges(clone, { branch: config.discover.branch, units: config.discover.units, tracker: config.discover.tracker });
    const changeOf = commitToChange(changes);
    // foresight blames within the horizon the szz stage would choose on this repository (cached with --repo).
    const fit = variants.includes('foresight')
      ? await fitRepository(clone, { meta: new MetaChanges(clone), cacheDir: o.repo ? repoDataDir(dataRootOf(config), repoName(o.repo)) : null, concurrency: o.concurrency, log })
      : null;
    const results = [];
    for (const variant of variants) {
      results.push(await evaluateSzz({ clone, oracle, variant, concurrency: o.concurrency, changeOf, horizon: fit?.horizon.horizon ?? null, onProgress: (d, t) => log.progress(variant, d, t) }));
    }
    process.stdout.write(formatScores(results) + '\n');
    if (fit) process.stdout.write(describeHorizon(fit.horizon) + '\n');
    const ranker = results.find((r) => r.ranker)?.ranker;
    if (ranker) {
      const f = (n: number | null): string => (n === null ? '-' : n.toFixed(3));
      const how =
        ranker.basis === 'own'
          ? "weights fitted on this oracle's other fixes (5 folds)"
          : ranker.basis === 'blame'
            ? `blame's top (the ranker needs ${ENOUGH} fixes with their inducer among the candidates and must score at least blame's top)`
            : 'weights fitted on a mix of repositories (rank.ts)';
      process.stdout.write(`szz: foresight predicts with ${how}; ${ranker.fixes} fixes usable; F1 ranker ${f(ranker.f1Own)}, blame's top ${f(ranker.f1Blame)}\n`);
    }
    return;
  }
  if (!o.repo) throw new ForesightError('szz-eval --execute needs --repo', { remedy: "pass --repo owner/name (its recipe shapes the tests' environment, e.g. --repo django/django)" });
  const repo = repoName(o.repo);
  const owner = abortOnSignals({ docker: connectDocker(config.docker.host), log, onSignal: (sig) => log.warn(`${sig}: stopping; live containers are removed, finished fixes are kept`) });
  try {
    const report = await executeOracle({ repo, clone, oracle, config, repoDir: repoDataDir(dataRootOf(config), repo), jobs: config.validate.jobs, log, signal: owner.signal, ceiling: o.ceiling === true });
    process.stdout.write(formatExecuteReport(report) + '\n');
  } catch (err) {
    exitState.signal = owner.exitCode();
    throw owner.signal.aborted ? owner.signal.reason : err;
  } finally {
    await owner.close();
  }
}

/** The entries whose fix was committed in [since, until) (ISO dates; either may be absent). */
async function inWindow(clone: string, oracle: OracleEntry[], since: string | null, until: string | null): Promise<OracleEntry[]> {
  if (!since && !until) return oracle;
  const out: OracleEntry[] = [];
  for (const e of oracle) {
    const at = Date.parse((await git(clone, ['log', '-1', '--format=%cI', '--end-of-options', e.fix])).trim());
    if ((!since || at >= Date.parse(since)) && (!until || at < Date.parse(until))) out.push(e);
  }
  return out;
}
