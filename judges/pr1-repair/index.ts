import { StatementSchema, type Statement } from '../../core/foundation/model/verdicts.ts';
import { list, prBlocks } from '../blocks.ts';
import { loadTemplate, render } from '../template.ts';
import type { Judge } from '../types.ts';
import { data } from '../untrusted.ts';

const TEMPLATE = loadTemplate(new URL('./prompt.md', import.meta.url));

/**
 * Spec-repair of PR1's statement: enriched from PR1's own material only. The prompt is built from `input.pr1`
 * and PR1's test ids and never reads `input.pr2`, so nothing of the held-out fix can reach the statement
 * (test/judges/writers.test.ts checks this on the rendered prompt).
 */
export const pr1RepairWriter: Judge<Statement> = {
  name: 'pr1_repair',
  schema: StatementSchema,
  version: 'pr1-repair-1',
  prompt(input) {
    const p1 = prBlocks('PR1', input.pr1);
    return render(TEMPLATE, {
      statement: data('STATEMENT (previous version)', input.problemStatement),
      review: data('REVIEW', input.feedback ?? 'The statement is under-specified.', 4_000),
      pr1_text: p1.text,
      pr1_discussion: p1.discussion,
      tests: data('hidden test ids', list(input.tests.pr1FailToPass), 4_000),
      pr1_tests: p1.tests,
      pr1_patch: p1.patch,
    });
  },
  rules: () => null,
  passes: (v) => v.statement.trim().length > 0,
};
