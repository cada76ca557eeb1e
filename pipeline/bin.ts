#!/usr/bin/env -S npx tsx
import { Command, InvalidArgumentError, Option } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { readdir, rmdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { repoDataDir } from '../core/artifacts.ts';
import { loadConfig, loadSecrets, processEnv, type Config, type Flags } from '../core/config.ts';
import { errorMessage, ForesightError } from '../core/errors.ts';
import { enableGitProfile } from '../core/git.ts';
import { createLogger } from '../core/log.ts';
import { redact } from '../core/secrets.ts';
import { STAGES, type StageName } from '../core/stage.ts';
import { FORESIGHT_VERSION } from '../core/version.ts';
import { evaluateSzz, formatScores, readOracle, type SzzVariant } from '../stages/szz/index.ts';
import { ensureClone } from './clone.ts';
import { assertDockerReachable, connectDocker, removeStaleContainers } from '../core/env/index.ts';
import { formatReport, gradeLimits, runEval, SPLITS, type Split } from './eval/index.ts';
import { makeDemoRepo } from './demo/make-demo-repo.ts';
import { parseStage, runPipeline } from './pipeline.ts';
import { pushImages } from './push-images.ts';
import { abortOnSignals } from './signals.ts';
import { summarize } from './summary.ts';

export const DEMO_REPO = 'demo/minilib';

interface CommonOpts extends Flags {
  repo: string;
  clone?: string;
  force?: boolean;
  from?: string;
  only?: string;
}

/** The exit code of the signal that stopped the run (130 SIGINT, 143 SIGTERM), when one did. */
let signalExit: number | null = null;

function repoName(name: string): string {
  if (!/^[\w.][\w.-]*\/[\w.][\w.-]*$/.test(name)) {
    throw new ForesightError(`--repo ${name} is not a repository name`, { remedy: 'pass --repo owner/name, e.g. --repo django/django' });
  }
  return name;
}

/** The artifact root: a folder (created on demand), never a file. */
function dataRootOf(config: Config): string {
  const root = resolve(config.data);
  if (existsSync(root) && !statSync(root).isDirectory()) {
    throw new ForesightError(`--data ${config.data} is a file, not a folder`, { remedy: 'pass --data <a folder> (FORESIGHT_DATA); it is created when missing' });
  }
  return root;
}

/** Remove `dir` and then its parents up to (and including) `stop` while they are empty: a failed run leaves no empty folders. */
async function removeEmpty(dir: string, stop: string): Promise<void> {
  for (let d = dir; d.startsWith(stop); d = resolve(d, '..')) {
    const entries = await readdir(d).catch(() => null);
    if (entries === null || entries.length > 0) return;
    await rmdir(d).catch(() => undefined);
    if (d === stop) return;
  }
}

function settings(opts: CommonOpts): { config: Config; secrets: ReturnType<typeof loadSecrets> } {
  const config = loadConfig(processEnv(), opts);
  const secrets = loadSecrets(processEnv());
  if (config.debug.profileGit) enableGitProfile();
  return { config, secrets };
}

async function execute(opts: CommonOpts, part: { from?: StageName; only?: StageName; push?: true }): Promise<void> {
  const { config, secrets } = settings(opts);
  const log = createLogger({ level: config.log.level, quiet: config.log.quiet });
  const dataRoot = dataRootOf(config);
  const name = repoName(opts.repo);
  const existed = { root: existsSync(dataRoot), repo: existsSync(repoDataDir(dataRoot, name)) };
  const owner = abortOnSignals({ onSignal: (sig) => log.warn(`${sig}: stopping; live containers are removed, finished items are kept`) });
  try {
    const clone = await ensureClone({ repo: name, dataRoot, explicit: opts.clone, log, gitUrl: config.clone.gitUrl, credentials: secrets.gitUrlCredentials, offline: config.discover.offline });
    const repo = { name, clone };
    const run = { dataRoot, repo, config, secrets, log, signal: owner.signal };
    const results = part.push ? [await pushImages(run)] : await runPipeline({ ...run, ...part, force: opts.force });
    if (results.every((r) => r.outcome === 'up-to-date')) log.info('nothing to do: every stage is up to date');
    if (results.some((r) => r.stage === 'emit')) process.stdout.write((await summarize(dataRoot, repo.name)) + '\n');
  } catch (err) {
    if (!existed.repo) await removeEmpty(repoDataDir(dataRoot, name), existed.root ? repoDataDir(dataRoot, name) : dataRoot);
    signalExit = owner.exitCode();
    // Whatever the unwinding threw, an interrupted run says so (and how to resume).
    throw owner.signal.aborted ? owner.signal.reason : err;
  } finally {
    owner.dispose();
  }
}

interface EvalOpts extends Flags {
  dataset: string;
  predictions?: string;
  gold?: boolean;
  split: Split;
  out?: string;
}

/** `foresight eval`: grade predictions (or the gold patches) on an emitted dataset, print the table; exit 0 when it ran. */
async function evaluate(opts: EvalOpts): Promise<void> {
  if (Boolean(opts.predictions) === Boolean(opts.gold)) {
    throw new ForesightError('eval needs exactly one of --predictions <file> and --gold', {
      remedy: 'pass --predictions preds.jsonl (SWE-bench format) to grade an agent, or --gold to grade each row\'s own patch',
    });
  }
  const config = loadConfig(processEnv(), { jobs: opts.jobs, verbose: opts.verbose, quiet: opts.quiet });
  const log = createLogger({ level: config.log.level, quiet: config.log.quiet });
  const dataset = resolve(opts.dataset);
  if (!existsSync(dataset) || !statSync(dataset).isDirectory()) {
    throw new ForesightError(`--dataset ${opts.dataset} is not a folder`, { remedy: 'pass the emitted dataset folder (data/<owner>__<name>/emit/hf)' });
  }
  const docker = connectDocker(config.docker.host);
  await assertDockerReachable(docker);
  const stale = await removeStaleContainers(docker);
  if (stale.length) log.info(`removed ${stale.length} container(s) left by a killed run`);
  const cfg = config.validate;
  const owner = abortOnSignals({ onSignal: (sig) => log.warn(`${sig}: stopping; live containers are removed, graded instances are kept`) });
  try {
    const res = await runEval({
      dataset,
      split: opts.split,
      predictions: opts.gold ? 'gold' : { path: resolve(opts.predictions!) },
      jobs: cfg.jobs,
      out: opts.out ?? null,
      docker,
      limits: gradeLimits(cfg),
      log,
      signal: owner.signal,
    });
    log.info(`graded ${res.graded}, reused ${res.reused} from the checkpoint; report: ${res.reportPath}`);
    process.stdout.write(formatReport(res.report) + '\n');
  } catch (err) {
    signalExit = owner.exitCode();
    throw owner.signal.aborted ? owner.signal.reason : err;
  } finally {
    owner.dispose();
  }
}

function stageOf(): (v: string) => StageName {
  return (v) => {
    try {
      return parseStage(v);
    } catch {
      throw new InvalidArgumentError(`use one of: ${STAGES.join(', ')}`);
    }
  };
}

function wholeNumber(min: number): (v: string) => number {
  return (v) => {
    const n = /^\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected a whole number ≥ ${min}`);
    return n;
  };
}

function withCommon(cmd: Command, repoRequired = true): Command {
  const repo = new Option('--repo <owner/name>', 'repository to mine');
  if (repoRequired) repo.makeOptionMandatory();
  return cmd
    .addOption(repo)
    .option('--clone <path>', 'local clone to read (default: data/<owner>__<name>/clone, cloned on first use)')
    .option('--data <dir>', 'artifact root (default: FORESIGHT_DATA or data)')
    .option('--force', 'rerun even when inputs are unchanged')
    .option('--since <date>', 'only fixes merged on or after this ISO date (FORESIGHT_SINCE)')
    .option('--until <date>', 'only fixes merged before this ISO date (FORESIGHT_UNTIL)')
    .option('--offline', 'git history only: no GitHub, Trac or advisory requests, no cloning (FORESIGHT_OFFLINE=1)')
    .option('--jobs <n>', 'chains validated at once (FORESIGHT_JOBS)')
    .option('--runs <n>', 'repetitions of each test state, for flakiness (FORESIGHT_RUNS)')
    .option('-v, --verbose', 'debug output on the terminal')
    .option('-q, --quiet', 'no output on the terminal (the log file still gets everything)');
}

export function buildCli(): Command {
  const program = new Command('foresight').description('Mine PR1 -> PR2 fix-chains into an anticipation benchmark').version(FORESIGHT_VERSION);
  withCommon(program.command('run').description('run the pipeline; each stage skips itself when its inputs are unchanged'))
    .addOption(new Option('--from <stage>', `rerun this stage and the ones after it on cached artifacts (${STAGES.join(', ')})`).argParser(stageOf()).conflicts('only'))
    .addOption(new Option('--only <stage>', 'run just this stage').argParser(stageOf()))
    .action(async (o: CommonOpts & { from?: StageName; only?: StageName }) => execute(o, { from: o.from, only: o.only }));
  for (const stage of STAGES) {
    withCommon(program.command(stage).description(`run only the ${stage} stage`)).action(async (o: CommonOpts) => execute(o, { only: stage }));
  }
  withCommon(program.command('demo').description('generate the bundled demo repository and mine it end to end'), false).action(async (o: CommonOpts) => {
    // The demo is generated here: no service knows it, whatever tokens the environment holds.
    const opts = { ...o, repo: o.repo ?? DEMO_REPO, offline: true };
    const { config } = settings(opts);
    const clone = join(repoDataDir(dataRootOf(config), opts.repo), 'clone');
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
    .addOption(new Option('--variant <name>', 'which SZZ to score').choices(['b-szz', 'foresight', 'both']).default('both'))
    .option('--limit <n>', 'only the first N fixes', wholeNumber(1))
    .option('--concurrency <n>', 'blame jobs at once', wholeNumber(1), 2)
    .action(async (o: { clone: string; oracle: string; variant: string; limit?: number; concurrency: number }) => {
      const variants: SzzVariant[] = o.variant === 'both' ? ['b-szz', 'foresight'] : [o.variant as SzzVariant];
      const oracle = (await readOracle(o.oracle)).slice(0, o.limit);
      const log = createLogger({});
      const results = [];
      for (const variant of variants) {
        results.push(await evaluateSzz({ clone: resolve(o.clone), oracle, variant, concurrency: o.concurrency, onProgress: (d, t) => log.progress(variant, d, t) }));
      }
      process.stdout.write(formatScores(results) + '\n');
    });
  program
    .command('eval')
    .description('grade predictions (or the gold patches) in each row\'s eval image: X, Y and gap = X - Y per instance and on average')
    .requiredOption('--dataset <dir>', 'the emitted dataset folder (holds jsonl/<split>.jsonl)')
    .option('--predictions <file>', 'predictions in the SWE-bench JSONL format (instance_id, model_name_or_path, model_patch)')
    .option('--gold', "grade each row's own patch (PR1's source diff): X must be 100%, Y 0%")
    .addOption(new Option('--split <name>', 'which rows to grade (verified: its gradeable rows)').choices(SPLITS).default('test'))
    .option('--jobs <n>', 'instances graded at once (FORESIGHT_JOBS)')
    .option('--out <file>', 'where the JSON report goes (default <dataset>/eval/<run>/report.json)')
    .option('-v, --verbose', 'debug output on the terminal')
    .option('-q, --quiet', 'no output on the terminal but the table')
    .action(async (o: EvalOpts) => evaluate(o));
  withCommon(program.command('push-images').description("push the eval images to a registry and name the pushed references in the emitted rows (reruns emit)"))
    .option('--registry <host[:port]/namespace>', 'where the images go, e.g. 127.0.0.1:5000/foresight (FORESIGHT_REGISTRY)')
    .action(async (o: CommonOpts) => execute(o, { push: true }));
  withCommon(program.command('summary').description('print the emitted chains')).action(async (o: CommonOpts) => {
    const { config } = settings(o);
    process.stdout.write((await summarize(dataRootOf(config), repoName(o.repo))) + '\n');
  });
  // <publish command: owned by pipeline/publish>
  // </publish command>
  // <report command: owned by pipeline/report>
  // </report command>
  return program;
}

try {
  await buildCli().parseAsync(process.argv);
} catch (err) {
  // Error text leaves the process: never with a credential in it (a git URL, an echoed key).
  process.stderr.write(`foresight: ${redact(errorMessage(err))}\n`);
  if (processEnv().FORESIGHT_DEBUG && err instanceof Error) process.stderr.write(`${redact(err.stack ?? '')}\n`);
  process.exitCode = signalExit ?? (err instanceof ForesightError ? 1 : 2);
}
