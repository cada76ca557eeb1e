import { Command, Option } from 'commander';
import { flagKey, settingRows, shownDefault, type Command as SettingsCommand, type Flags } from '../../core/foundation/settings.ts';
import { STAGES, type StageName } from '../../core/foundation/stage.ts';
import { FORESIGHT_VERSION } from '../../core/foundation/version.ts';
import { SPLITS } from '../eval/index.ts';
import { runDemo } from './demo.ts';
import { evaluate, type EvalOpts } from './eval.ts';
import { ENVIRONMENT, helpTable, plain, ROOT_HELP } from './help.ts';

/** The settings `publish` reads from the environment, as the settings table describes them. */
const PUBLISH_ENVIRONMENT = ENVIRONMENT.filter(([name]) => ['HF_TOKEN', 'HF_ENDPOINT', 'FORESIGHT_PY_VENV'].includes(name));
import { campaignEmitCommand, campaignRunCommand, releaseCommand, type CampaignRunOpts, type ReleaseOpts } from './campaign.ts';
import { CAMPAIGN_EXAMPLE } from './help.ts';
import { publishCommand } from './publish.ts';
import { recheckCommand, type RecheckOpts } from './recheck.ts';
import { reportCommand } from './report.ts';
import { execute } from './run.ts';
import { DEMO_REPO, wholeNumber, wholeNumberText, type CommonOpts } from './shared.ts';
import { stagesCommand, summaryCommand } from './stages.ts';
import { szzEval, type SzzEvalOpts } from './szz-eval.ts';
import { workerCommand } from './worker.ts';

/**
 * The options of the settings the table gives `command`, in the table's order (terminal output last), each
 * naming its variable and default; `notes` words a flag's help for this command.
 */
function withSettings(cmd: Command, command: SettingsCommand, notes: { [K in keyof Flags]?: string } = {}): Command {
  const terminalLast = (path: string): number => (path.startsWith('log.') ? 1 : 0);
  const rows = settingRows()
    .filter(([, s]) => s.flag?.commands.includes(command))
    .sort(([a], [b]) => terminalLast(a) - terminalLast(b));
  for (const [, s] of rows) {
    const flag = s.flag!;
    const shown = shownDefault(s);
    const source = [s.env && (s.on ? `${s.env}=${s.on}` : s.env), s.env && shown !== 'unset' && `default ${shown}`].filter(Boolean).join('; ');
    const help = (notes as Record<string, string | undefined>)[flagKey(flag.spec)] ?? plain(s.doc);
    const option = new Option(flag.spec, source ? `${help} (${source})` : help);
    if (s.min !== undefined) option.argParser(wholeNumberText(s.min));
    cmd.addOption(option);
  }
  return cmd;
}

/** --repo, --clone where the command reads the clone, --force where it reruns stages, then the command's settings. */
function withRepo(cmd: Command, command: SettingsCommand, opts: { clone?: boolean; force?: boolean } = {}): Command {
  cmd.addOption(new Option('--repo <owner/name>', command === 'run' || STAGES.includes(command as StageName) ? 'repository to mine' : 'the mined repository').makeOptionMandatory());
  if (opts.clone ?? true) cmd.option('--clone <path>', 'local clone to read (default: data/<owner>__<name>/clone, cloned on first use)');
  if (opts.force ?? true) cmd.option('--force', 'rerun even when inputs are unchanged');
  return withSettings(cmd, command);
}

