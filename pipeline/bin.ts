#!/usr/bin/env -S npx tsx
import { Command, Option } from 'commander';
import { errorMessage, ForesightError } from '../core/foundation/errors.ts';
import { stopProgressBars } from '../core/foundation/progress.ts';
import { processEnv, type Flags } from '../core/foundation/config.ts';
import { redact } from '../core/foundation/secrets.ts';
import { STAGES, type StageName } from '../core/foundation/stage.ts';
import { FORESIGHT_VERSION } from '../core/foundation/version.ts';
import { SPLITS } from './eval/index.ts';
import { runDemo } from './commands/demo.ts';
import { evaluate, type EvalOpts } from './commands/eval.ts';
import { ROOT_HELP } from './commands/help.ts';
import { publishCommand } from './commands/publish.ts';
import { recheckCommand, type RecheckOpts } from './commands/recheck.ts';
import { reportCommand } from './commands/report.ts';
import { execute } from './commands/run.ts';
import { exitState, wholeNumber, wholeNumberText, type CommonOpts } from './commands/shared.ts';
import { stagesCommand, summaryCommand } from './commands/stages.ts';
import { szzEval, type SzzEvalOpts } from './commands/szz-eval.ts';
import { workerCommand } from './commands/worker.ts';

export { DEMO_REPO } from './commands/shared.ts';

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
    .option('--jobs <n>', 'chains validated at once (FORESIGHT_JOBS)', wholeNumberText(1))
    .option('--runs <n>', 'repetitions of each test state, for flakiness (FORESIGHT_RUNS)', wholeNumberText(1))
    .option('--queue <redis://host:port>', 'validate chains on `foresight worker`s taking jobs from this Redis (FORESIGHT_QUEUE)')
    .option('-v, --verbose', 'debug output on the terminal')
    .option('-q, --quiet', 'no output on the terminal (the log file still gets everything)');
}

