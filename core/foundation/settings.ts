import { z } from 'zod';
import { BISECT_DEFAULTS } from './bisect-defaults.ts';
import { httpUrl, httpUrlNoCredentials, int, oneOf, parseIsoDate, positive, prices, redisUrl, registry, splitCredentials, type Origin } from './config-values.ts';
import { STAGES } from './stage.ts';

/**
 * Every setting foresight has, once: its environment variable, its flag and the commands that take it, its
 * type and default, where it lands in Config, and a one-line doc. Config's schema (config.ts), `loadConfig`,
 * the commands' options, `--help`'s environment section and README.md's configuration table
 * (scripts/settings-doc.ts) are all made from this table. Nothing here reads the environment.
 */

// The enumerations, for the code that takes these values.
export const CHANGE_UNITS = ['auto', 'prs', 'commits', 'mixed'] as const;
export type ChangeUnits = (typeof CHANGE_UNITS)[number];
export const TRACKERS = ['auto', 'github', 'trac'] as const;
export type Tracker = (typeof TRACKERS)[number];
export const REPEAT_STRATEGIES = ['candidates', 'gated', 'all'] as const;
export type RepeatStrategy = (typeof REPEAT_STRATEGIES)[number];
export const ATTRIBUTION_MODES = ['execution', 'off'] as const;
export type AttributionMode = (typeof ATTRIBUTION_MODES)[number];
export const RECIPE_MODES = ['shipped', 'detect'] as const;
export type RecipeMode = (typeof RECIPE_MODES)[number];
export const CACHE_LEVELS = ['none', 'base', 'env'] as const;
export type CacheLevel = (typeof CACHE_LEVELS)[number];
export const EVAL_HISTORIES = ['full', 'depth1'] as const;
export type EvalHistory = (typeof EVAL_HISTORIES)[number];
export const JUDGE_PROVIDERS = ['rules', 'openai'] as const;
export type JudgeProvider = (typeof JUDGE_PROVIDERS)[number];
export const LANGUAGE_HINTS = ['auto', 'python', 'javascript', 'typescript', 'go'] as const;
export type LanguageHint = (typeof LANGUAGE_HINTS)[number];
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export const LOG_FORMATS = ['text', 'json'] as const;

/** The commands that take settings from flags (`foresight stages` and `report` take none). */
export const COMMANDS = ['run', ...STAGES, 'demo', 'push-images', 'summary', 'recheck', 'szz-eval', 'eval', 'worker', 'publish', 'campaign', 'campaign-emit', 'release'] as const;
export type Command = (typeof COMMANDS)[number];

export interface Setting {
  /** The environment variable; none for a flag-only or derived setting. */
  env?: string;
  /** `--name <arg>` and the commands it applies to; `sets` makes it a switch that sets this value. */
  flag?: { spec: string; commands: readonly Command[]; sets?: unknown };
  /** Config's type, with its default; none for a secret. */
  schema?: z.ZodType;
  /** The flag's or variable's text as the value: checked, naming what the user typed in its errors. */
  parse?: (origin: Origin, text: string) => unknown;
  /** A switch's variable: the value that turns it on (`FORESIGHT_OFFLINE=1`). */
  on?: string;
  /** Whole-number flags are also checked when the flags are parsed. */
  min?: number;
  /** A credential: in Secrets (never Config), registered for redaction, never fingerprinted or logged. */
  secret?: true;
  /** Further variables that are never read but redacted when set (another tool's name for the same credential). */
  redactAlso?: readonly string[];
  /** How the default reads in the docs, when the value alone would not say it. */
  shown?: string;
  doc: string;
}

