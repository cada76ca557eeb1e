import type { z } from 'zod';

/**
 * What every judge and writer sees about a chain. PR2 fields are present because some judges need them;
 * a judge or writer about PR1's statement must only use PR2 to look for leaks, never to write text, and
 * the PR1 writers (pr1_repair) never read `pr2` at all.
 */
export interface JudgeInput {
  instanceId: string;
  miningCategory: string;
  /** PR1's statement under judgement (the raw one, or a repaired one). */
  problemStatement: string;
  /**
   * `raw`: PR1's own text, written before PR2 existed, so words it shares with PR2 are no leak; `written`:
   * a statement foresight wrote (repaired or synthesised), which could carry PR2's words.
   */
  statementOrigin: 'raw' | 'written';
  /** PR2's synthesised statement under judgement (pr2_solvability), else null. */
  pr2Statement: string | null;
  pr1: PrView;
  pr2: PrView;
  /** Lines PR2's source diff touched that blame attributes to PR1, and to anything else. */
  blame: { linesFromPr1: number; linesFromOthers: number; explicitReference: boolean };
  /** Test ids: PR1's fail->pass (X) and the held-out anticipation tests (Y). */
  tests: { pr1FailToPass: string[]; anticipation: string[] };
  /** For a writer repairing a statement: what the judges said about the previous version; else null. */
  feedback: string | null;
}

export interface PrView {
  /** "PR #12" or "commit 0123456789". */
  label: string;
  title: string;
  body: string;
  /** Source diff (unified). */
  patch: string;
  /** Test diff (unified). */
  testPatch: string;
  /**
   * Human discussion that belongs to this change: for PR1 only its own material from before it merged (the
   * issue or ticket it closes); for PR2 the fixer-side thread. Empty when no source collected any.
   */
  discussion: string;
}

/** Judges (a verdict) and writers (a statement), all asked the same way. */
export type JudgeName =
  | 'eligibility'
  | 'attribution'
  | 'solvability'
  | 'fairness'
  | 'labels'
  | 'pr2_solvability'
  | 'pr1_repair'
  | 'pr2_statement';

/** A chat prompt: `system` holds the instructions, `user` the fenced data (untrusted.ts). */
export interface Prompt {
  system: string;
  user: string;
}

/**
 * A judge: one rubric, asked of a provider. Its schema is an object whose first field is the reasoning,
 * so a model reasons before it commits to a verdict; codes are enumerations.
 */
export interface Judge<V> {
  readonly name: JudgeName;
  /** Bumped whenever the prompt or the schema changes: part of the answer cache key. */
  readonly version: string;
  /** Schema of the verdict an LLM must return (JSON object), sent as a JSON-schema structured output. */
  readonly schema: z.ZodType<V>;
  /** Chat prompt for an LLM provider; every untrusted text inside it goes through `data()` (untrusted.ts). */
  prompt(input: JudgeInput): Prompt;
  /**
   * Deterministic rules for the offline provider; `variant` selects one of its independent rule sets.
   * `null`: rules cannot judge this (the column stays null, never guessed).
   */
  rules(input: JudgeInput, variant: string): V | null;
  /** Whether the verdict lets the chain through. */
  passes(verdict: V): boolean;
}

/** Tokens one answer cost. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** A provider's answer: the value, what it cost, and whether it came from the on-disk answer cache. */
export interface Answer<V> {
  value: V;
  /** Tokens of every call made for this answer (retries included); zero for rules. */
  usage: Usage;
  /** Requests sent to the endpoint for this answer (0 when cached or rules). */
  calls: number;
  cached: boolean;
}

/** A provider answers a judge's rubric with one model. */
export interface JudgeProvider {
  readonly name: string;
  readonly model: string;
  /** `null` when the provider cannot judge this (the rules provider for an LLM-only judge). */
  ask<V>(judge: Judge<V>, input: JudgeInput): Promise<Answer<V> | null>;
}
