import { describe, expect, it } from 'vitest';
import { attributionJudge } from '../../judges/attribution/index.ts';
import { eligibilityJudge } from '../../judges/eligibility/index.ts';
import { FAIRNESS_RULE_SETS, fairnessJudge } from '../../judges/fairness/index.ts';
import { labelsJudge } from '../../judges/labels/index.ts';
import { solvabilityJudge } from '../../judges/solvability/index.ts';
import { makeProviders } from '../../judges/providers/registry.ts';
import { rulesProvider } from '../../judges/providers/rules.ts';
import type { JudgeInput } from '../../judges/types.ts';
import { loadConfig, loadSecrets, NO_SECRETS, type Config } from '../../core/foundation/config.ts';

// PR1 adds slugify; PR2 fixes it for consecutive spaces with a new helper and test.
const PR1_LINE = 'return "-".join(text.lower().split(" "))';
const PR2_BODY = 'Regression in #1. Consecutive spaces produced empty segments between the dashes of a slug.';

function chain(problemStatement: string, over: Partial<JudgeInput> = {}): JudgeInput {
  return {
    instanceId: 'minilib__1-9',
    miningCategory: 'cross_reference',
    problemStatement,
    statementOrigin: 'written',
    pr1: {
      label: 'PR #1',
      title: 'Add slugify helper',
      body: 'slugify() lowercases a title and joins its words with hyphens, for use in URLs.',
      patch: `--- a/minilib/text.py\n+++ b/minilib/text.py\n@@ -1,0 +1,2 @@\n+def slugify(text):\n+    ${PR1_LINE}\n`,
      testPatch: '+def test_slugify_basic():\n+    assert slugify("Hello World") == "hello-world"\n',
      discussion: '',
    },
    pr2: {
      label: 'PR #9',
      title: 'Fix slugify producing empty segments',
      body: PR2_BODY,
      patch: '+def _collapse_whitespace(text):\n+    return " ".join(text.split())\n',
      testPatch: '+def test_slugify_collapses_whitespace():\n+    assert slugify("a  b") == "a-b"\n',
      discussion: '',
    },
    pr2Statement: null,
    tests: { pr1FailToPass: ['tests/test_text.py::test_slugify_basic'], anticipation: ['tests/test_text.py::test_slugify_collapses_whitespace'] },
    feedback: null,
    blame: { linesFromPr1: 1, linesFromOthers: 0, explicitReference: true },
    ...over,
  };
}

const CLEAN = 'Add a helper that turns a title into a URL slug: lowercase words joined by hyphens.';

/** The rules' eligibility for PR2 with this title (and body, empty unless given; patch, discussion): its verdict, or null (abstained). */
function eligibility(title: string, over: Partial<JudgeInput['pr2']> = {}) {
  const input = chain(CLEAN);
  const v = eligibilityJudge.rules({ ...input, pr2: { ...input.pr2, title, body: '', ...over } }, 'default');
  return v === null ? null : { verdict: v.verdict, pass: eligibilityJudge.passes(v) };
}

const diff = (file: string, removed: string, added: string) => `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1 +1 @@\n-${removed}\n+${added}\n`;

function attribution(linesFromPr1: number, linesFromOthers: number) {
  const v = attributionJudge.rules(chain(CLEAN, { blame: { linesFromPr1, linesFromOthers, explicitReference: false } }), 'default');
  return v === null ? null : { code: v.code, pass: attributionJudge.passes(v) };
}

