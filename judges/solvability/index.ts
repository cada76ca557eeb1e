import { SolvabilitySchema, type Solvability } from '../../core/foundation/model/verdicts.ts';
import { list, prBlocks } from '../blocks.ts';
import { loadTemplate, render } from '../template.ts';
import type { Judge } from '../types.ts';
import { data } from '../untrusted.ts';

const TEMPLATE = loadTemplate(new URL('./prompt.md', import.meta.url));

/** Can PR1's task be solved from its statement (pr1_code), how clear is it (clarity_score), what kind of task is it. */
export const solvabilityJudge: Judge<Solvability> = {
  name: 'solvability',
  schema: SolvabilitySchema,
  version: 'solvability-1',
  prompt(input) {
    const p1 = prBlocks('PR1', input.pr1);
    return render(TEMPLATE, {
      statement: data('STATEMENT', input.problemStatement),
      tests: data('hidden test ids', list(input.tests.pr1FailToPass), 4_000),
      pr1_patch: p1.patch,
      pr1_tests: p1.tests,
    });
  },
  // Whether a text is enough to solve a task is not something rules can tell.
  rules: () => null,
  passes: (v) => v.code === 'A' && v.clarity_score <= 1,
};
