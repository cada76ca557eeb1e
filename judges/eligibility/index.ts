import { EligibilitySchema, type Eligibility } from '../../core/foundation/model/verdicts.ts';
import { prBlocks } from '../blocks.ts';
import { loadTemplate, render } from '../template.ts';
import type { Judge, JudgeInput } from '../types.ts';

const TEMPLATE = loadTemplate(new URL('./prompt.md', import.meta.url));

/** Django-style "Fixed #N -- " / "Refs #N -- " prefixes name a ticket, not what the change does. */
const TICKET_PREFIX = /^(\[[\w.]+\]\s*)?((Fixed|Refs)\s+#?\d+(\s*,\s*|\s+and\s+)?)+\s*--\s*/i;
/**
 * "Revert ...", Django's "Reverted ...", and the line `git revert` writes first in the message (further down,
 * in a squashed PR's list of commits, it names one commit of the PR, not the PR).
 */
const REVERT_TITLE = /^(\[[\w.]+\]\s*)?revert(s|ed)?\b/i;
const REVERT_BODY = /^\s*This reverts commit [0-9a-f]{7,40}\b/;
/**
 * The author's own statement that the change is a feature: a conventional-commit or numpy-style type, a
 * tag, the words "feature request" / "new feature", or a title that adds support for something or adds an
 * option, argument, parameter, setting or flag.
 */
const FEATURE_REQUEST: ReadonlyArray<[RegExp, 'title' | 'text']> = [
  [/^(feat|feature)(\([^)]*\))?!?:/i, 'title'],
  [/^ENH\b/, 'title'],
  [/^\[(feat|feature|enhancement)\]/i, 'title'],
  [/^add(s|ed)? support for\b/i, 'title'],
  [/^add(s|ed)?\b[^.]*\b(option|argument|parameter|setting|flag)s?\b/i, 'title'],
  [/\b(feature request|new feature)\b/i, 'text'],
];
/** Any word that says something was wrong: a change whose text has one is never excluded as a feature. */
const DEFECT =
  /\b(fix(e[sd]|ing)?|bug(s|fix)?|regression|regress(ed|es)?|crash(es|ed|ing)?|broken|breaks?|incorrect(ly)?|wrong(ly)?|errors?|exceptions?|traceback|fail(s|ed|ing|ures?)?|mishandl\w*|misbehav\w*|unexpected(ly)?|invalid|hang(s|ed|ing)?|missing|typo|(does|did|do)\s*n[o']t work|not work(ing)?|\w+(Error|Exception))\b/i;
/** Documentation: a docs folder, prose files, the project's own text files. */
const DOC_FILE = /(^|\/)(docs?|documentation)\/|\.(rst|md|markdown|adoc|txt)$|(^|\/)(README|CHANGELOG|CHANGES|NEWS|HISTORY|AUTHORS|CONTRIBUTORS)[^/]*$/i;

/** The files a unified diff changes (its b/ side, or a/ for a deletion). */
export function diffFiles(diff: string): string[] {
  return [...new Set([...diff.matchAll(/^diff --git "?a\/(.*?)"? "?b\/(.*?)"?$/gm)].map((m) => m[2] || m[1]!))];
}

/** Lines a diff adds or removes, without file headers and blank lines. */
function changedLines(diff: string): string[] {
  return diff.split('\n').filter((l) => /^[+-]/.test(l) && !/^(\+\+\+|---) /.test(l) && l.slice(1).trim() !== '').map((l) => l.slice(1));
}

/** One exclusion PR2's own material can show: each reads only what is reliable (the diff, a fixed form of words). */
export interface EligibilityRule {
  id: 'revert' | 'docs_or_version_only' | 'feature_request';
  verdict: Exclude<Eligibility['verdict'], 'bug_fix'>;
  /** The evidence when the rule applies, else null. */
  applies(input: JudgeInput): string | null;
}

export const ELIGIBILITY_RULES: readonly EligibilityRule[] = [
  {
    id: 'revert',
    verdict: 'revert',
    applies({ pr2 }) {
      const title = pr2.title.trim().replace(TICKET_PREFIX, '');
      if (REVERT_TITLE.test(title)) return `the title says it reverts: ${pr2.title.trim()}`;
      const line = pr2.body.match(REVERT_BODY);
      return line ? `the message says "${line[0]}"` : null;
    },
  },
  {
    id: 'docs_or_version_only',
    verdict: 'not_a_bug',
    applies({ pr2 }) {
      const files = diffFiles(pr2.patch);
      if (!files.length) return null;
      if (files.every((f) => DOC_FILE.test(f))) return `the change outside tests is documentation only: ${files.join(', ')}`;
      const code = changedLines(pr2.patch.split(/(?=^diff --git )/m).filter((s) => !diffFiles(s).every((f) => DOC_FILE.test(f))).join(''));
      if (code.length && code.every((l) => /version/i.test(l))) return `every changed line outside documentation and tests is a version: ${code.slice(0, 3).join(' | ')}`;
      return null;
    },
  },
  {
    id: 'feature_request',
    verdict: 'feature',
    applies({ pr2 }) {
      const title = pr2.title.trim().replace(TICKET_PREFIX, '');
      // The ticket prefix's "Fixed" closes a ticket of any type: the defect check reads the rest.
      const text = [title, pr2.body, pr2.discussion].join('\n');
      const hit = FEATURE_REQUEST.map(([re, where]) => (where === 'title' ? title : text).match(re)).find((m) => m !== null);
      if (!hit) return null;
      const defect = text.match(DEFECT);
      return defect ? null : `it says "${hit[0].trim()}" and nothing in its title, message or discussion names a defect`;
    },
  },
];

/**
 * Is PR2 a fix of an edge case PR1 missed (not a feature, revert, refactor or non-bug)? The rules only
 * exclude on what they can read reliably (ELIGIBILITY_RULES); everything else is for a model to judge, so
 * they abstain (null): a project's own verbs ("Avoided ...", "Complemented ...") say nothing rules can trust.
 */
export const eligibilityJudge: Judge<Eligibility> = {
  name: 'eligibility',
  schema: EligibilitySchema,
  version: 'eligibility-3',
  prompt(input) {
    const b = prBlocks('PR2', input.pr2);
    return render(TEMPLATE, { pr2_text: b.text, pr2_discussion: b.discussion, pr2_patch: b.patch, pr2_tests: b.tests });
  },
  rules(input) {
    for (const rule of ELIGIBILITY_RULES) {
      const evidence = rule.applies(input);
      if (evidence) return { verdict: rule.verdict, reason: `${evidence} (rule ${rule.id})` };
    }
    return null;
  },
  passes: (v) => v.verdict === 'bug_fix',
};