describe('eligibility rules', () => {
  it('a revert is ineligible, even a revert of a fix, in git\'s and Django\'s wording', () => {
    expect(eligibility('Revert "Add word_count helper (#5)"')).toEqual({ verdict: 'revert', pass: false });
    expect(eligibility('Revert "Fix clamp truncating floats"')).toEqual({ verdict: 'revert', pass: false });
    expect(eligibility('Reverted "Fixed #33718 -- Dropped support for MySQL 5.7."')).toEqual({ verdict: 'revert', pass: false });
    expect(eligibility('Refs #34233 -- Reverted "Refs #34233 -- Used types.NoneType."')).toEqual({ verdict: 'revert', pass: false });
    expect(eligibility('Undo the word_count helper', { body: 'This reverts commit 0123456789abcdef0123456789abcdef01234567.' })).toEqual({ verdict: 'revert', pass: false });
    // A squashed PR listing one reverted commit among its own is not a revert.
    expect(eligibility('Iterative removal of leaves in steiner_tree', { body: '* first try\n\n* Revert "first try"\n\nThis reverts commit 0123456789abcdef0123456789abcdef01234567.\n\n* iterative version' })).toBeNull();
  });

  it('a change that outside its tests only touches documentation, or only version strings, is not a bug fix', () => {
    expect(eligibility('Clarified slugify()', { patch: diff('docs/ref/utils.txt', 'Turns a title into a slug.', 'Turns a title into a URL slug.') })).toEqual({ verdict: 'not_a_bug', pass: false });
    expect(eligibility('Release 0.2.0', { patch: diff('minilib/__init__.py', '__version__ = "0.1.0"', '__version__ = "0.2.0"') })).toEqual({ verdict: 'not_a_bug', pass: false });
    // Documentation beside a code change: the rules cannot tell, so they abstain.
    const both = diff('docs/ref/utils.txt', 'a', 'b') + diff('minilib/text.py', 'return "-".join(text.split())', 'return "-".join(text.split(" "))');
    expect(eligibility('Clarified slugify()', { patch: both })).toBeNull();
  });

  it('an explicit feature request with no defect signal anywhere is a feature; a defect word in its title, message or ticket keeps it', () => {
    expect(eligibility('feat(text): add a separator option to slugify')).toEqual({ verdict: 'feature', pass: false });
    expect(eligibility('ENH: add a separator option to slugify')).toEqual({ verdict: 'feature', pass: false });
    expect(eligibility('Add binary units option to format_bytes (#11)', { body: 'Follow-up to #4: support IEC units (KiB, MiB) with binary=True.' })).toEqual({ verdict: 'feature', pass: false });
    expect(eligibility('Added missing timeout argument to Client.get()')).toBeNull();
    expect(eligibility('Fixed #1234 -- Added support for lazy widgets.')).toEqual({ verdict: 'feature', pass: false });
    expect(eligibility('Add a separator option', { body: 'Feature request from the mailing list.' })).toEqual({ verdict: 'feature', pass: false });
    expect(eligibility('feat(text): add a separator option to slugify', { body: 'slugify crashed on tabs, so the separator is configurable now.' })).toBeNull();
    expect(eligibility('Fixed #1234 -- Added support for lazy widgets.', { discussion: 'Ticket #1234 by x:\nRendering a lazy widget raises TypeError.' })).toBeNull();
  });

  it('Django\'s own verbs name no defect rules can read: the rules abstain, they never exclude (true chains of a Django window)', () => {
    for (const title of [
      'Refs #34925 -- Avoided altering passed by reference refresh_from_db(fields).',
      'Refs #34975 -- Complemented rhs filtering aggregations for __in lookup.',
      'Fixed #34927 -- Fixed admin system check for inlines with foreign keys to proxy models.',
      'Refs #34717 -- Avoided computing aggregate refs twice.',
    ]) {
      expect(eligibility(title, { body: 'Follow up to 0e8be73812a6e62d5a6b12a585d133b56bc2bf52.' }), title).toBeNull();
    }
  });

  it('titles that only suggest what a change is (a fix, a refactor, an addition, nothing) are left to a model', () => {
    for (const title of ['Fix slugify producing empty segments', 'Refactor duration parsing into a table', 'Add a binary helper to format_bytes', 'Update documentation', 'Refs #10941 -- Renamed query_string template tag to querystring.']) {
      expect(eligibility(title), title).toBeNull();
    }
  });
});

describe('attribution rules', () => {
  it('no fixed line from PR1: D, fails', () => {
    expect(attribution(0, 5)).toEqual({ code: 'D', pass: false });
  });

  it('a share of blamed lines says neither that PR1 introduced the defect nor that it predates PR1: abstains', () => {
    expect(attribution(1, 4)).toBeNull();
    expect(attribution(3, 1)).toBeNull();
  });
});

