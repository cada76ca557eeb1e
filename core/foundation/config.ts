import { z } from 'zod';
import { BISECT_DEFAULTS } from './bisect-defaults.ts';
import { ForesightError } from './errors.ts';
import { registerSecret } from './secrets.ts';
import { bad, httpUrl, int, parseIsoDate, positive, prices, redisUrlProblem, registry, splitCredentials, type Origin } from './config-values.ts';

export { parseIsoDate, registryProblem, splitCredentials } from './config-values.ts';

/**
 * The one owner of configuration: every setting foresight reads, built once from command-line flags, the
 * environment and defaults, checked with zod, and passed down. Nothing else reads `process.env`. Each stage
 * fingerprints only the sections it uses; secrets (tokens, keys, URL credentials) live apart in `Secrets`,
 * are registered for redaction, and are never fingerprinted or logged.
 */
export const ConfigSchema = z.object({
  /** Artifact root (data/<owner>__<name>/<stage>/). */
  data: z.string().default('data'),
  log: z.object({ level: z.enum(['debug', 'info']).default('info'), quiet: z.boolean().default(false) }).prefault({}),
  clone: z
    .object({
      /** Where `owner/name` is cloned from, without credentials (those are in Secrets). */
      gitUrl: z.string().default('https://github.com'),
    })
    .prefault({}),
  discover: z
    .object({
      /** Branch whose first-parent history is mined. */
      branch: z.string().default('HEAD'),
      /** Changes are GitHub PRs, or mainline commits (histories without PR numbers, like Django's). */
      units: z.enum(['auto', 'prs', 'commits']).default('auto'),
      /** Where "#N" points: GitHub PRs/issues, or Trac tickets (Django's "Fixed #N -- "). */
      tracker: z.enum(['auto', 'github', 'trac']).default('auto'),
      /** Only the git history: no GitHub, Trac or advisory requests, and no cloning (the demo, air-gapped runs). */
      offline: z.boolean().default(false),
      /** Only fixes (PR2s) merged in [since, until): bounds the work on a long history. ISO times. */
      since: z.string().nullable().default(null),
      until: z.string().nullable().default(null),
    })
    .prefault({}),
  /** Where the network sources are (never their tokens). */
  sources: z
    .object({
      githubApiUrl: z.string().default('https://api.github.com'),
      tracUrl: z.string().nullable().default(null),
      tracMaxAgeSec: z.number().int().nonnegative().default(0),
      advisoryDb: z.string().nullable().default(null),
      osvUrl: z.string().nullable().default(null),
      advisoryPackage: z.string().nullable().default(null),
    })
    .prefault({}),
  szz: z
    .object({
      /** Blame jobs run at once. */
      concurrency: z.number().int().positive().default(4),
    })
    .prefault({}),
  validate: z
    .object({
      /** One image for every chain (no environment tier); null: images built per recipe and era. */
      image: z.string().nullable().default(null),
      /** The runner when the image is given explicitly (a recipe names its own otherwise). */
      runner: z.string().default('pytest'),
      /** Each state is run this many times; a test whose outcome changes is flaky. */
      runs: z.number().int().min(1).default(3),
      /** 'candidates': each state once, then only the tests that can be in a set, up to `runs`; 'gated': and none for an excluded chain; 'all': every state `runs` times. */
      repeat: z.enum(['candidates', 'gated', 'all']).default('candidates'),
      /** 'execution': a chain with PR2 fail->pass tests has PR1 confirmed by bisecting them (core/attribution); 'off': blame's or a reference's PR1 stands. */
      attribution: z.enum(['execution', 'off']).default('execution'),
      /** The bisection's budget: most probes in all, and most spent looking for a commit where the tests pass. */
      bisectMaxProbes: z.number().int().positive().default(BISECT_DEFAULTS.maxProbes),
      bisectGoodEndProbes: z.number().int().positive().default(BISECT_DEFAULTS.maxGoodEndProbes),
      jobs: z.number().int().positive().default(1),
      timeoutSec: z.number().int().positive().default(600),
      memoryMiB: z.number().int().positive().default(2048),
      pidsLimit: z.number().int().positive().default(512),
      cpus: z.number().positive().default(1),
      /** Size of the tmpfs that is a test container's only writable place (/tmp: the work tree, temp files); RAM-backed, so it counts toward memoryMiB too. */
      diskMiB: z.number().int().positive().default(2048),
      /** 'shipped': a repository's recipe file when there is one; 'detect': always the detected candidates (measures detection on repositories that have a recipe). */
      recipes: z.enum(['shipped', 'detect']).default('shipped'),
    })
    .prefault({}),
  /** Docker images: which are kept, and where builds coordinate. Not part of any stage's result. */
  images: z
    .object({
      /** 'env': keep env images (LRU beyond envKeep pruned); 'base': remove the run's env images; 'none': the base too. */
      cache: z.enum(['none', 'base', 'env']).default('env'),
      envKeep: z.number().int().nonnegative().default(30),
      /** The alias pointed at the offline base image. */
      baseAlias: z.string().default('foresight-base:bookworm'),
      /** Lock files serialising env builds across processes; null: <tmpdir>/foresight-locks. */
      lockDir: z.string().nullable().default(null),
      /**
       * `HOST[:PORT]/NAMESPACE[/...]` the eval images are pushed to (emit, `foresight push-images`): rows
       * then name `<registry>/foresight-eval:<key>`; null: they stay local. Never a credential: a registry
       * that needs one would get it from Secrets.
       */
      registry: z.string().nullable().default(null),
      /**
       * The git store of eval images (emit): 'full', the history up to the base commit; 'depth1', the base
       * commit alone (smaller, for large repositories). Part of each eval image's key and of emit's fingerprint.
       */
      evalHistory: z.enum(['full', 'depth1']).default('full'),
    })
    .prefault({}),
  docker: z
    .object({
      /** DOCKER_HOST: unix:///path, tcp://host:port; null: /var/run/docker.sock. */
      host: z.string().nullable().default(null),
    })
    .prefault({}),
  judge: z
    .object({
      /** 'rules' (offline, deterministic) or 'openai' (an OpenAI-compatible endpoint). */
      provider: z.enum(['rules', 'openai']).default('rules'),
      /** The endpoint's base URL (openai provider). */
      baseUrl: z.string().nullable().default(null),
      model: z.string().nullable().default(null),
      fairnessModels: z.array(z.string()).default([]),
      /** LLM requests in flight at once, across the stage. */
      concurrency: z.number().int().positive().default(4),
      /** Rounds of spec-repair (rewrite, then re-judge) before a statement is left as it is. */
      maxRepairs: z.number().int().nonnegative().default(2),
      /** USD per million tokens, per model; a model not listed costs nothing in the totals (and is named). */
      prices: z.record(z.string(), z.object({ prompt: z.number().nonnegative(), completion: z.number().nonnegative() })).default({}),
    })
    .prefault({}),
  /** `foresight publish`: where the dataset goes and which Python checks that it loads (the token is in Secrets). */
  publish: z
    .object({
      /** The Hugging Face hub (HF_ENDPOINT); tests point it at a local server. */
      hfEndpoint: z.string().default('https://huggingface.co'),
      /** The venv whose python imports `datasets` (FORESIGHT_PY_VENV, as scripts/setup-python.sh makes it), relative to the project root. */
      pyVenv: z.string().default('.venv-test'),
    })
    .prefault({}),
  /** The work queue (core/queue): null url, items run in this process; redis://HOST:PORT, on `foresight worker`s. */
  queue: z
    .object({
      url: z.string().nullable().default(null),
      /** Jobs one `foresight worker` runs at once. */
      concurrency: z.number().int().positive().default(1),
      /** How long a worker's job stays its own without a renewal: a killed worker's job runs elsewhere about this long after. */
      lockSec: z.number().int().positive().default(30),
    })
    .prefault({}),
  debug: z
    .object({
      /** Print stack traces of errors. */
      stack: z.boolean().default(false),
      /** Time spent per git subcommand, printed at exit (benchmarks). */
      profileGit: z.boolean().default(false),
    })
    .prefault({}),
});
export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;

