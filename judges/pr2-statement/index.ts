import { StatementSchema, type Statement } from '../../core/foundation/model/verdicts.ts';
import { list, prBlocks } from '../blocks.ts';
import { loadTemplate, render } from '../template.ts';
import type { Judge } from '../types.ts';
import { data } from '../untrusted.ts';

const TEMPLATE = loadTemplate(new URL('./prompt.md', import.meta.url));

/** Synthesises (and, given a review, repairs) PR2's statement from PR2 and its held-out tests. */
export const pr2StatementWriter: Judge<Statement> = {
  name: 'pr2_statement',
  schema: StatementSchema,
  version: 'pr2-statement-1',
  prompt(input) {
    const p2 = prBlocks('PR2', input.pr2);
    return render(TEMPLATE, {
      previous: data('PREVIOUS statement', input.pr2Statement ?? '(none: write the first version)', 6_000),
      review: data('REVIEW', input.feedback ?? '(none)', 4_000),
      pr2_text: p2.text,
      pr2_discussion: p2.discussion,
      tests: data('held-out test ids', list(input.tests.anticipation), 4_000),
      pr2_tests: p2.tests,
      pr2_patch: p2.patch,
    });
  },
  rules: () => null,
  passes: (v) => v.statement.trim().length > 0,
};
