import { FairnessSchema, type Fairness } from '../../core/foundation/model/verdicts.ts';
import { addedLines, identifiers, ngrams, words } from '../text.ts';
import { prBlocks } from '../blocks.ts';
import { loadTemplate, render } from '../template.ts';
import type { Judge, JudgeInput } from '../types.ts';
import { data } from '../untrusted.ts';

const TEMPLATE = loadTemplate(new URL('./prompt.md', import.meta.url));


/** Identifiers PR2 introduces that PR1's own text and diff never use: seeing one in PR1's statement is a leak. */
function pr2OnlyIdentifiers(input: JudgeInput): Set<string> {
  const pr1 = identifiers([input.pr1.title, input.pr1.body, input.pr1.patch, input.pr1.testPatch].join('\n'));
  const pr2 = identifiers([...addedLines(input.pr2.patch), ...addedLines(input.pr2.testPatch), input.pr2.title].join('\n'));
  return new Set([...pr2].filter((id) => !pr1.has(id)));
}

/** A statement that quotes PR1's own code tells the agent the mechanism instead of the intent. */
function quotedCode(input: JudgeInput): string | null {
  const statement = input.problemStatement;
  for (const line of addedLines(input.pr1.patch)) {
    const t = line.trim();
    if (t.length >= 25 && !t.startsWith('#') && !t.startsWith('"""') && statement.includes(t)) return t;
  }
  return null;
}

const RULE_SETS: Record<string, (input: JudgeInput) => { leak: string | null }> = {
  /**
   * Leak = a statement foresight wrote names an identifier only PR2 introduces. PR1's raw text predates PR2,
   * and any 4-letter word counts here: on it the code-shaped leak detector (leak.ts) alone decides.
   */
  identifiers(input) {
    if (input.statementOrigin === 'raw') return { leak: null };
    const stated = identifiers(input.problemStatement);
    const hit = [...pr2OnlyIdentifiers(input)].find((id) => stated.has(id));
    return { leak: hit ? `the statement names ${hit}, which only PR2 introduces` : null };
  },
  /**
   * Leak = a statement foresight wrote shares a 6-word phrase with PR2's title or description. PR1's raw text
   * predates PR2: a phrase they share (a follow-up that reuses PR1's title) is PR2 quoting PR1, not a leak.
   */
  overlap(input) {
    if (input.statementOrigin === 'raw') return { leak: null };
    const pr2 = ngrams(words(`${input.pr2.title}\n${input.pr2.body}`), 6);
    const hit = [...ngrams(words(input.problemStatement), 6)].find((g) => pr2.has(g));
    return { leak: hit ? `the statement repeats PR2's words "${hit}"` : null };
  },
};

/** Is PR1's statement free of any leak of the future fix and of mechanism prescription? */
export const fairnessJudge: Judge<Fairness> = {
  name: 'fairness',
  schema: FairnessSchema,
  version: 'fairness-2',
  prompt(input) {
    const p1 = prBlocks('PR1', input.pr1);
    const p2 = prBlocks('PR2', input.pr2);
    return render(TEMPLATE, {
      task: data('TASK (the statement under judgement)', input.problemStatement),
      pr1_patch: p1.patch, pr2_text: p2.text, pr2_patch: p2.patch, pr2_tests: p2.tests,
    });
  },
  rules(input, variant) {
    const ruleSet = RULE_SETS[variant];
    if (!ruleSet) throw new Error(`unknown fairness rule set ${variant}; known: ${Object.keys(RULE_SETS).join(', ')}`);
    const { leak } = ruleSet(input);
    const quoted = quotedCode(input);
    const reasons = [leak, quoted ? `the statement quotes PR1's code: ${quoted}` : null].filter(Boolean);
    return { leak: leak !== null, prescribes_mechanism: quoted !== null, reason: reasons.join('; ') || 'no leak of PR2 and no quoted implementation' };
  },
  passes: (v) => !v.leak && !v.prescribes_mechanism,
};

export const FAIRNESS_RULE_SETS = Object.keys(RULE_SETS);