const whole = (min: number, fallback: number) => ({ schema: z.number().int().min(min).default(fallback), parse: (o: Origin, v: string) => int(o, v, min), min });
const text = (fallback: string) => ({ schema: z.string().default(fallback), parse: (_o: Origin, v: string) => v });
const maybeText = () => ({ schema: z.string().nullable().default(null), parse: (_o: Origin, v: string) => v });
const choice = <const T extends readonly [string, ...string[]]>(values: T, fallback: T[number]) => ({
  schema: z.enum(values).default(fallback),
  parse: (o: Origin, v: string) => oneOf(o, v, values),
});
const date = () => ({ schema: z.string().nullable().default(null), parse: parseIsoDate });
/** A variable that is on when set to anything (FORESIGHT_DEBUG=1). */
const present = () => ({ schema: z.boolean().default(false), parse: () => true });

// Which commands a flag applies to.
const LOGGING = ['run', ...STAGES, 'demo', 'push-images', 'recheck', 'szz-eval', 'eval', 'worker', 'publish', 'campaign', 'campaign-emit', 'release'] as const;
const CLONING = ['run', ...STAGES, 'push-images', 'recheck', 'campaign', 'release'] as const;

/** Keyed by the path in Config (`secrets.*`: in Secrets); Config's keys keep this order. */
export const SETTINGS = {
  data: {
    env: 'FORESIGHT_DATA',
    flag: { spec: '--data <dir>', commands: ['run', ...STAGES, 'demo', 'push-images', 'summary', 'recheck', 'szz-eval', 'worker', 'publish', 'campaign', 'campaign-emit', 'release'] },
    ...text('data'),
    doc: "artifact root: `<data>/<owner>__<name>/` holds a repository's clone, log and stages",
  },
  'log.level': {
    env: 'FORESIGHT_LOG_LEVEL',
    flag: { spec: '--log-level <level>', commands: LOGGING },
    ...choice(LOG_LEVELS, 'info'),
    doc: "the least level shown on the terminal (`warn`: warnings and errors only, no progress); a run's log file gets every level",
  },
  'log.verbose': { flag: { spec: '-v, --verbose', commands: LOGGING, sets: true }, schema: z.boolean().default(false), doc: 'debug output on the terminal: `--log-level debug`' },
  'log.format': {
    env: 'FORESIGHT_LOG_FORMAT',
    flag: { spec: '--log-format <format>', commands: LOGGING },
    ...choice(LOG_FORMATS, 'text'),
    doc: '`text`: lines for people, bars on a terminal; `json`: one JSON object a line on the terminal, the fields of the log file',
  },
  'log.quiet': { flag: { spec: '-q, --quiet', commands: LOGGING, sets: true }, schema: z.boolean().default(false), doc: "no log lines on the terminal: results are still printed, and a run's log file still gets everything" },
  'clone.gitUrl': {
    env: 'FORESIGHT_GIT_URL',
    schema: z.string().default('https://github.com'),
    parse: (_o: Origin, v: string) => splitCredentials(v).url.replace(/\/+$/, ''),
    doc: 'where `owner/name` is cloned from; credentials in the URL are kept apart, as a secret',
  },
  'discover.branch': { env: 'FORESIGHT_BRANCH', ...text('HEAD'), doc: 'the branch whose first-parent history is mined' },
  'discover.units': { env: 'FORESIGHT_UNITS', ...choice(CHANGE_UNITS, 'auto'), doc: "what a change is: `prs`, a merged PR; `commits`, a mainline commit (Django's history); `mixed`, a merged PR where recorded, else the commit; `auto`, PRs when the history records them" },
  'discover.tracker': { env: 'FORESIGHT_TRACKER', ...choice(TRACKERS, 'auto'), doc: 'what `#N` in a message names: `github`, a PR or issue; `trac`, a Trac ticket (Django\'s "Fixed #N --"); `auto`, detected' },
  'discover.offline': {
    env: 'FORESIGHT_OFFLINE',
    flag: { spec: '--offline', commands: CLONING, sets: true },
    schema: z.boolean().default(false),
    parse: (_o: Origin, v: string) => v === '1',
    on: '1',
    doc: 'git history only, without GitHub, Trac or advisory requests and without cloning; the demo sets it',
  },
  'discover.since': { env: 'FORESIGHT_SINCE', flag: { spec: '--since <date>', commands: ['run', 'discover', 'szz', 'szz-eval'] }, ...date(), doc: 'only fixes merged on or after this ISO date' },
  'discover.until': { env: 'FORESIGHT_UNTIL', flag: { spec: '--until <date>', commands: ['run', 'discover', 'szz', 'szz-eval'] }, ...date(), doc: 'only fixes merged before this ISO date' },
  // Derived: a release's starting point in a repository, the head the previous release mined.
  'discover.after': {
    schema: z.string().nullable().default(null),
    doc: 'only fixes merged after this commit (the mainline commits of `after..branch`): a release mines the history since the previous one',
  },
  // Derived: a campaign's windows of a repository (fixes merged in any of them, and in since/until).
  'discover.windows': {
    schema: z.array(z.object({ since: z.string().nullable(), until: z.string().nullable() }).strict()).default([]),
    doc: "a campaign's windows `[since, until)` of a repository: fixes merged in any of them",
  },
  'sources.githubApiUrl': { env: 'FORESIGHT_GITHUB_API_URL', schema: z.string().default('https://api.github.com'), parse: httpUrl, doc: 'the GitHub API; GraphQL at `<base>/graphql`' },
  'secrets.githubToken': { env: 'GITHUB_TOKEN', secret: true, redactAlso: ['GH_TOKEN'], doc: 'enables the GitHub source: PRs, cross-references, issues, discussion' },
  'sources.tracUrl': { env: 'FORESIGHT_TRAC_URL', ...maybeText(), doc: 'a Trac site, e.g. `https://code.djangoproject.com`: tickets, comments, report dates' },
  'sources.tracMaxAgeSec': { env: 'FORESIGHT_TRAC_MAX_AGE_SEC', ...whole(0, 0), doc: 'cached Trac answers younger than this many seconds are served without asking: Trac sends no ETags' },
  'sources.advisoryDb': { env: 'FORESIGHT_ADVISORY_DB', ...maybeText(), doc: 'a local checkout of github/advisory-database, in OSV JSON' },
  'sources.osvUrl': { env: 'FORESIGHT_OSV_URL', ...maybeText(), doc: 'the OSV API, asked about `FORESIGHT_ADVISORY_PACKAGE`' },
  'sources.advisoryPackage': { env: 'FORESIGHT_ADVISORY_PACKAGE', ...maybeText(), doc: 'the package the OSV API is asked about, e.g. `PyPI:django`' },
  'szz.concurrency': { env: 'FORESIGHT_SZZ_CONCURRENCY', ...whole(1, 4), doc: 'blame jobs at once' },
  'validate.image': { env: 'FORESIGHT_IMAGE', ...maybeText(), doc: 'one image for every chain instead of the env images built from recipes' },
  'validate.runner': { env: 'FORESIGHT_RUNNER', ...text('pytest'), doc: 'the runner in `FORESIGHT_IMAGE`; a recipe names its own' },
  'validate.runs': { env: 'FORESIGHT_RUNS', flag: { spec: '--runs <n>', commands: ['run', 'validate', 'demo', 'recheck', 'campaign', 'release'] }, ...whole(1, 3), doc: 'runs of each test state: a test whose outcome changes is flaky' },
  'validate.repeat': {
    env: 'FORESIGHT_REPEAT',
    ...choice(REPEAT_STRATEGIES, 'candidates'),
    doc: 'what is run again: `candidates`, only the tests that can still be in a set; `gated`, and nothing of an excluded chain; `all`, every state',
  },
  'validate.attribution': {
    env: 'FORESIGHT_ATTRIBUTION',
    ...choice(ATTRIBUTION_MODES, 'execution'),
    doc: "`execution`: PR1 is confirmed by bisecting PR2's fail->pass tests in Docker; `off`: blame's or a reference's PR1 stands",
  },
  'validate.bisectMaxProbes': { env: 'FORESIGHT_BISECT_MAX_PROBES', ...whole(1, BISECT_DEFAULTS.maxProbes), doc: "the bisection's probes per chain, or per oracle fix" },
  'validate.bisectGoodEndProbes': { env: 'FORESIGHT_BISECT_GOOD_END_PROBES', ...whole(1, BISECT_DEFAULTS.maxGoodEndProbes), doc: 'of those, the most spent looking back for a commit where the tests pass' },
  'validate.jobs': { env: 'FORESIGHT_JOBS', flag: { spec: '--jobs <n>', commands: ['run', 'validate', 'demo', 'eval', 'szz-eval', 'campaign', 'release'] }, ...whole(1, 1), doc: 'chains validated at once; `eval`: instances graded, `szz-eval --execute`: fixes run' },
  'validate.timeoutSec': { env: 'FORESIGHT_TIMEOUT_SEC', ...whole(1, 600), doc: 'timeout of one test run, in seconds' },
  'validate.memoryMiB': { env: 'FORESIGHT_MEMORY_MIB', ...whole(1, 2048), doc: "a test container's memory limit (and memory + swap limit), in MiB" },
  'validate.pidsLimit': { env: 'FORESIGHT_PIDS_LIMIT', ...whole(1, 512), doc: "a test container's process limit" },
  'validate.cpus': { env: 'FORESIGHT_CPUS', schema: z.number().positive().default(1), parse: positive, doc: "a test container's CPUs" },
  'validate.diskMiB': { env: 'FORESIGHT_DISK_MIB', ...whole(1, 2048), doc: "size of the tmpfs at `/tmp`, a test container's only writable place, in MiB; RAM, so it counts toward the memory limit" },
  'validate.recipes': { env: 'FORESIGHT_RECIPES', ...choice(RECIPE_MODES, 'shipped'), doc: "`shipped`: a repository's recipe file when there is one; `detect`: always detect the install, to measure detection" },
  'validate.language': {
    env: 'FORESIGHT_LANGUAGE',
    ...choice(LANGUAGE_HINTS, 'auto'),
    doc: "which ecosystem recipe detection tries first where a commit has several (go.mod, package.json, a Python project): `auto` decides from the files",
  },
  // images.*: which Docker images are kept and where builds coordinate; only registry and evalHistory change a stage's result (emit's).
  'images.cache': {
    env: 'FORESIGHT_IMAGE_CACHE',
    ...choice(CACHE_LEVELS, 'env'),
    doc: "`env`: keep env images, pruning the least recently used beyond `FORESIGHT_ENV_KEEP`; `base`: remove the run's env and service images at its end; `none`: the base image too",
  },
  'images.envKeep': { env: 'FORESIGHT_ENV_KEEP', ...whole(0, 30), doc: 'env images kept' },
  'images.baseAlias': { env: 'FORESIGHT_BASE_IMAGE', ...text('foresight-base:bookworm'), doc: 'the alias pointed at the offline base image' },
  'images.lockDir': { env: 'FORESIGHT_LOCK_DIR', ...maybeText(), shown: '<tmp>/foresight-locks', doc: 'lock files serialising image builds across processes' },
  // Never a credential: a registry that needs one would get it from Secrets.
  'images.registry': {
    env: 'FORESIGHT_REGISTRY',
    flag: { spec: '--registry <host[:port]/namespace>', commands: ['push-images'] },
    schema: z.string().nullable().default(null),
    parse: (o: Origin, v: string) => registry(o, v.trim().replace(/\/+$/, '')),
    doc: '`HOST[:PORT]/NAMESPACE`: emit pushes the eval images there and the rows name the pushed references',
  },
  'images.evalHistory': { env: 'FORESIGHT_EVAL_HISTORY', ...choice(EVAL_HISTORIES, 'full'), doc: "the eval images' git store: `full`, the history up to `base_commit`; `depth1`, that commit alone, for large repositories" },
  // Where env builds get packages; none of it changes an image (lockfiles and go.sum pin what is fetched).
  'packages.npmRegistry': {
    env: 'FORESIGHT_NPM_REGISTRY',
    schema: z.string().nullable().default(null),
    parse: httpUrlNoCredentials,
    shown: "the host npm's `registry`",
    doc: "the npm registry a Node env build's deps step installs from; its token is `FORESIGHT_NPM_TOKEN`",
  },
  'secrets.npmToken': { env: 'FORESIGHT_NPM_TOKEN', secret: true, redactAlso: ['NPM_TOKEN'], doc: "that registry's token, for the deps step only (unset: the host npmrc's token for it, if any)" },
  'secrets.goProxy': { env: 'FORESIGHT_GOPROXY', secret: true, doc: "GOPROXY of a Go env build's `go mod download` (it may carry credentials); unset: modules only from `vendor/`" },
  'packages.goFlags': { env: 'FORESIGHT_GOFLAGS', ...maybeText(), doc: 'GOFLAGS of that `go mod download`' },
  'docker.host': { env: 'DOCKER_HOST', ...maybeText(), shown: 'unix:///var/run/docker.sock', doc: 'the Docker daemon' },
  // Derived in config.ts: the LLM judges run exactly when FORESIGHT_LLM_BASE_URL is set.
  'judge.provider': { schema: z.enum(JUDGE_PROVIDERS).default('rules'), doc: '`openai` when FORESIGHT_LLM_BASE_URL is set, else the offline `rules`' },
  'judge.baseUrl': { env: 'FORESIGHT_LLM_BASE_URL', schema: z.string().nullable().default(null), parse: httpUrl, doc: 'an OpenAI-compatible endpoint: when set, LLM judges replace the offline rules' },
  'secrets.llmApiKey': { env: 'FORESIGHT_LLM_API_KEY', secret: true, redactAlso: ['OPENAI_API_KEY'], doc: 'the key of `FORESIGHT_LLM_BASE_URL`' },
  'judge.model': { env: 'FORESIGHT_JUDGE_MODEL', ...maybeText(), doc: 'the model of eligibility, attribution, solvability, the labels and the statement writers' },
  'judge.fairnessModels': {
    env: 'FORESIGHT_FAIRNESS_MODELS',
    schema: z.array(z.string()).default([]),
    parse: (_o: Origin, v: string) => v.split(',').map((s) => s.trim()).filter(Boolean),
    doc: 'two distinct models, comma-separated, for the two fairness judges',
  },
  'judge.concurrency': { env: 'FORESIGHT_LLM_CONCURRENCY', ...whole(1, 4), doc: 'LLM requests in flight at once, across the stage' },
  'judge.maxRepairs': { env: 'FORESIGHT_MAX_REPAIRS', ...whole(0, 2), doc: 'spec-repair rounds per statement: rewrite, then judge again' },
  'judge.prices': {
    env: 'FORESIGHT_LLM_PRICES',
    schema: z.record(z.string(), z.object({ prompt: z.number().nonnegative(), completion: z.number().nonnegative() })).default({}),
    parse: prices,
    doc: '`{"model": {"prompt": USD per 1M tokens, "completion": ...}}`: prices the token totals; a model not listed costs nothing and is named',
  },
  'publish.hfEndpoint': { env: 'HF_ENDPOINT', schema: z.string().default('https://huggingface.co'), parse: httpUrl, doc: 'the Hugging Face hub `foresight publish` uploads to' },
  'secrets.hfToken': { env: 'HF_TOKEN', secret: true, doc: '`foresight publish`: a Hugging Face token with write access' },
  // Relative to the project root.
  'publish.pyVenv': { env: 'FORESIGHT_PY_VENV', ...text('.venv-test'), doc: "`foresight publish`: a venv whose python must load the files with `datasets` first (`scripts/setup-python.sh` makes it; else `python3` on PATH)" },
  'queue.url': {
    env: 'FORESIGHT_QUEUE',
    flag: { spec: '--queue <redis://host:port>', commands: ['run', 'validate', 'demo', 'worker', 'campaign', 'release'] },
    schema: z.string().nullable().default(null),
    parse: (o: Origin, v: string) => redisUrl(o, v.trim()),
    doc: '`redis://HOST:PORT`: validate runs each chain as a job there, on `foresight worker`s',
  },
  'queue.concurrency': { env: 'FORESIGHT_WORKER_CONCURRENCY', flag: { spec: '--concurrency <n>', commands: ['worker'] }, ...whole(1, 1), doc: 'jobs one `foresight worker` runs at once' },
  'queue.lockSec': { env: 'FORESIGHT_WORKER_LOCK_SEC', ...whole(1, 30), doc: "how long a worker's job stays its own without a renewal: a killed worker's job runs elsewhere about this long after" },
  'debug.stack': { env: 'FORESIGHT_DEBUG', ...present(), doc: 'when set: stack traces of errors' },
  'debug.profileGit': { env: 'FORESIGHT_PROFILE_GIT', ...present(), doc: 'when set: time per git subcommand, printed at exit' },
} as const satisfies Record<string, Setting>;