/** Credentials: kept out of Config so they are never fingerprinted, logged or written. */
export interface Secrets {
  githubToken: string | null;
  llmApiKey: string | null;
  hfToken: string | null;
  /** `user:password` of FORESIGHT_GIT_URL, if it carried any. */
  gitUrlCredentials: string | null;
}

/** No credentials at all: offline runs and tests. */
export const NO_SECRETS: Secrets = Object.freeze({ githubToken: null, llmApiKey: null, hfToken: null, gitUrlCredentials: null });

/** Command-line flags as commander hands them over (strings); each is checked here and named in errors. */
export interface Flags {
  data?: string;
  since?: string;
  until?: string;
  offline?: boolean;
  jobs?: string;
  runs?: string;
  verbose?: boolean;
  quiet?: boolean;
  /** `HOST[:PORT]/NAMESPACE`: where eval images are pushed. */
  registry?: string;
  /** `redis://HOST:PORT`: the work queue. */
  queue?: string;
  /** Jobs a worker runs at once. */
  concurrency?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The environment variables whose values are credentials. */
export const SECRET_VARS = ['GITHUB_TOKEN', 'GH_TOKEN', 'HF_TOKEN', 'FORESIGHT_LLM_API_KEY', 'OPENAI_API_KEY'] as const;

/** The secrets in the environment, each registered for redaction (core/foundation/secrets.ts). */
export function loadSecrets(env: Env = processEnv()): Secrets {
  for (const name of SECRET_VARS) registerSecret(name, env[name]);
  const git = splitCredentials(env.FORESIGHT_GIT_URL?.trim() ?? '');
  if (git.credentials) {
    registerSecret('FORESIGHT_GIT_URL credentials', git.credentials);
    registerSecret('FORESIGHT_GIT_URL credentials', git.credentials.split(':').slice(1).join(':'));
  }
  const get = (name: string): string | null => env[name]?.trim() || null;
  return { githubToken: get('GITHUB_TOKEN'), llmApiKey: get('FORESIGHT_LLM_API_KEY'), hfToken: get('HF_TOKEN'), gitUrlCredentials: git.credentials };
}

/**
 * The configuration from flags (win), the environment (FORESIGHT_* and the few standard variables
 * the README lists) and defaults. Any bad value is a ForesightError naming the flag or variable.
 */
export function loadConfig(env: Env = processEnv(), flags: Flags = {}): Config {
  const e = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };
  const fromEnv = (name: string): Origin => ({ name, flag: false });
  const pick = (flag: string, value: string | undefined, envName: string): { origin: Origin; value: string } | undefined =>
    value !== undefined ? { origin: { name: flag, flag: true }, value } : e(envName) !== undefined ? { origin: fromEnv(envName), value: e(envName)! } : undefined;
  const num = (flag: string | null, value: string | undefined, envName: string, min: number): number | undefined => {
    const p = flag ? pick(flag, value, envName) : e(envName) !== undefined ? { origin: fromEnv(envName), value: e(envName)! } : undefined;
    return p ? int(p.origin, p.value, min) : undefined;
  };
  const date = (flag: string, value: string | undefined, envName: string): string | undefined => {
    const p = pick(flag, value, envName);
    return p ? parseIsoDate(p.origin, p.value) : undefined;
  };
  const url = (name: string): string | undefined => (e(name) ? httpUrl(fromEnv(name), e(name)!) : undefined);

