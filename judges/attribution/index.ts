import { AttributionSchema, type Attribution } from '../../core/model/verdicts.ts';
import type { Judge } from '../types.ts';

/** Did PR1 (found by blame) actually introduce the defect PR2 fixed? */
export const attributionJudge: Judge<Attribution> = {
  name: 'attribution',
  schema: AttributionSchema,
  prompt(input) {
    return {
      system:
        'SZZ blame says PR1 wrote the lines PR2 later fixed. Decide whether PR1 introduced the defect. Answer with a JSON object ' +
        '{"code": "A" (PR1 introduced it) | "B" (the defect predates PR1) | "C" (PR1 only moved or reformatted the lines) | "D" (PR1 is unrelated to the defect), "reason": one sentence}.',
      user:
        `PR1 (${input.pr1.label}): ${input.pr1.title}\n\n${input.pr1.body}\n\nPR1 diff:\n${input.pr1.patch.slice(0, 10000)}\n\n` +
        `PR2 (${input.pr2.label}, the fix): ${input.pr2.title}\n\n${input.pr2.body}\n\nPR2 diff:\n${input.pr2.patch.slice(0, 10000)}\n\n` +
        `Blame: ${input.blame.linesFromPr1} fixed line(s) from PR1, ${input.blame.linesFromOthers} from other commits.`,
    };
  },
  rules(input) {
    const { linesFromPr1: own, linesFromOthers: others } = input.blame;
    if (own === 0) return { code: 'D', reason: 'blame attributes none of the fixed lines to PR1' };
    if (own < others) return { code: 'B', reason: `most fixed lines (${others} of ${own + others}) come from other commits` };
    return { code: 'A', reason: `${own} of ${own + others} fixed lines were written by PR1` };
  },
  passes: (v) => v.code === 'A',
};
