import { changeLabel } from '../../core/foundation/model/change.ts';
import { pr1OwnMaterial, pr2Discussion } from '../../core/foundation/model/discussion.ts';
import type { ValidatedChain } from '../../core/foundation/model/validated.ts';
import type { JudgeInput } from '../../judges/types.ts';

/** What the judges see of a chain; PR1's discussion is only its own material from before it merged. */
export function judgeInput(c: ValidatedChain): JudgeInput {
  const fromPr1 = c.szz.candidates.find((k) => k.change === c.pr1.id)?.score ?? 0;
  const fromOthers = c.szz.candidates.filter((k) => k.change !== c.pr1.id).reduce((a, k) => a + k.score, 0) + c.szz.unattributedScore;
  return {
    instanceId: c.instance_id,
    miningCategory: c.mining_category,
    problemStatement: c.problem_statement,
    statementOrigin: 'raw',
    pr2Statement: null,
    pr1: {
      label: changeLabel(c.pr1), title: c.pr1.title, body: c.pr1.body, patch: c.patch, testPatch: c.test_patch,
      discussion: pr1OwnMaterial(c).join('\n\n'),
    },
    pr2: {
      label: changeLabel(c.pr2), title: c.pr2.title, body: c.pr2.body, patch: c.anticipation_patch, testPatch: c.anticipation_test_patch,
      discussion: pr2Discussion(c),
    },
    blame: { linesFromPr1: fromPr1, linesFromOthers: fromOthers, explicitReference: c.mining_category === 'cross_reference' },
    tests: { pr1FailToPass: c.FAIL_TO_PASS, anticipation: c.ANTICIPATION_FAIL_TO_PASS },
    feedback: null,
  };
}
