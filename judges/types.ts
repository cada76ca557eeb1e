import type { z } from 'zod';

/** What every judge sees about a chain. PR2 fields are present because some judges need them;
 *  a judge that rates PR1's statement must only use PR2 to look for leaks, never to write text. */
export interface JudgeInput {
  instanceId: string;
  miningCategory: string;
  /** PR1's statement as the agent will see it (derived from PR1 only). */
  problemStatement: string;
  pr1: PrView;
  pr2: PrView;
  /** Lines PR2's source diff touched that blame attributes to PR1, and to anything else. */
  blame: { linesFromPr1: number; linesFromOthers: number; explicitReference: boolean };
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
}

export type JudgeName = 'eligibility' | 'attribution' | 'fairness';

/** A judge: one rubric, asked of a provider. `rules` is the deterministic offline implementation. */
export interface Judge<V> {
  readonly name: JudgeName;
  /** Schema of the verdict an LLM must return (JSON object). */
  readonly schema: z.ZodType<V>;
  /** Chat prompt for an LLM provider. */
  prompt(input: JudgeInput): { system: string; user: string };
  /** Deterministic rules; `variant` selects one of the rules provider's independent rule sets. */
  rules(input: JudgeInput, variant: string): V;
  /** Whether the verdict lets the chain through. */
  passes(verdict: V): boolean;
}

/** Where a verdict came from: written into every verdict so a row can be traced to its judge. */
export interface VerdictSource {
  provider: string;
  model: string;
}

export type Verdict<V> = V & VerdictSource & { judge: JudgeName; pass: boolean };

/** A provider answers a judge's rubric with one model. */
export interface JudgeProvider {
  readonly name: string;
  readonly model: string;
  ask<V>(judge: Judge<V>, input: JudgeInput): Promise<V>;
}