type Table = typeof SETTINGS;
type Row<P> = P extends keyof Table ? Table[P] : never;
/** The paths that are part of Config (secrets are not). */
export type ConfigPath = { [P in keyof Table]: Table[P] extends { schema: z.ZodType } ? P : never }[keyof Table];
type SchemaOf<P> = Row<P> extends { schema: infer S extends z.ZodType } ? S : never;
type SectionOf<P> = P extends `${infer S}.${string}` ? S : never;
type TopLevel<P> = P extends `${string}.${string}` ? never : P;
/** Config's shape as the table gives it: top-level settings, then one object per section, each defaulted whole. */
export type ConfigShape = { [K in TopLevel<ConfigPath>]: SchemaOf<K> } & {
  [S in SectionOf<ConfigPath>]: z.ZodPrefault<z.ZodObject<{ [P in ConfigPath as P extends `${S}.${infer F}` ? F : never]: SchemaOf<P> }>>;
};

type LongName<S> = S extends `${string}--${infer N} ${string}` ? N : S extends `${string}--${infer N}` ? N : never;
type Camel<S> = S extends `${infer A}-${infer B}` ? `${A}${Capitalize<Camel<B>>}` : S;
/** Command-line flags as commander hands them over: text for a value, true for a switch. */
export type Flags = {
  -readonly [P in keyof Table as Table[P] extends { flag: { spec: infer S } } ? Camel<LongName<S>> : never]?: Table[P] extends { flag: { sets: unknown } } ? boolean : string;
};