export function buildCli(): Command {
  const program = new Command('foresight')
    .description('Mine PR1 -> PR2 fix-chains into an anticipation benchmark')
    .version(FORESIGHT_VERSION)
    .addHelpText('after', ROOT_HELP);
  withCommon(program.command('run').description('run the pipeline; each stage skips itself when its inputs are unchanged'))
    .addOption(new Option('--from <stage>', 'rerun this stage and the ones after it on cached artifacts').choices(STAGES).conflicts('only'))
    .addOption(new Option('--only <stage>', 'run just this stage').choices(STAGES))
    .addHelpText(
      'after',
      `
Examples:
  $ foresight run --repo encode/starlette
      every stage; a stage whose inputs are unchanged skips itself
  $ foresight run --repo encode/starlette --from validate --jobs 4
      rerun validate, judge and emit on the cached artifacts, four chains at once
  $ foresight run --repo django/django --clone ~/src/django --since 2023-01-01 --until 2025-01-01
      fixes merged in a window, from a local clone
  $ foresight run --repo django/django --clone /srv/django --queue redis://10.0.0.5:6379
      validate on the workers of that queue (foresight worker --queue redis://10.0.0.5:6379 on each host)`,
    )
    .action(async (o: CommonOpts & { from?: StageName; only?: StageName }) => execute(o, { from: o.from, only: o.only }));
  for (const stage of STAGES) {
    withCommon(program.command(stage).description(`run only the ${stage} stage`)).action(async (o: CommonOpts) => execute(o, { only: stage }));
  }
  withCommon(program.command('demo').description('generate the bundled demo repository and mine it end to end'), false).action(async (o: CommonOpts) => runDemo(o));
  program
    .command('szz-eval')
    .description('score SZZ on an oracle of fixes with known inducing commits (JSONL {fix, inducing[]}); fix messages are never read')
    .requiredOption('--clone <path>', 'local clone holding the fixes')
    .requiredOption('--oracle <file>', 'JSONL oracle, e.g. from scripts/build-szz-oracle.ts')
    .addOption(new Option('--variant <name>', 'which SZZ to score').choices(['b-szz', 'foresight', 'both']).default('both'))
    .option('--limit <n>', 'only the first N fixes', wholeNumber(1))
    .option('--concurrency <n>', 'blame jobs at once', wholeNumber(1), 2)
    .option('--since <date>', "only fixes committed on or after this ISO date (FORESIGHT_SINCE)")
    .option('--until <date>', 'only fixes committed before this ISO date (FORESIGHT_UNTIL)')
    .option('--execute', "also run each fix's tests (at its parent they must fail, at the fix pass) and bisect them in Docker, bounded by blame's candidates: F1 of blame alone and of blame + execution on the fixes whose tests run here")
    .option('--ceiling', "with --execute: probe each fix's tests only at the oracle's commit's parent and at the commit, not blame's candidates: whether execution can name it at all (an upper figure for the search; checkpoints in szz-eval/ceiling/)")
    .option('--repo <owner/name>', 'with --execute: the repository, whose recipe builds the environments (e.g. django/django)')
    .option('--data <dir>', 'with --execute: artifact root; per-fix checkpoints go to <data>/<owner>__<name>/szz-eval/ (default: FORESIGHT_DATA or data)')
    .option('--jobs <n>', 'with --execute: fixes run at once (FORESIGHT_JOBS; default 1)', wholeNumberText(1))
    .option('-v, --verbose', 'debug output on the terminal')
    .option('-q, --quiet', 'no output on the terminal but the table')
    .addHelpText('after', '\nExample:\n  $ FORESIGHT_ENV_KEEP=500 foresight szz-eval --execute --repo django/django --clone /tmp/django --oracle /tmp/h3-held.jsonl --limit 5\n      blame alone vs blame + execution on the first 5 fixes whose tests run here; a rerun reads the checkpoints')
    .action(async (o: SzzEvalOpts) => szzEval(o));
  program
    .command('eval')
    .description('grade predictions (or the gold patches) in each row\'s eval image: X, Y and gap = X - Y per instance and on average')
    .requiredOption('--dataset <dir>', 'the emitted dataset folder (holds jsonl/<split>.jsonl)')
    .option('--predictions <file>', 'predictions in the SWE-bench JSONL format (instance_id, model_name_or_path, model_patch)')
    .option('--gold', "grade each row's own patch (PR1's source diff): X must be 100%, Y 0%")
    .addOption(new Option('--split <name>', 'which rows to grade (verified: its gradeable rows)').choices(SPLITS).default('test'))
    .option('--jobs <n>', 'instances graded at once (FORESIGHT_JOBS)', wholeNumberText(1))
    .option('--out <file>', 'where the JSON report goes (default <dataset>/eval/<run>/report.json)')
    .option('-v, --verbose', 'debug output on the terminal')
    .option('-q, --quiet', 'no output on the terminal but the table')
    .action(async (o: EvalOpts) => evaluate(o));
  withCommon(program.command('push-images').description("push the eval images to a registry and name the pushed references in the emitted rows (reruns emit)"))
    .option('--registry <host[:port]/namespace>', 'where the images go, e.g. 127.0.0.1:5000/foresight (FORESIGHT_REGISTRY)')
    .action(async (o: CommonOpts) => execute(o, { push: true }));
  withCommon(program.command('summary').description('print the emitted chains')).action(async (o: CommonOpts) => summaryCommand(o));
  withCommon(program.command('recheck').description("validate stored chains again from scratch (their PR1 as stored, no checkpoint) and report whether each one's sets and exclusion hold; exit 1 when any differs"))
    .option('--ids <id,...>', 'these instance ids (default: the rows of the emitted test split)')
    .option('--all', 'every chain validate ran')
    .addHelpText('after', '\nExample:\n  $ foresight recheck --repo django/django --clone ~/src/django --offline\n      every row of test validated again; the report goes to data/django__django/recheck/report.jsonl')
    .action(async (o: RecheckOpts) => recheckCommand(o));
  program
    .command('stages')
    .description("list the stages in order with the fingerprint of each one's code, as its cache key holds it (the modules it runs, the files they read, the packages' versions)")
    .option('--files', "also list each stage's files and packages")
    .action(async (o: { files?: boolean }) => stagesCommand(o));
  // <publish command: owned by pipeline/publish>
  program
    .command('publish')
    .description('upload an emitted dataset to the Hugging Face hub in one commit, once the gate passes (gold self-check, loads with datasets, no secret)')
    .requiredOption('--repo-id <owner/name>', 'the dataset repository on the hub (created when missing)')
    .option('--dataset <dir>', 'the emitted dataset folder (data/<owner>__<name>/emit/hf)')
    .option('--repo <owner/name>', 'the mined repository whose emitted dataset goes up (instead of --dataset)')
    .option('--data <dir>', 'artifact root, with --repo (default: FORESIGHT_DATA or data)')
    .option('--private', 'create the repository private (an existing one keeps its visibility)')
    .option('--dry-run', 'print the exact operations (repository, files, sizes, LFS) and change nothing')
    .option('--revision <branch>', 'the branch to commit to', 'main')
    .option('-v, --verbose', 'debug output on the terminal')
    .option('-q, --quiet', 'no log lines on the terminal (the plan is still printed)')
    .addHelpText('after', '\nEnvironment: HF_TOKEN (write access; never printed), HF_ENDPOINT (default https://huggingface.co),\nFORESIGHT_PY_VENV (a venv with datasets; default .venv-test, made by scripts/setup-python.sh).\n\nExample:\n  foresight publish --repo-id my-org/foresight-minilib --dataset data/demo__minilib/emit/hf --dry-run')
    .action(async (o: import('./publish/index.ts').PublishCliOptions) => publishCommand(o));
  // </publish command>
  // <report command: owned by pipeline/report>
  program
    .command('report')
    .description('write one self-contained HTML page of an emitted dataset: funnel, plots, a filterable table of chains, per chain its diffs, commits, sets, states and verdicts')
    .requiredOption('--dataset <dir>', 'the emitted dataset folder (data/<owner>__<name>/emit/hf)')
    .option('--out <file>', 'where the page goes (default: report.html beside the dataset folder, so it is never published with it)')
    .addHelpText('after', '\nExample:\n  $ foresight report --dataset data/encode__starlette/emit/hf\n      writes data/encode__starlette/emit/report.html; open a chain with report.html#chain=<instance_id>')
    .action(async (o: { dataset: string; out?: string }) => reportCommand(o));
  // </report command>
  // <worker command: owned by pipeline/worker>
  program
    .command('worker')
    .description("run queued container work (validate's chains, with their bisection) from a Redis queue on this machine's Docker, until SIGINT/SIGTERM")
    .option('--queue <redis://host:port>', 'the Redis queue the coordinator uses (FORESIGHT_QUEUE)')
    .option('--concurrency <n>', 'jobs run at once (FORESIGHT_WORKER_CONCURRENCY; default 1)', wholeNumberText(1))
    .option('--data <dir>', "this worker's own data folder: clones, logs (default: FORESIGHT_DATA or data)")
    .option('-v, --verbose', 'debug output on the terminal')
    .option('-q, --quiet', 'no output on the terminal')
    .addHelpText('after', '\nExample:\n  $ foresight worker --queue redis://10.0.0.5:6379 --concurrency 2 --data /srv/foresight')
    .action(async (o: Flags) => workerCommand(o));
  // </worker command>
  return program;
}

try {
  await buildCli().parseAsync(process.argv);
} catch (err) {
  // The message starts on a clean line, not after a half-drawn bar.
  stopProgressBars();
  // Error text leaves the process: never with a credential in it (a git URL, an echoed key).
  process.stderr.write(`foresight: ${redact(errorMessage(err))}\n`);
  if (processEnv().FORESIGHT_DEBUG && err instanceof Error) process.stderr.write(`${redact(err.stack ?? '')}\n`);
  process.exitCode = exitState.signal ?? (err instanceof ForesightError ? 1 : 2);
}