/** The command line: every command, its own options, and the options of its settings from the settings table (core/foundation/settings.ts). */
export function buildCli(): Command {
  const program = new Command('foresight')
    .description('Mine PR1 -> PR2 fix-chains into an anticipation benchmark')
    .version(FORESIGHT_VERSION)
    .addHelpText('after', ROOT_HELP)
    // Usage errors (an unknown option, a bad flag value) are thrown, not exited on: bin.ts exits 2 for them. Inherited by every command.
    .showHelpAfterError('(add --help for the options)')
    .exitOverride();
  withRepo(program.command('run').description('run the pipeline; each stage skips itself when its inputs are unchanged'), 'run')
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
    .action(async (o: CommonOpts & { from?: StageName; only?: StageName }) => execute('run', o, { from: o.from, only: o.only }));
  for (const stage of STAGES) {
    withRepo(program.command(stage).description(`run only the ${stage} stage`), stage).action(async (o: CommonOpts) => execute(stage, o, { only: stage }));
  }
  // The demo mines the repository it generates: no --repo or --clone to point it elsewhere.
  withSettings(program.command('demo').description(`generate the bundled demo repository (${DEMO_REPO}) and mine it end to end`).option('--force', 'rerun even when inputs are unchanged'), 'demo').action(
    async (o: Flags & { force?: boolean }) => runDemo(o),
  );
  withSettings(
    program
      .command('szz-eval')
    .description('score SZZ on an oracle of fixes with known inducing commits (JSONL {fix, inducing[]}); fix messages are never read')
    .requiredOption('--clone <path>', 'local clone holding the fixes')
    .requiredOption('--oracle <file>', 'JSONL oracle, e.g. from scripts/build-szz-oracle.ts')
    .addOption(new Option('--variant <name>', 'which SZZ to score').choices(['b-szz', 'foresight', 'both']).default('both'))
    .option('--limit <n>', 'only the first N fixes', wholeNumber(1))
    .option('--concurrency <n>', 'blame jobs at once', wholeNumber(1), 2)
    .option('--execute', "also run each fix's tests (at its parent they must fail, at the fix pass) and bisect them in Docker, bounded by blame's candidates: F1 of blame alone and of blame + execution on the fixes whose tests run here")
    .option('--ceiling', "with --execute: probe each fix's tests only at the oracle's commit's parent and at the commit, not blame's candidates: whether execution can name it at all (an upper figure for the search; checkpoints in szz-eval/ceiling/)")
    .option('--repo <owner/name>', 'with --execute: the repository, whose recipe builds the environments (e.g. django/django)'),
    'szz-eval',
    {
      since: 'only fixes committed on or after this ISO date',
      until: 'only fixes committed before this ISO date',
      data: 'with --execute: artifact root; per-fix checkpoints go to <data>/<owner>__<name>/szz-eval/',
      jobs: 'with --execute: fixes run at once',
    },
  )
    .addHelpText('after', '\nExample:\n  $ FORESIGHT_ENV_KEEP=500 foresight szz-eval --execute --repo django/django --clone /tmp/django --oracle /tmp/h3-held.jsonl --limit 5\n      blame alone vs blame + execution on the first 5 fixes whose tests run here; a rerun reads the checkpoints')
    .action(async (o: SzzEvalOpts) => szzEval(o));
  withSettings(
    program
      .command('eval')
    .description('grade predictions (or the gold patches) in each row\'s eval image: X, Y and gap = X - Y per instance and on average')
    .requiredOption('--dataset <dir>', 'the emitted dataset folder (holds jsonl/<split>.jsonl)')
    .option('--predictions <file>', 'SWE-bench predictions, as JSONL or one JSON list (instance_id, model_name_or_path, model_patch)')
    .option('--gold', "grade each row's own patch (PR1's source diff): X must be 100%, Y 0%")
    .addOption(new Option('--split <name>', 'which rows to grade (verified, funnel: their gradeable rows)').choices(SPLITS).default('test'))
    .option('--merged-after <date>', "grade only rows whose PR1 merged (created_at) on or after this ISO date (2024-06-01 is midnight UTC), e.g. the model's training cutoff: the others are not run, and the report says how many were left out")
    .option('--out <file>', 'where the JSON report goes (default <dataset>/eval/<run>/report.json; report-merged-after-<date>.json with --merged-after)'),
    'eval',
    { jobs: 'instances graded at once' },
  ).action(async (o: EvalOpts) => evaluate(o));
  const campaign = program
    .command('campaign')
    .description('mine many repositories into one dataset: a campaign file (YAML) lists them, with their windows and options')
    .addHelpText('after', `\nExample campaign file (README: "Campaigns and releases"):\n${CAMPAIGN_EXAMPLE}`);
  withSettings(
    campaign
      .command('run')
      .description("mine each repository of the campaign in turn (per-repository artifacts and caches as `foresight run`'s); exit 1 when any failed")
      .argument('<file>', 'the campaign file')
      .option('--repos <owner/name,...>', 'only these repositories of the file')
      .option('--force', 'rerun even when inputs are unchanged'),
    'campaign',
    { jobs: "chains validated at once, per repository", queue: "validate each repository's chains on the workers of this queue" },
  ).action(async (file: string, o: CampaignRunOpts) => campaignRunCommand(file, o));
  withSettings(
    campaign.command('emit').description("one dataset from every repository's emitted rows: <data>/campaigns/<name>/hf").argument('<file>', 'the campaign file'),
    'campaign-emit',
  ).action(async (file: string, o: Flags) => campaignEmitCommand(file, o));
  withSettings(
    program
      .command('release')
      .description("the next release of a campaign's dataset: only the history after the previous release is mined, its rows are validated again (kept, re-used or excluded with the reason), and a split of this release is added beside the earlier ones, which stay as published")
      .requiredOption('--campaign <file>', 'the campaign file')
      .requiredOption('--name <name>', 'the release: the split it adds to verified and funnel, and the hub tag (letters, digits, _), e.g. r2026_01')
      .requiredOption('--previous <dir|owner/name>', 'the previous release: its dataset folder, or the hub repository it was published to (downloaded; HF_ENDPOINT, HF_TOKEN)'),
    'release',
    { jobs: 'chains validated at once, per repository', queue: "validate each repository's chains on the workers of this queue" },
  )
    .addHelpText('after', '\nExample:\n  $ foresight release --campaign spring.yaml --name r2026_06 --previous my-org/fix-chains\n  $ foresight publish --repo-id my-org/fix-chains --dataset data/campaigns/spring-2026/releases/r2026_06/hf --tag r2026_06')
    .action(async (o: ReleaseOpts) => releaseCommand(o));
  withRepo(program.command('push-images').description('push the eval images to a registry and name the pushed references in the emitted rows (reruns emit)'), 'push-images', { force: false })
    .action(async (o: CommonOpts) => execute('push-images', o, { push: true }));
  withRepo(program.command('summary').description('print the emitted chains'), 'summary', { clone: false, force: false }).action(async (o: CommonOpts) => summaryCommand(o));
  withRepo(program.command('recheck').description("validate stored chains again from scratch (their PR1 as stored, no checkpoint) and report whether each one's sets and exclusion hold; exit 1 when any differs"), 'recheck', { force: false })
    .option('--ids <id,...>', 'these instance ids (default: the rows of the emitted test split)')
    .option('--all', 'every chain validate ran')
    .addHelpText('after', '\nExample:\n  $ foresight recheck --repo django/django --clone ~/src/django --offline\n      every row of test validated again; the report goes to data/django__django/recheck/report.jsonl')
    .action(async (o: RecheckOpts) => recheckCommand(o));
  program
    .command('stages')
    .description("list the stages in order with the fingerprint of each one's code, as its cache key holds it (the modules it runs, the files they read, the packages' versions)")
    .option('--files', "also list each stage's files and packages")
    .action(async (o: { files?: boolean }) => stagesCommand(o));
  withSettings(
    program
      .command('publish')
      .description('upload an emitted dataset to the Hugging Face hub in one commit, once the gate passes (gold self-check, loads with datasets, no secret)')
      .requiredOption('--repo-id <owner/name>', 'the dataset repository on the hub (created when missing)')
      .option('--dataset <dir>', 'the emitted dataset folder (data/<owner>__<name>/emit/hf)')
      .option('--repo <owner/name>', 'the mined repository whose emitted dataset goes up (instead of --dataset)')
      .option('--private', 'create the repository private (an existing one keeps its visibility)')
      .option('--dry-run', 'print the exact operations (repository, files, sizes, LFS) and change nothing; offline: the hub is not asked, the plan is made against an empty repository unless --remote says otherwise')
      .option('--remote <hub|dir>', 'with --dry-run: plan against the repository read from the hub (hub; sends HF_TOKEN when set), or against a local copy of it (a folder: git clone, huggingface-cli download --local-dir, or a hub cache snapshot)')
      .option('--revision <branch>', 'the branch to commit to', 'main')
      .option('--tag <name>', "tag the published revision with this name (a release's)")
      .option('--replace <config,...>', 'published configs this publish may rewrite (test for data/, else the folder name); any other rewrite is refused'),
    'publish',
    { data: 'artifact root, with --repo', quiet: 'no log lines on the terminal (the plan is still printed)' },
  )
    .addHelpText('after', `\nEnvironment:\n${helpTable(PUBLISH_ENVIRONMENT)}\n\nExamples:\n  foresight publish --repo-id my-org/foresight-minilib --dataset data/demo__minilib/emit/hf --dry-run\n      the plan against an empty repository, offline: the hub is not asked and HF_TOKEN goes nowhere\n  foresight publish --repo-id my-org/foresight-minilib --repo demo/minilib --dry-run --remote hub\n      the plan against the repository as the hub has it now (read-only)\n  make publish REPO_ID=my-org/foresight-minilib DRY_RUN=1\n      in a checkout of foresight, after make demo: the demo's offline plan, the datasets venv installed first (scripts/setup-python.sh)`)
    .action(async (o: import('../publish/index.ts').PublishCliOptions) => publishCommand(o));
  program
    .command('report')
    .description('write one self-contained HTML page of an emitted dataset: funnel, plots, a filterable table of chains, per chain its diffs, commits, sets, states and verdicts')
    .requiredOption('--dataset <dir>', 'the emitted dataset folder (data/<owner>__<name>/emit/hf)')
    .option('--out <file>', 'where the page goes (default: report.html beside the dataset folder, so it is never published with it)')
    .addHelpText('after', '\nExample:\n  $ foresight report --dataset data/encode__starlette/emit/hf\n      writes data/encode__starlette/emit/report.html; open a chain with report.html#chain=<instance_id>')
    .action(async (o: { dataset: string; out?: string }) => reportCommand(o));
  withSettings(
    program.command('worker').description("run queued container work (validate's chains, with their bisection) from a Redis queue on this machine's Docker, until SIGINT/SIGTERM"),
    'worker',
    { queue: 'the Redis queue the coordinator uses', concurrency: 'jobs run at once', data: "this worker's own data folder: clones, logs" },
  )
    .addHelpText('after', '\nExample:\n  $ foresight worker --queue redis://10.0.0.5:6379 --concurrency 2 --data /srv/foresight')
    .action(async (o: Flags) => workerCommand(o));
  return program;
}
