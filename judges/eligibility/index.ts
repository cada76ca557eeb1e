import { EligibilitySchema, type Eligibility } from '../../core/foundation/model/verdicts.ts';
import { prBlocks } from '../blocks.ts';
import { loadTemplate, render } from '../template.ts';
import type { Judge } from '../types.ts';

const TEMPLATE = loadTemplate(new URL('./prompt.md', import.meta.url));

const REVERT = /^revert\b/i;
const FIX = /\b(fix(e[sd])?|correct(s|ed)?|prevent(s|ed)?|bug|regression|crash(es|ed)?|broken|incorrect|wrong|mishandl\w*|error|edge case)\b/i;
// "Restored X" / "Reallowed X": behaviour an earlier change took away, given back (Django's regression fixes).
const RESTORE = /^(restore[sd]?|re-?allow(s|ed)?|re-?enable[sd]?)\b/i;
const FEATURE = /^(add(s|ed)?|support(s|ed)?|implement(s|ed)?|introduce[sd]?|allow(s|ed)?|enable[sd]?|new|provide[sd]?|expose[sd]?|deprecate[sd]?)\b/i;
const REFACTOR = /^(refactor(ed|s)?|clean(ed)? ?up|rename[sd]?|reformat(ted|s)?|move[sd]?|simplif(y|ied|ies)|tid(y|ied))\b/i;

/** Is PR2 a fix of an edge case PR1 missed (not a feature, revert, refactor or non-bug)? */
export const eligibilityJudge: Judge<Eligibility> = {
  name: 'eligibility',
  schema: EligibilitySchema,
  version: 'eligibility-3',
  prompt(input) {
    const b = prBlocks('PR2', input.pr2);
    return render(TEMPLATE, { pr2_text: b.text, pr2_discussion: b.discussion, pr2_patch: b.patch, pr2_tests: b.tests });
  },
  rules(input) {
    // Django-style "Fixed #N -- " / "Refs #N -- " prefixes name a ticket, not what the change does.
    const raw = input.pr2.title.trim();
    const title = raw.replace(/^(\[[\w.]+\]\s*)?((Fixed|Refs)\s+#?\d+(\s*,\s*|\s+and\s+)?)+\s*--\s*/i, '');
    const ticketFixed = title !== raw && /^(\[[\w.]+\]\s*)?Fixed\s+#?\d+/i.test(raw);
    if (REVERT.test(title)) return { reason: `the title starts with "Revert": ${title}`, verdict: 'revert' };
    if (FIX.test(title)) return { verdict: 'bug_fix', reason: `the title describes a fix: ${title}` };
    if (RESTORE.test(title)) return { verdict: 'bug_fix', reason: `the title restores lost behaviour (a regression fix): ${title}` };
    if (FEATURE.test(title)) return { verdict: 'feature', reason: `the title describes new functionality: ${title}` };
    if (REFACTOR.test(title)) return { verdict: 'refactor', reason: `the title describes a refactoring: ${title}` };
    if (ticketFixed) return { verdict: 'bug_fix', reason: `a ticket closed as fixed, by a change that adds nothing new: ${raw}` };
    return { verdict: 'not_a_bug', reason: `the title names no defect: ${title}` };
  },
  passes: (v) => v.verdict === 'bug_fix',
};
