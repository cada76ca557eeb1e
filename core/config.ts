import { z } from 'zod';
import { ForesightError } from './errors.ts';

/** Every setting the stages read. Each stage fingerprints only the section it uses. */
export const ConfigSchema = z.object({
  discover: z.object({
    /** Branch whose first-parent history is mined. */
    branch: z.string().default('HEAD'),
    /** Changes are GitHub PRs, or mainline commits (histories without PR numbers, like Django's). */
    units: z.enum(['auto', 'prs', 'commits']).default('auto'),
    /** Where "#N" points: GitHub PRs/issues, or Trac tickets (Django's "Fixed #N -- "). */
    tracker: z.enum(['auto', 'github', 'trac']).default('auto'),
    /** Only the git history: no GitHub, Trac or advisory requests (the demo, air-gapped runs). */
    offline: z.boolean().default(false),
    /** Only fixes (PR2s) merged in [since, until): bounds the work on a long history. ISO dates. */
    since: z.string().nullable().default(null),
    until: z.string().nullable().default(null),
  }),
  szz: z.object({
    /** Blame jobs run at once. */
    concurrency: z.number().int().positive().default(4),
  }),
  validate: z.object({
    /** One image for every chain (no environment tier); null: images built per recipe and era. */
    image: z.string().nullable().default(null),
    /** The runner when the image is given explicitly (a recipe names its own otherwise). */
    runner: z.string().default('pytest'),
    /** Each state is run this many times; a test whose outcome changes is flaky. */
    runs: z.number().int().min(1).default(3),
    jobs: z.number().int().positive().default(1),
    timeoutSec: z.number().int().positive().default(600),
    memoryMiB: z.number().int().positive().default(2048),
    pidsLimit: z.number().int().positive().default(512),
    cpus: z.number().positive().default(1),
  }),
  judge: z.object({
    /** 'rules' (offline, deterministic) or 'openai' (an OpenAI-compatible endpoint from the environment). */
    provider: z.enum(['rules', 'openai']).default('rules'),
    model: z.string().nullable().default(null),
    fairnessModels: z.array(z.string()).default([]),
  }),
});
export type Config = z.infer<typeof ConfigSchema>;

/** Defaults, overridden by FORESIGHT_* environment variables. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const num = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new ForesightError(`${name}=${v} is not a number`, { remedy: `set ${name} to a number or unset it` });
    return n;
  };
  const date = (name: string): string | undefined => {
    const v = env[name];
    if (!v) return undefined;
    if (Number.isNaN(Date.parse(v))) throw new ForesightError(`${name}=${v} is not a date`, { remedy: `set ${name} to an ISO date such as 2023-01-01, or unset it` });
    return new Date(v).toISOString();
  };
  const llm = Boolean(env.FORESIGHT_LLM_BASE_URL);
  const raw = {
    discover: { branch: env.FORESIGHT_BRANCH || undefined, units: env.FORESIGHT_UNITS || undefined, tracker: env.FORESIGHT_TRACKER || undefined, offline: env.FORESIGHT_OFFLINE === '1' || undefined, since: date('FORESIGHT_SINCE'), until: date('FORESIGHT_UNTIL') },
    szz: { concurrency: num('FORESIGHT_SZZ_CONCURRENCY') },
    validate: {
      image: env.FORESIGHT_IMAGE || undefined,
      runner: env.FORESIGHT_RUNNER || undefined,
      runs: num('FORESIGHT_RUNS'),
      jobs: num('FORESIGHT_JOBS'),
      timeoutSec: num('FORESIGHT_TIMEOUT_SEC'),
      memoryMiB: num('FORESIGHT_MEMORY_MIB'),
      pidsLimit: num('FORESIGHT_PIDS_LIMIT'),
      cpus: num('FORESIGHT_CPUS'),
    },
    judge: {
      provider: llm ? 'openai' : 'rules',
      model: env.FORESIGHT_JUDGE_MODEL || null,
      fairnessModels: env.FORESIGHT_FAIRNESS_MODELS ? env.FORESIGHT_FAIRNESS_MODELS.split(',').map((s) => s.trim()).filter(Boolean) : [],
    },
  };
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ForesightError(`invalid setting ${issue.path.join('.')}: ${issue.message}`, { remedy: 'fix the FORESIGHT_* environment variable named in the README' });
  }
  return parsed.data;
}
