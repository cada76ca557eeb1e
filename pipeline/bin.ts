#!/usr/bin/env -S npx tsx
import { Command, InvalidArgumentError, Option } from 'commander';
import { existsSync, statSync } from 'node:fs';
import { readdir, rmdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { repoDataDir } from '../core/artifacts.ts';
import { codeClosure } from '../core/code-closure.ts';
import { loadConfig, loadSecrets, processEnv, type Config, type Flags } from '../core/config.ts';
import { errorMessage, ForesightError } from '../core/errors.ts';
import { enableGitProfile } from '../core/git.ts';
import { createLogger } from '../core/log.ts';
import { stopProgressBars } from '../core/progress.ts';
import { redact } from '../core/secrets.ts';
import { STAGES, type StageName } from '../core/stage.ts';
import { FORESIGHT_VERSION, PROJECT_ROOT } from '../core/version.ts';
import { evaluateSzz, formatScores, readOracle, type SzzVariant } from '../stages/szz/index.ts';
import { ensureClone } from './clone.ts';
import { assertDockerReachable, connectDocker, removeStaleContainers } from '../core/env/index.ts';
import { formatReport, gradeLimits, runEval, SPLITS, type Split } from './eval/index.ts';
import { makeDemoRepo } from './demo/make-demo-repo.ts';
import { runPipeline } from './pipeline.ts';
import { pushImages } from './push-images.ts';
import { STAGE_DEFS } from './registry.ts';
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

function wholeNumber(min: number): (v: string) => number {
  return (v) => {
    const n = /^\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`expected a whole number ≥ ${min}`);
    return n;
  };
}

/** A whole number checked when the flags are parsed, kept as typed: core/config.ts owns the value (and its environment fallback). */
function wholeNumberText(min: number): (v: string) => string {
  const check = wholeNumber(min);
  return (v) => {
    check(v);
    return v;
  };
}

/**
 * The environment variables, as `foresight --help` lists them (README.md "Configuration" has the full
 * table). test/pipeline/cli.test.ts checks that every variable core/config.ts reads is named here.
 */