  const since = date('--since', flags.since, 'FORESIGHT_SINCE');
  const until = date('--until', flags.until, 'FORESIGHT_UNTIL');
  if (since && until && since >= until) {
    throw new ForesightError(`the window is empty: since ${since.slice(0, 10)} is not before until ${until.slice(0, 10)}`, {
      remedy: 'pass --since earlier than --until (fixes merged in [since, until) are mined)',
    });
  }
  const cpus = e('FORESIGHT_CPUS');
  const llmBase = url('FORESIGHT_LLM_BASE_URL');
  const judgeModel = e('FORESIGHT_JUDGE_MODEL') ?? null;
  const fairness = e('FORESIGHT_FAIRNESS_MODELS')?.split(',').map((s) => s.trim()).filter(Boolean) ?? [];
  if (!llmBase && (judgeModel || fairness.length)) {
    const named = [judgeModel && 'FORESIGHT_JUDGE_MODEL', fairness.length && 'FORESIGHT_FAIRNESS_MODELS'].filter(Boolean).join(' and ');
    throw new ForesightError(`${named} ${named.includes(' and ') ? 'are' : 'is'} set but FORESIGHT_LLM_BASE_URL is not`, {
      remedy: `set FORESIGHT_LLM_BASE_URL to the LLM endpoint, or unset ${named} to use the offline rules`,
    });
  }
  const enumOf = <T extends string>(name: string, allowed: readonly T[]): T | undefined => {
    const v = e(name);
    if (v === undefined) return undefined;
    if (!(allowed as readonly string[]).includes(v)) throw bad(fromEnv(name), v, `one of ${allowed.join(', ')}`, allowed[0]!);
    return v as T;
  };
  const reg = pick('--registry', flags.registry?.trim() || undefined, 'FORESIGHT_REGISTRY');
  const gitUrl = e('FORESIGHT_GIT_URL') ? splitCredentials(e('FORESIGHT_GIT_URL')!).url.replace(/\/+$/, '') : undefined;