/** The rows, in order. */
export function settingRows(): Array<[path: string, setting: Setting]> {
  return Object.entries(SETTINGS);
}

/** `--jobs` of `--jobs <n>`, `--verbose` of `-v, --verbose`. */
export function longFlag(spec: string): string {
  return /--[a-z][a-z0-9-]*/.exec(spec)![0];
}

/** The key commander gives a flag's value (`--dry-run` -> dryRun). */
export function flagKey(spec: string): string {
  return longFlag(spec).slice(2).replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** The settings' flags among a command's options: only those the table gives that command. */
export function flagsFor(command: Command, opts: object): Flags {
  const given = opts as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [, s] of settingRows()) {
    if (!s.flag?.commands.includes(command)) continue;
    const key = flagKey(s.flag.spec);
    if (given[key] !== undefined) out[key] = given[key];
  }
  return out as Flags;
}

/** The default as the docs show it: unset for nothing, false or empty. */
export function shownDefault(s: Setting): string {
  if (s.shown) return s.shown;
  const v: unknown = s.schema?.parse(undefined);
  const unset = v === undefined || v === null || v === false || (typeof v === 'object' && Object.keys(v).length === 0);
  return unset ? 'unset' : String(v);
}

/** The settings a user can set (a variable or a flag), in order: what the docs list. */
export function documentedSettings(): Array<[path: string, setting: Setting]> {
  return settingRows().filter(([, s]) => s.env !== undefined || s.flag !== undefined);
}