const ENVIRONMENT: ReadonlyArray<readonly [names: string, meaning: string]> = [
  ['FORESIGHT_DATA', 'artifact root (--data; default data)'],
  ['FORESIGHT_BRANCH', 'branch whose first-parent history is mined (default HEAD)'],
  ['FORESIGHT_UNITS, FORESIGHT_TRACKER', 'auto|prs|commits: what a change is; auto|github|trac: what #N means'],
  ['FORESIGHT_SINCE, FORESIGHT_UNTIL', 'only fixes merged in [since, until) (--since, --until)'],
  ['FORESIGHT_OFFLINE', '1: git history only, no network source, no cloning (--offline)'],
  ['FORESIGHT_GIT_URL', 'where owner/name is cloned from (default https://github.com)'],
  ['GITHUB_TOKEN', 'enables the GitHub source (never printed)'],
  ['FORESIGHT_GITHUB_API_URL', 'GitHub API base (default https://api.github.com)'],
  ['FORESIGHT_TRAC_URL', 'a Trac site, e.g. https://code.djangoproject.com'],
  ['FORESIGHT_TRAC_MAX_AGE_SEC', 'serve cached Trac answers younger than this (default 0)'],
  ['FORESIGHT_ADVISORY_DB', 'a local checkout of github/advisory-database'],
  ['FORESIGHT_OSV_URL, FORESIGHT_ADVISORY_PACKAGE', 'the OSV API and the package to query, e.g. PyPI:django'],
  ['FORESIGHT_SZZ_CONCURRENCY', 'blame jobs at once (default 4)'],
  ['FORESIGHT_JOBS, FORESIGHT_RUNS', 'chains validated (or instances graded) at once, default 1; runs of each state, default 3'],
  ['FORESIGHT_REPEAT', 'candidates (default): each state once, then only the tests that can be in a set; gated: and no repeat for an excluded chain; all: every state FORESIGHT_RUNS times'],
  ['FORESIGHT_ATTRIBUTION', "execution (default): PR1 confirmed by bisecting PR2's fail->pass tests in Docker (a chain may move to another PR1, or become unattributed); off: blame's or a reference's PR1 stands"],
  ['FORESIGHT_RECIPES', "shipped (default): a repository's recipe file when there is one; detect: always detect the install"],
  ['FORESIGHT_IMAGE, FORESIGHT_RUNNER', 'one image (and its runner) for every chain instead of recipe-built images'],
  ['FORESIGHT_TIMEOUT_SEC', 'per-run timeout (default 600)'],
  ['FORESIGHT_MEMORY_MIB, FORESIGHT_PIDS_LIMIT, FORESIGHT_CPUS', 'container limits (default 2048, 512, 1)'],
  ['FORESIGHT_IMAGE_CACHE, FORESIGHT_ENV_KEEP', 'env|base|none: which images are kept; env images kept (default env, 30)'],
  ['FORESIGHT_BASE_IMAGE', 'alias of the offline base image (default foresight-base:bookworm)'],
  ['FORESIGHT_LOCK_DIR', 'lock files serialising image builds (default <tmp>/foresight-locks)'],
  ['FORESIGHT_REGISTRY', 'HOST[:PORT]/NAMESPACE the eval images are pushed to (--registry)'],
  ['FORESIGHT_EVAL_HISTORY', "full|depth1: the eval images' git history"],
  ['FORESIGHT_QUEUE', 'redis://HOST:PORT: the work queue `foresight worker` takes jobs from (--queue)'],
  ['FORESIGHT_WORKER_CONCURRENCY', 'jobs one worker runs at once (--concurrency; default 1)'],
  ['DOCKER_HOST', 'the Docker daemon (default unix:///var/run/docker.sock)'],
  ['FORESIGHT_LLM_BASE_URL, FORESIGHT_LLM_API_KEY', 'an OpenAI-compatible endpoint and its key (never printed): LLM judges instead of rules'],
  ['FORESIGHT_JUDGE_MODEL, FORESIGHT_FAIRNESS_MODELS', "the judges' model; two distinct models, comma-separated, for fairness"],
  ['FORESIGHT_LLM_CONCURRENCY, FORESIGHT_MAX_REPAIRS', 'LLM requests in flight (default 4); spec-repair rounds (default 2)'],
  ['FORESIGHT_LLM_PRICES', 'JSON {"model": {"prompt": USD per 1M tokens, "completion": ...}}'],
  ['HF_TOKEN, HF_ENDPOINT', 'publish: the hub token (never printed) and the hub (default https://huggingface.co)'],
  ['FORESIGHT_PY_VENV', "publish: a venv whose python has datasets, for the load check (default .venv-test)"],
  ['FORESIGHT_DEBUG, FORESIGHT_PROFILE_GIT', 'stack traces on errors; time per git subcommand at exit'],
];

/** Two columns, the meaning on its own line when the names are long. */
function helpTable(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = 34;
  return rows.map(([a, b]) => (a.length < width - 2 ? `  ${a.padEnd(width - 2)}${b}` : `  ${a}\n${' '.repeat(width)}${b}`)).join('\n');
}

const EXAMPLES: ReadonlyArray<readonly [string, string]> = [
  ['foresight demo', 'mine the bundled demo repository (no network, no keys)'],
  ['foresight run --repo encode/starlette --since 2024-01-01', 'mine a window of a GitHub repository'],
  ['foresight run --repo django/django --clone ~/src/django --from validate', 'rerun validate and the stages after it'],
  ['foresight eval --dataset data/demo__minilib/emit/hf --gold', "grade each row's own patch in its eval image"],
  ['foresight stages', 'the stages in order and the fingerprint of their code'],
];

