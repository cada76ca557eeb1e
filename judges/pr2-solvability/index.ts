import { Pr2SolvabilitySchema, type Pr2Solvability } from '../../core/foundation/model/verdicts.ts';
import { list, prBlocks } from '../blocks.ts';
import { loadTemplate, render } from '../template.ts';
import type { Judge } from '../types.ts';
import { data } from '../untrusted.ts';

const TEMPLATE = loadTemplate(new URL('./prompt.md', import.meta.url));

/** Are PR2's held-out tests derivable from PR2's synthesised statement (pr2_spec_code)? */
export const pr2SolvabilityJudge: Judge<Pr2Solvability> = {
  name: 'pr2_solvability',
  schema: Pr2SolvabilitySchema,
  version: 'pr2-solvability-1',
  prompt(input) {
    const p2 = prBlocks('PR2', input.pr2);
    return render(TEMPLATE, {
      statement: data('STATEMENT', input.pr2Statement ?? ''),
      tests: data('held-out test ids', list(input.tests.anticipation), 4_000),
      pr2_tests: p2.tests,
      pr2_patch: p2.patch,
    });
  },
  rules: () => null,
  passes: (v) => v.code === 'A',
};
