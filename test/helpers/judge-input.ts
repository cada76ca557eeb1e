import type { JudgeInput } from '../../judges/types.ts';

const pr = { label: 'PR #1', title: 't', body: 'b', patch: '', testPatch: '', discussion: '' };

/** A minimal judge input for provider tests (the judges' own tests build realistic ones). */
export function judgeInputFixture(over: Partial<JudgeInput> = {}): JudgeInput {
  return {
    instanceId: 'octo__repo-12',
    miningCategory: 'cross_reference',
    problemStatement: 'Parsing fails on empty input.',
    statementOrigin: 'raw',
    pr2Statement: null,
    pr1: pr,
    pr2: { ...pr, label: 'PR #2' },
    blame: { linesFromPr1: 3, linesFromOthers: 0, explicitReference: true },
    tests: { pr1FailToPass: [], anticipation: [] },
    feedback: null,
    ...over,
  };
}
