import { LabelsSchema, type Labels } from '../../core/foundation/model/verdicts.ts';
import { prBlocks } from '../blocks.ts';
import { loadTemplate, render } from '../template.ts';
import type { Judge } from '../types.ts';

export { severity, type Severity } from './severity.ts';

const TEMPLATE = loadTemplate(new URL('./prompt.md', import.meta.url));

/** The bug labels of PR2's edge case and the two difficulty tiers; severity is derived, not asked. */
export const labelsJudge: Judge<Labels> = {
  name: 'labels',
  schema: LabelsSchema,
  version: 'labels-1',
  prompt(input) {
    const p1 = prBlocks('PR1', input.pr1);
    const p2 = prBlocks('PR2', input.pr2);
    return render(TEMPLATE, {
      pr2_text: p2.text, pr2_discussion: p2.discussion, pr2_patch: p2.patch, pr2_tests: p2.tests,
      pr1_text: p1.text, pr1_patch: p1.patch,
    });
  },
  rules: () => null,
  // Labels describe; they are not a gate.
  passes: () => true,
};