  const raw: ConfigInput = {
    data: flags.data ?? e('FORESIGHT_DATA'),
    log: { level: flags.verbose ? 'debug' : 'info', quiet: flags.quiet ?? false },
    clone: { gitUrl },
    discover: {
      branch: e('FORESIGHT_BRANCH'),
      units: enumOf('FORESIGHT_UNITS', ['auto', 'prs', 'commits'] as const),
      tracker: enumOf('FORESIGHT_TRACKER', ['auto', 'github', 'trac'] as const),
      offline: flags.offline || e('FORESIGHT_OFFLINE') === '1' || undefined,
      since,
      until,
    },
    sources: {
      githubApiUrl: url('FORESIGHT_GITHUB_API_URL'),
      tracUrl: e('FORESIGHT_TRAC_URL') ?? null,
      tracMaxAgeSec: num(null, undefined, 'FORESIGHT_TRAC_MAX_AGE_SEC', 0),
      advisoryDb: e('FORESIGHT_ADVISORY_DB') ?? null,
      osvUrl: e('FORESIGHT_OSV_URL') ?? null,
      advisoryPackage: e('FORESIGHT_ADVISORY_PACKAGE') ?? null,
    },
    szz: { concurrency: num(null, undefined, 'FORESIGHT_SZZ_CONCURRENCY', 1) },
    validate: {
      image: e('FORESIGHT_IMAGE'),
      runner: e('FORESIGHT_RUNNER'),
      runs: num('--runs', flags.runs, 'FORESIGHT_RUNS', 1),
      repeat: enumOf('FORESIGHT_REPEAT', ['candidates', 'gated', 'all'] as const),
      attribution: enumOf('FORESIGHT_ATTRIBUTION', ['execution', 'off'] as const),
      bisectMaxProbes: num(null, undefined, 'FORESIGHT_BISECT_MAX_PROBES', 1),
      bisectGoodEndProbes: num(null, undefined, 'FORESIGHT_BISECT_GOOD_END_PROBES', 1),
      jobs: num('--jobs', flags.jobs, 'FORESIGHT_JOBS', 1),
      timeoutSec: num(null, undefined, 'FORESIGHT_TIMEOUT_SEC', 1),
      memoryMiB: num(null, undefined, 'FORESIGHT_MEMORY_MIB', 1),
      pidsLimit: num(null, undefined, 'FORESIGHT_PIDS_LIMIT', 1),
      diskMiB: num(null, undefined, 'FORESIGHT_DISK_MIB', 1),
      cpus: cpus === undefined ? undefined : positive(fromEnv('FORESIGHT_CPUS'), cpus),
      recipes: enumOf('FORESIGHT_RECIPES', ['shipped', 'detect'] as const),
    },
    images: {
      cache: enumOf('FORESIGHT_IMAGE_CACHE', ['none', 'base', 'env'] as const),
      envKeep: num(null, undefined, 'FORESIGHT_ENV_KEEP', 0),
      baseAlias: e('FORESIGHT_BASE_IMAGE'),
      lockDir: e('FORESIGHT_LOCK_DIR') ?? null,
      registry: reg ? registry(reg.origin, reg.value.replace(/\/+$/, '')) : null,
      evalHistory: enumOf('FORESIGHT_EVAL_HISTORY', ['full', 'depth1'] as const),
    },
    docker: { host: e('DOCKER_HOST') ?? null },
    judge: {
      provider: llmBase ? 'openai' : 'rules',
      baseUrl: llmBase ?? null,
      model: judgeModel,
      fairnessModels: fairness,
      concurrency: num(null, undefined, 'FORESIGHT_LLM_CONCURRENCY', 1),
      maxRepairs: num(null, undefined, 'FORESIGHT_MAX_REPAIRS', 0),
      prices: e('FORESIGHT_LLM_PRICES') === undefined ? undefined : prices(fromEnv('FORESIGHT_LLM_PRICES'), e('FORESIGHT_LLM_PRICES')!),
    },
    publish: { hfEndpoint: url('HF_ENDPOINT'), pyVenv: e('FORESIGHT_PY_VENV') },
    queue: { url: queueUrl(pick('--queue', flags.queue?.trim() || undefined, 'FORESIGHT_QUEUE')), concurrency: num('--concurrency', flags.concurrency, 'FORESIGHT_WORKER_CONCURRENCY', 1), lockSec: num(null, undefined, 'FORESIGHT_WORKER_LOCK_SEC', 1) },
    debug: { stack: Boolean(e('FORESIGHT_DEBUG')), profileGit: Boolean(e('FORESIGHT_PROFILE_GIT')) },
  };
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ForesightError(`invalid setting ${issue.path.join('.')}: ${issue.message}`, { remedy: 'fix the flag or FORESIGHT_* variable the README names for it' });
  }
  const v = parsed.data.validate;
  if (v.bisectGoodEndProbes > v.bisectMaxProbes) {
    throw new ForesightError(`the bisection's good-end probes (${v.bisectGoodEndProbes}) exceed its probes in all (${v.bisectMaxProbes})`, {
      remedy: `set FORESIGHT_BISECT_GOOD_END_PROBES at most FORESIGHT_BISECT_MAX_PROBES (defaults ${BISECT_DEFAULTS.maxGoodEndProbes} and ${BISECT_DEFAULTS.maxProbes})`,
    });
  }
  return parsed.data;
}

/** A `--queue` / FORESIGHT_QUEUE value, checked (config-values.ts's redisUrlProblem says what is accepted). */
function queueUrl(p: { origin: Origin; value: string } | undefined): string | null {
  if (!p) return null;
  const problem = redisUrlProblem(p.value);
  // A password typed into the URL is not echoed back.
  if (problem) throw bad(p.origin, p.value.replace(/\/\/[^@/]*@/, '//***@'), problem, 'redis://127.0.0.1:6379');
  return p.value.replace(/\/+$/, '');
}

/** The defaults, with `overrides` deep-merged per section: for tests and library use. */
export function defaultConfig(overrides: { [K in keyof ConfigInput]?: Partial<Exclude<ConfigInput[K], undefined>> } = {}): Config {
  return ConfigSchema.parse(overrides);
}

/**
 * The process environment, read here and nowhere else. Child processes that must inherit it (git with
 * a trimmed environment, pip in tests) take a copy through this function.
 */
export function processEnv(): Readonly<Record<string, string | undefined>> {
  return process.env;
}