describe('fairness rules', () => {
  const judge = (statement: string, ruleSet: string) => {
    const v = fairnessJudge.rules(chain(statement), ruleSet)!;
    return { ...v, pass: fairnessJudge.passes(v) };
  };

  it('a statement naming an identifier only PR2 introduces leaks (identifiers rule set)', () => {
    const v = judge('Add slugify. Make sure _collapse_whitespace is applied to the input first.', 'identifiers');
    expect(v).toMatchObject({ leak: true, prescribes_mechanism: false, pass: false });
    expect(v.reason).toContain('_collapse_whitespace');
    // The other rule set looks at prose, not names: the two judges are independent.
    expect(judge('Add slugify. Make sure _collapse_whitespace is applied to the input first.', 'overlap').leak).toBe(false);
  });

  it('an identifier PR1 also uses is not a leak', () => {
    // slugify appears in PR2's diff too, but PR1 introduced it.
    expect(judge('Add slugify for URLs.', 'identifiers').leak).toBe(false);
  });

  it('trial: a true chain (#32975 → #34927, "Follow up to …") was excluded unfair_statement because PR1\'s own title shares words with PR2\'s → the overlap rule leaves PR1\'s raw text alone', () => {
    const follow = { title: 'Fixed #34927 -- Follow up to adding slugify helper for titles in URLs', body: '' };
    const raw = fairnessJudge.rules(chain('Add slugify helper for titles in URLs.', { statementOrigin: 'raw', pr2: { ...chain('').pr2, ...follow } }), 'overlap')!;
    expect(raw).toMatchObject({ leak: false });
    expect(fairnessJudge.passes(raw)).toBe(true);
    // The same words in a statement foresight wrote could only come from PR2: still a leak.
    const written = fairnessJudge.rules(chain('Add slugify helper for titles in URLs.', { statementOrigin: 'written', pr2: { ...chain('').pr2, ...follow } }), 'overlap')!;
    expect(written).toMatchObject({ leak: true });
  });

  it("PR1's raw text predates PR2: neither rule set calls a word it shares with PR2 a leak; quoting PR1's code still prescribes", () => {
    const raw = (statement: string, set: string) => fairnessJudge.rules(chain(statement, { statementOrigin: 'raw' }), set)!;
    for (const set of FAIRNESS_RULE_SETS) expect(raw('Add slugify. Make sure _collapse_whitespace is applied to the input first.', set)).toMatchObject({ leak: false, prescribes_mechanism: false });
    expect(raw(`Add a slug helper implemented as: ${PR1_LINE}`, 'identifiers')).toMatchObject({ leak: false, prescribes_mechanism: true });
  });

  it("a statement repeating a 6-word phrase of PR2's body leaks (overlap rule set)", () => {
    const v = judge('Add a slug helper; consecutive spaces produced empty segments between words.', 'overlap');
    expect(v).toMatchObject({ leak: true, pass: false });
    expect(v.reason).toContain('consecutive spaces produced empty segments between');
  });

  it("a statement quoting a >=25-char line of PR1's added code prescribes the mechanism", () => {
    expect(PR1_LINE.length).toBeGreaterThanOrEqual(25);
    for (const set of FAIRNESS_RULE_SETS) {
      const v = judge(`Add a slug helper implemented as: ${PR1_LINE}`, set);
      expect(v).toMatchObject({ leak: false, prescribes_mechanism: true, pass: false });
    }
  });

  it('a clean PR1-only statement passes both rule sets', () => {
    expect(FAIRNESS_RULE_SETS).toEqual(expect.arrayContaining(['identifiers', 'overlap']));
    for (const set of FAIRNESS_RULE_SETS) expect(judge(CLEAN, set)).toMatchObject({ leak: false, prescribes_mechanism: false, pass: true });
  });

  it('an unknown rule set is an error, not a silent pass', () => {
    expect(() => fairnessJudge.rules(chain(CLEAN), 'nope')).toThrow(/unknown fairness rule set/);
  });
});

