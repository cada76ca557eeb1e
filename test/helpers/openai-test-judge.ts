/** A test judge, its input and answers, and checks shared by the OpenAI provider tests. */
import { inspect } from 'node:util';
import { expect } from 'vitest';
import { z } from 'zod';
import { ForesightError } from '../../core/foundation/errors.ts';
import type { Judge, JudgeInput } from '../../judges/types.ts';
import { judgeInputFixture } from './judge-input.ts';

export const API_KEY = 'sk-test-SECRET-5f3a9c1e77b24d08';
export const MODEL = 'judge-model-1';

// Reasoning first: the model reasons before it commits to a verdict.
const verdictSchema = z.object({ reason: z.string(), verdict: z.enum(['yes', 'no']) });
export type TestVerdict = z.infer<typeof verdictSchema>;

export const testJudge: Judge<TestVerdict> = {
  name: 'eligibility',
  version: '1',
  schema: verdictSchema,
  prompt: (input) => ({
    system: 'You judge chains. Answer with a JSON object {"reason": string, "verdict": "yes"|"no"}.',
    user: `Instance ${input.instanceId}: ${input.problemStatement}`,
  }),
  rules: () => null,
  passes: (v) => v.verdict === 'yes',
};

export const input: JudgeInput = judgeInputFixture({ miningCategory: 'regression' });

export const good = JSON.stringify({ reason: 'clear fix chain', verdict: 'yes' });
export const goodValue = { reason: 'clear fix chain', verdict: 'yes' };

/** The key appears in no text of the error: message, remedy, one line, string, inspected object. */
export function expectNoKey(err: ForesightError): void {
  for (const text of [err.message, err.remedy, err.oneLine(), String(err), inspect(err, { depth: 10 })]) {
    expect(text).not.toContain(API_KEY);
  }
}
