import { z } from 'zod';
import { BISECT_DEFAULTS } from './bisect-defaults.ts';
import { ForesightError } from './errors.ts';
import { registerSecret } from './secrets.ts';
import { splitCredentials } from './config-values.ts';
import { flagKey, longFlag, SETTINGS, settingRows, type ConfigPath, type ConfigShape, type Flags, type Setting } from './settings.ts';

export { parseIsoDate, registryProblem, splitCredentials } from './config-values.ts';
export type { Flags } from './settings.ts';

/**
 * The one owner of configuration: every setting foresight reads, built once from command-line flags, the
 * environment and defaults, checked with zod, and passed down. Nothing else reads `process.env`. The settings
 * themselves (variable, flag, type, default, doc) are rows of core/foundation/settings.ts; this file turns them
 * into Config. Each stage fingerprints only the sections it uses; secrets (tokens, keys, URL credentials) live
 * apart in `Secrets`, are registered for redaction, and are never fingerprinted or logged.
 */
export const ConfigSchema = configSchema();
export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;

function configSchema(): z.ZodObject<ConfigShape> {
  const shape: Record<string, z.ZodType> = {};
  const sections = new Map<string, Record<string, z.ZodType>>();
  for (const [path, s] of settingRows()) {
    if (!s.schema) continue;
    const [top, field] = path.split('.') as [string, string | undefined];
    if (field === undefined) {
      shape[top] = s.schema;
      continue;
    }
    if (!sections.has(top)) {
      sections.set(top, {});
      // Holds the section's place in the key order until it is built below.
      shape[top] = z.never();
    }
    sections.get(top)![field] = s.schema;
  }
  for (const [top, fields] of sections) shape[top] = z.object(fields).prefault({});
  // The table's own type says what this builds (ConfigShape); zod cannot follow it through the loop.
  return z.object(shape) as unknown as z.ZodObject<ConfigShape>;
}

/** Credentials: kept out of Config so they are never fingerprinted, logged or written. */
export interface Secrets {
  githubToken: string | null;
  llmApiKey: string | null;
  hfToken: string | null;
  /** `user:password` of FORESIGHT_GIT_URL, if it carried any. */
  gitUrlCredentials: string | null;
  npmToken: string | null;
  /** GOPROXY whole: its URLs may carry credentials. */
  goProxy: string | null;
}

/** No credentials at all: offline runs and tests. */
export const NO_SECRETS: Secrets = Object.freeze({ githubToken: null, llmApiKey: null, hfToken: null, gitUrlCredentials: null, npmToken: null, goProxy: null });

type Env = Readonly<Record<string, string | undefined>>;

/** The environment variables whose values are credentials: the table's secrets and the other names they go by. */
export const SECRET_VARS: readonly string[] = settingRows().flatMap(([, s]) => (s.secret ? [s.env!, ...(s.redactAlso ?? [])] : []));

/** The secrets in the environment, each registered for redaction (core/foundation/secrets.ts). */
export function loadSecrets(env: Env = processEnv()): Secrets {
  for (const name of SECRET_VARS) registerSecret(name, env[name]);
  const git = splitCredentials(env[SETTINGS['clone.gitUrl'].env]?.trim() ?? '');
  if (git.credentials) {
    registerSecret('FORESIGHT_GIT_URL credentials', git.credentials);
    registerSecret('FORESIGHT_GIT_URL credentials', git.credentials.split(':').slice(1).join(':'));
  }
  const get = (s: Setting): string | null => env[s.env!]?.trim() || null;
  return {
    githubToken: get(SETTINGS['secrets.githubToken']),
    llmApiKey: get(SETTINGS['secrets.llmApiKey']),
    hfToken: get(SETTINGS['secrets.hfToken']),
    gitUrlCredentials: git.credentials,
    npmToken: get(SETTINGS['secrets.npmToken']),
    goProxy: get(SETTINGS['secrets.goProxy']),
  };
}

/**
 * One setting's value from its flag (which wins) or its variable, checked; undefined when neither is given.
 * A blank flag or variable counts as not given.
 */
function valueOf(s: Setting, env: Env, flags: Readonly<Record<string, unknown>>): unknown {
  if (s.flag) {
    const v = flags[flagKey(s.flag.spec)];
    if ('sets' in s.flag) {
      if (v === true) return s.flag.sets;
    } else if (typeof v === 'string' && v.trim() !== '') {
      return s.parse!({ name: longFlag(s.flag.spec), flag: true }, v);
    }
  }
  const v = s.env === undefined ? undefined : env[s.env]?.trim();
  return v ? s.parse!({ name: s.env!, flag: false }, v) : undefined;
}

/**
 * The configuration from flags (win), the environment (the table's variables) and defaults. Any bad value
 * is a ForesightError naming the flag or variable.
 */
export function loadConfig(env: Env = processEnv(), flags: Flags = {}): Config {
  const raw: Record<string, unknown> = {};
  for (const [path, s] of settingRows()) {
    if (!s.schema) continue;
    const v = valueOf(s, env, flags);
    if (v === undefined) continue;
    const [top, field] = path.split('.') as [string, string | undefined];
    if (field === undefined) raw[top] = v;
    else ((raw[top] ??= {}) as Record<string, unknown>)[field] = v;
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ForesightError(`invalid setting ${issue.path.join('.')}: ${issue.message}`, { remedy: 'fix the flag or FORESIGHT_* variable the README names for it' });
  }
  const config = parsed.data;

  // What no single setting can check alone.
  const { since, until } = config.discover;
  if (since && until && since >= until) {
    throw new ForesightError(`the window is empty: since ${since.slice(0, 10)} is not before until ${until.slice(0, 10)}`, {
      remedy: 'pass --since earlier than --until (fixes merged in [since, until) are mined)',
    });
  }
  const j = config.judge;
  if (!j.baseUrl && (j.model || j.fairnessModels.length)) {
    const named = [j.model && 'FORESIGHT_JUDGE_MODEL', j.fairnessModels.length && 'FORESIGHT_FAIRNESS_MODELS'].filter(Boolean).join(' and ');
    throw new ForesightError(`${named} ${named.includes(' and ') ? 'are' : 'is'} set but FORESIGHT_LLM_BASE_URL is not`, {
      remedy: `set FORESIGHT_LLM_BASE_URL to the LLM endpoint, or unset ${named} to use the offline rules`,
    });
  }
  j.provider = j.baseUrl ? 'openai' : 'rules';
  const v = config.validate;
  if (v.bisectGoodEndProbes > v.bisectMaxProbes) {
    throw new ForesightError(`the bisection's good-end probes (${v.bisectGoodEndProbes}) exceed its probes in all (${v.bisectMaxProbes})`, {
      remedy: `set FORESIGHT_BISECT_GOOD_END_PROBES at most FORESIGHT_BISECT_MAX_PROBES (defaults ${BISECT_DEFAULTS.maxGoodEndProbes} and ${BISECT_DEFAULTS.maxProbes})`,
    });
  }
  return config;
}

/**
 * One setting from the environment alone, for what must be known without a whole configuration (whether an
 * error that ended the command, possibly a bad setting, is printed with its stack). A bad value reads as unset.
 */
export function envSetting<P extends ConfigPath>(path: P, env: Env = processEnv()): z.output<(typeof SETTINGS)[P]['schema']> {
  const s: Setting = SETTINGS[path];
  let v: unknown;
  try {
    v = valueOf(s, env, {});
  } catch {
    v = undefined;
  }
  return s.schema!.parse(v) as z.output<(typeof SETTINGS)[P]['schema']>;
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