describe('rules provider', () => {
  it('writes its name and rule set as provider/model and answers with the judge rules', async () => {
    const p = rulesProvider('identifiers');
    expect({ name: p.name, model: p.model }).toEqual({ name: 'rules', model: 'identifiers' });
    const v = await p.ask(fairnessJudge, chain('Use _collapse_whitespace.'));
    expect(v).toMatchObject({ value: { leak: true }, calls: 0, cached: false, usage: { prompt_tokens: 0, completion_tokens: 0 } });
    const revert = chain(CLEAN, { pr2: { ...chain(CLEAN).pr2, title: 'Revert "Add slugify helper (#1)"' } });
    expect(await rulesProvider().ask(eligibilityJudge, revert)).toMatchObject({ value: { verdict: 'revert' } });
  });

  it('answers null for a judge rules cannot answer, or a chain they cannot judge (the column stays null, never guessed)', async () => {
    expect(await rulesProvider().ask(eligibilityJudge, chain(CLEAN))).toBeNull();
    expect(await rulesProvider().ask(solvabilityJudge, chain(CLEAN))).toBeNull();
    expect(await rulesProvider().ask(labelsJudge, chain(CLEAN))).toBeNull();
  });
});

describe('makeProviders', () => {
  it('offline: two fairness judges with DIFFERENT rule sets (one judge twice is not independent)', async () => {
    const { main, fairness } = makeProviders(loadConfig({}), NO_SECRETS, { cacheDir: null });
    expect(main.name).toBe('rules');
    expect(fairness.map((f) => f.name)).toEqual(['rules', 'rules']);
    expect(fairness[0].model).not.toBe(fairness[1].model);
    // They must actually judge differently, not just carry different labels.
    const input = chain('Add slugify. Make sure _collapse_whitespace is applied to the input first.');
    const [a, b] = await Promise.all(fairness.map((f) => f.ask(fairnessJudge, input)));
    expect(a!.value.leak).not.toBe(b!.value.leak);
  });

  it('with judge.provider openai and the LLM env set: openai-compatible providers with the two fairness models', () => {
    const env = {
      FORESIGHT_LLM_BASE_URL: 'http://127.0.0.1:9/v1',
      FORESIGHT_LLM_API_KEY: 'test-key-not-secret',
      FORESIGHT_JUDGE_MODEL: 'judge-m',
      FORESIGHT_FAIRNESS_MODELS: 'fair-a, fair-b',
    };
    const config: Config = loadConfig(env);
    expect(config.judge.provider).toBe('openai');
    const { main, fairness } = makeProviders(config, loadSecrets(env), { cacheDir: null });
    expect({ name: main.name, model: main.model }).toEqual({ name: 'openai-compatible', model: 'judge-m' });
    expect(fairness.map((f) => [f.name, f.model])).toEqual([
      ['openai-compatible', 'fair-a'],
      ['openai-compatible', 'fair-b'],
    ]);
  });

  it('a config without an endpoint ignores an LLM key among the secrets', () => {
    const env = { FORESIGHT_LLM_BASE_URL: 'http://127.0.0.1:9/v1', FORESIGHT_LLM_API_KEY: 'k', FORESIGHT_JUDGE_MODEL: 'm', FORESIGHT_FAIRNESS_MODELS: 'a,b' };
    expect(makeProviders(loadConfig({}), loadSecrets(env), { cacheDir: null }).main.name).toBe('rules');
  });
});

describe('eligibility on Trac-style titles', () => {
  it('reads what the change says, not the "Fixed #N --" ticket prefix: "Fixed" there closes a ticket of any type', () => {
    expect(eligibility('Fixed #35603 -- Added support for F.__contains__() lookups.')).toEqual({ verdict: 'feature', pass: false });
    expect(eligibility('Fixed #35603 -- Prevented F.__contains__() from hanging.')).toBeNull();
    expect(eligibility('Fixed #35545, Refs #32833 -- Reverted "Fixed #32833 -- Fixed ContentTypeManager.get_for_models() crash."')).toEqual({ verdict: 'revert', pass: false });
  });
});
