import type { z } from 'zod';
import type { Config, Secrets } from './config.ts';
import type { Fingerprint } from './fingerprint.ts';
import type { Logger } from './log.ts';

export const STAGES = ['discover', 'szz', 'extract', 'validate', 'judge', 'emit'] as const;
export type StageName = (typeof STAGES)[number];

/** The repository being mined: its name (owner/name) and a local clone. */
export interface RepoContext {
  name: string;
  clone: string;
}

export interface ForEachOptions<I, O> {
  /** Stable id of an item, for progress and logs. */
  id(item: I): string;
  label: string;
  concurrency?: number;
  /** Schema of one result, checked before it is checkpointed and when it is reused; default: the stage's output. */
  schema?: z.ZodType<O>;
}

export interface StageContext {
  repo: RepoContext;
  config: Config;
  /** Credentials (never fingerprinted, logged or written). */
  secrets: Secrets;
  log: Logger;
  /** This stage's artifact folder (data/<repo>/<stage>/), for extra outputs such as emitted files. */
  outDir: string;
  /** The repository's artifact folder (data/<repo>/), for caches shared by stages (e.g. HTTP caches). */
  repoDir: string;
  signal: AbortSignal;
  /**
   * Run `fn` on every item, each result checkpointed as soon as it is known and keyed by the
   * item's fingerprint (its content + this stage's code and config), so a killed run resumes and an
   * unchanged item is never redone. `fn` gets that key too (a queued item's job id).
   */
  forEach<I, O>(items: readonly I[], opts: ForEachOptions<I, O>, fn: (item: I, key: string) => Promise<O>): Promise<O[]>;
}

export interface StageOutput<O> {
  items: O[];
  stats: Record<string, number>;
  /** False when an upstream service failed and the output lacks its part: the next run tries again. */
  complete?: boolean;
}

/** A stage: a function from the upstream stage's records to its own, with typed artifacts. */
export interface StageDef<I, O> {
  name: StageName;
  /**
   * The stage module's own `import.meta.url`. Its code fingerprint is the closure of what this module
   * runs (core/foundation/code-closure.ts): every module it imports, the files they read and the packages' versions.
   */
  entry: string;
  /** The configuration values this stage reads (fingerprinted). */
  config(cfg: Config): unknown;
  /** Schema of the upstream artifact's records; null for the first stage, which reads the repository. */
  input: z.ZodType<I> | null;
  output: z.ZodType<O>;
  /**
   * Earlier stages, besides the one before it, whose manifests this stage reads (emit's funnel counts
   * discover's candidates; its license is read at the head discover mined). Their manifests (fingerprint,
   * output hash, stats) join this stage's cache key: a change there that leaves the direct upstream's output alone still reruns it.
   */
  reads?: readonly StageName[];
  /** For the first stage: a fingerprint of the repository state it reads. */
  source?(ctx: Pick<StageContext, 'repo' | 'config' | 'secrets'>): Promise<Fingerprint>;
  run(items: I[], ctx: StageContext): Promise<StageOutput<O>>;
}

// A registry holds stages of different record types (hence `any`); each is checked by its own schemas at run time.
export type AnyStage = StageDef<any, any>;
