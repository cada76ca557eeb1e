import { AttributionSchema, type Attribution } from '../../core/foundation/model/verdicts.ts';
import { prBlocks } from '../blocks.ts';
import { loadTemplate, render } from '../template.ts';
import type { Judge } from '../types.ts';

const TEMPLATE = loadTemplate(new URL('./prompt.md', import.meta.url));

/** Did PR1 (found by blame) actually introduce the defect PR2 fixed? */
export const attributionJudge: Judge<Attribution> = {
  name: 'attribution',
  schema: AttributionSchema,
  version: 'attribution-2',
  prompt(input) {
    const p1 = prBlocks('PR1', input.pr1);
    const p2 = prBlocks('PR2', input.pr2);
    const { linesFromPr1: own, linesFromOthers: others } = input.blame;
    return render(TEMPLATE, {
      pr1_text: p1.text, pr1_patch: p1.patch, pr2_text: p2.text, pr2_patch: p2.patch, pr2_tests: p2.tests,
      blame: `${own} of the changed lines were written by PR1, ${others} by other commits.`,
    });
  },
  /**
   * Only "none of the fixed lines is PR1's" is evidence rules can read. A fix that also touches older lines
   * says nothing about when the defect came (a share of lines excluded true chains: bench/README.md), and
   * PR1 writing most lines does not show it introduced the defect: both are left to a model (null).
   */
  rules(input) {
    const { linesFromPr1: own } = input.blame;
    if (own === 0) return { code: 'D', reason: 'blame attributes none of the fixed lines to PR1' };
    return null;
  },
  passes: (v) => v.code === 'A',
};