const ROOT_HELP = `
Examples:
${EXAMPLES.map(([cmd, what]) => `  $ ${cmd}\n      ${what}`).join('\n')}

Environment (flags win over it; README.md "Configuration" has every default):
${helpTable(ENVIRONMENT)}
`;

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
      fixes merged in a window, from a local clone`,
    )
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
    .option('--jobs <n>', 'instances graded at once (FORESIGHT_JOBS)', wholeNumberText(1))
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
  program
    .command('stages')
    .description("list the stages in order with the fingerprint of each one's code, as its cache key holds it (the modules it runs, the files they read, the packages' versions)")
    .option('--files', "also list each stage's files and packages")
    .action(async (o: { files?: boolean }) => {
      const lines: string[] = [];
      for (const [name, def] of STAGE_DEFS) {
        const c = await codeClosure(def.entry, PROJECT_ROOT);
        lines.push(`${name.padEnd(9)} ${c.fingerprint.slice(0, 16)}  ${c.modules.length} modules, ${c.runtimeFiles.length} runtime files, ${c.packages.length} packages`);
        if (o.files) lines.push(...[...c.files, ...c.packages].map((f) => `    ${f}`));
      }
      process.stdout.write(lines.join('\n') + '\n');
    });
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
    .action(async (o: import('./publish/index.ts').PublishCliOptions) => {
      // Loaded on use: the hub library stays out of every other command's start-up.
      const { runPublishCommand } = await import('./publish/index.ts');
      const owner = abortOnSignals({ onSignal: (sig) => process.stderr.write(`${sig}: stopping the publish; a commit not yet made is not made\n`) });
      try {
        await runPublishCommand(o, owner.signal);
      } catch (err) {
        signalExit = owner.exitCode();
        throw owner.signal.aborted ? owner.signal.reason : err;
      } finally {
        owner.dispose();
      }
    });
  // </publish command>
  // <report command: owned by pipeline/report>
  program
    .command('report')
    .description('write one self-contained HTML page of an emitted dataset: funnel, plots, a filterable table of chains, per chain its diffs, commits, sets, states and verdicts')
    .requiredOption('--dataset <dir>', 'the emitted dataset folder (data/<owner>__<name>/emit/hf)')
    .option('--out <file>', 'where the page goes (default: report.html beside the dataset folder, so it is never published with it)')
    .addHelpText('after', '\nExample:\n  $ foresight report --dataset data/encode__starlette/emit/hf\n      writes data/encode__starlette/emit/report.html; open a chain with report.html#chain=<instance_id>')
    .action(async (o: { dataset: string; out?: string }) => {
      // Loaded on use: the other commands never pay for the report's modules.
      const { writeReport } = await import('./report/index.ts');
      const res = await writeReport({ dataset: o.dataset, out: o.out });
      for (const note of res.notes) process.stderr.write(`foresight report: ${note}\n`);
      process.stderr.write(`foresight report: ${res.chains} chains (${res.test} in test), ${res.plots} plots, per-state outcomes for ${res.withStates}\n`);
      process.stdout.write(`${res.path}\n`);
    });
  // </report command>
  // <worker command: owned by pipeline/worker>
  program
    .command('worker')
    .description("run queued container work (validate, bisection, eval) from a Redis queue on this machine's Docker, until SIGINT/SIGTERM")
    .option('--queue <redis://host:port>', 'the Redis queue the coordinator uses (FORESIGHT_QUEUE)')
    .option('--concurrency <n>', 'jobs run at once (FORESIGHT_WORKER_CONCURRENCY; default 1)', wholeNumberText(1))
    .option('--data <dir>', "this worker's own data folder: clones, logs (default: FORESIGHT_DATA or data)")
    .option('-v, --verbose', 'debug output on the terminal')
    .option('-q, --quiet', 'no output on the terminal')
    .addHelpText('after', '\nExample:\n  $ foresight worker --queue redis://10.0.0.5:6379 --concurrency 2 --data /srv/foresight')
    .action(async (o: Flags) => {
      const config = loadConfig(processEnv(), o);
      const log = createLogger({ level: config.log.level, quiet: config.log.quiet });
      // Loaded on use: BullMQ stays out of every other command's start-up.
      const { runWorker } = await import('./worker/index.ts');
      const owner = abortOnSignals({ onSignal: (sig) => log.warn(`${sig}: taking no more jobs; the running ones finish (a second signal abandons them to other workers)`) });
      try {
        await runWorker({ config, log, signal: owner.signal });
      } finally {
        owner.dispose();
      }
    });
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
  process.exitCode = signalExit ?? (err instanceof ForesightError ? 1 : 2);
}
