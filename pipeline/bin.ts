#!/usr/bin/env -S npx tsx
import { Command, Option } from 'commander';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeDemoRepo } from './demo/make-demo-repo.ts';
import { repoDataDir } from '../core/artifacts.ts';
import { ensureClone } from './clone.ts';
import { loadConfig } from '../core/config.ts';
import { errorMessage, ForesightError } from '../core/errors.ts';
import { createLogger } from '../core/log.ts';
import { parseStage, runPipeline } from './pipeline.ts';
import { STAGES, type StageName } from '../core/stage.ts';
import { summarize } from './summary.ts';
import { evaluateSzz, formatScores, readOracle, type SzzVariant } from '../stages/szz/index.ts';
import { FORESIGHT_VERSION } from '../core/version.ts';

export const DEMO_REPO = 'demo/minilib';

interface CommonOpts {
  repo: string;
  since?: string;
  until?: string;
  offline?: boolean;
  jobs?: string;
  runs?: string;
  clone?: string;
  data: string;
  force?: boolean;
  verbose?: boolean;
  quiet?: boolean;
}

function repoName(name: string): string {
  if (!/^[\w.-]+\/[\w.-]+$/.test(name)) {
    throw new ForesightError(`"${name}" is not a repository name`, { remedy: 'pass --repo owner/name, e.g. --repo django/django' });
  }
  return name;
}

async function execute(opts: CommonOpts, part: { from?: StageName; only?: StageName }): Promise<void> {
  const log = createLogger({ level: opts.verbose ? 'debug' : 'info', quiet: opts.quiet });
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort(new ForesightError('interrupted', { remedy: 'rerun the same command: finished items are kept' })));
  const dataRoot = resolve(opts.data);
  const name = repoName(opts.repo);
  const repo = { name, clone: await ensureClone({ repo: name, dataRoot, explicit: opts.clone, log }) };
  // Flags override the environment's FORESIGHT_* settings.
  const env = { ...process.env, ...(opts.jobs ? { FORESIGHT_JOBS: opts.jobs } : {}), ...(opts.runs ? { FORESIGHT_RUNS: opts.runs } : {}),
    ...(opts.since ? { FORESIGHT_SINCE: opts.since } : {}), ...(opts.until ? { FORESIGHT_UNTIL: opts.until } : {}),
    ...(opts.offline ? { FORESIGHT_OFFLINE: '1' } : {}) };
  const results = await runPipeline({ dataRoot, repo, config: loadConfig(env), log, ...part, force: opts.force, signal: abort.signal });
  if (results.every((r) => r.outcome === 'up-to-date')) log.info('nothing to do: every stage is up to date');
  if (results.some((r) => r.stage === 'emit')) process.stdout.write((await summarize(dataRoot, repo.name)) + '\n');
}

function withCommon(cmd: Command, repoRequired = true): Command {
  const repo = new Option('--repo <owner/name>', 'repository to mine');
  if (repoRequired) repo.makeOptionMandatory();
  return cmd
    .addOption(repo)
    .option('--clone <path>', 'local clone to read (default: data/<owner>__<name>/clone, cloned on first use)')
    .option('--data <dir>', 'artifact root', process.env.FORESIGHT_DATA ?? 'data')
    .option('--force', 'rerun even when inputs are unchanged')
    .option('--since <date>', 'only fixes merged on or after this date (FORESIGHT_SINCE)')
    .option('--until <date>', 'only fixes merged before this date (FORESIGHT_UNTIL)')
    .option('--offline', 'git history only: no GitHub, Trac or advisory requests (FORESIGHT_OFFLINE=1)')
    .option('--jobs <n>', 'chains validated at once (FORESIGHT_JOBS)')
    .option('--runs <n>', 'repetitions of each test state, for flakiness (FORESIGHT_RUNS)')
    .option('-v, --verbose', 'debug output on the terminal')
    .option('-q, --quiet', 'no output on the terminal (the log file still gets everything)');
}

export function buildCli(): Command {
  const program = new Command('foresight').description('Mine PR1 -> PR2 fix-chains into an anticipation benchmark').version(FORESIGHT_VERSION);
  withCommon(program.command('run').description('run the pipeline; each stage skips itself when its inputs are unchanged'))
    .option('--from <stage>', `rerun this stage and the ones after it on cached artifacts (${STAGES.join(', ')})`)
    .option('--only <stage>', 'run just this stage')
    .action(async (o: CommonOpts & { from?: string; only?: string }) =>
      execute(o, { from: o.from ? parseStage(o.from) : undefined, only: o.only ? parseStage(o.only) : undefined }),
    );
  for (const stage of STAGES) {
    withCommon(program.command(stage).description(`run only the ${stage} stage`)).action(async (o: CommonOpts) => execute(o, { only: stage }));
  }
  withCommon(program.command('demo').description('generate the bundled demo repository and mine it end to end'), false).action(async (o: CommonOpts) => {
    // The demo is generated here: no service knows it, whatever tokens the environment holds.
    const opts = { ...o, repo: o.repo ?? DEMO_REPO, offline: true };
    const clone = join(repoDataDir(resolve(opts.data), opts.repo), 'clone');
    if (!opts.clone && !existsSync(clone)) {
      const { head } = await makeDemoRepo(clone);
      process.stderr.write(`generated the demo repository at ${clone} (head ${head.slice(0, 12)})\n`);
    }
    await execute(opts, {});
  });
  program
    .command('szz-eval')
    .description('score SZZ on an oracle of fixes with known inducing commits (JSONL {fix, inducing[]}); fix messages are never read')
    .requiredOption('--clone <path>', 'local clone holding the fixes')
    .requiredOption('--oracle <file>', 'JSONL oracle, e.g. from scripts/build-szz-oracle.ts')
    .option('--variant <name>', 'b-szz, foresight or both', 'both')
    .option('--limit <n>', 'only the first N fixes', (v) => Number(v))
    .option('--concurrency <n>', 'blame jobs at once', (v) => Number(v), 2)
    .action(async (o: { clone: string; oracle: string; variant: string; limit?: number; concurrency: number }) => {
      const variants: SzzVariant[] = o.variant === 'both' ? ['b-szz', 'foresight'] : [o.variant as SzzVariant];
      if (!variants.every((v) => v === 'b-szz' || v === 'foresight')) {
        throw new ForesightError(`unknown SZZ variant "${o.variant}"`, { remedy: 'use b-szz, foresight or both' });
      }
      const oracle = (await readOracle(o.oracle)).slice(0, o.limit);
      const log = createLogger({});
      const results = [];
      for (const variant of variants) {
        results.push(await evaluateSzz({ clone: resolve(o.clone), oracle, variant, concurrency: o.concurrency, onProgress: (d, t) => log.progress(variant, d, t) }));
      }
      process.stdout.write(formatScores(results) + '\n');
    });
  withCommon(program.command('summary').description('print the emitted chains')).action(async (o: CommonOpts) => {
    process.stdout.write((await summarize(resolve(o.data), repoName(o.repo))) + '\n');
  });
  return program;
}

try {
  await buildCli().parseAsync(process.argv);
} catch (err) {
  process.stderr.write(`foresight: ${errorMessage(err)}\n`);
  if (process.env.FORESIGHT_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
  process.exitCode = err instanceof ForesightError ? 1 : 2;
}
