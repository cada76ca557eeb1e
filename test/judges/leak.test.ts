import { describe, expect, it } from 'vitest';
import { leakedTokens } from '../../judges/leak.ts';
import type { JudgeInput } from '../../judges/types.ts';

/** A diff adding `lines` to `file` (what split-patch gives). */
function diff(file: string, lines: string[], context: string[] = []): string {
  return [
    `diff --git a/${file} b/${file}`,
    `--- a/${file}`,
    `+++ b/${file}`,
    `@@ -1,${context.length} +1,${context.length + lines.length} @@`,
    ...context.map((l) => ` ${l}`),
    ...lines.map((l) => `+${l}`),
  ].join('\n');
}

/** PR #1 adds slugify; PR #9 fixes whitespace runs with a new helper, a new error and a new test. */
function input(over: { pr1Body?: string; pr2Body?: string; pr2Discussion?: string } = {}): JudgeInput {
  return {
    instanceId: 'minilib__1-9',
    miningCategory: 'cross_reference',
    problemStatement: '',
    statementOrigin: 'raw',
    pr2Statement: null,
    pr1: {
      label: 'PR #1',
      title: 'Add slugify helper',
      body: over.pr1Body ?? 'slugify() lowercases a title and joins its words with hyphens, for use in URLs.',
      discussion: 'Issue #4: Need a slug helper\n\nTitles should become URL slugs, e.g. for blog_post urls.',
      patch: diff('minilib/text.py', ['def slugify(title, separator="-"):', '    words = normalize_space(title).lower().split(" ")', '    return separator.join(words)'], ['import re', 'def normalize_space(text):', '    return re.sub(r"\\s+", " ", text)']),
      testPatch: diff('tests/test_text.py', ['def test_slugify_basic():', '    assert slugify("Hello World") == "hello-world"']),
    },
    pr2: {
      label: 'PR #9',
      title: 'Fix slugify producing empty segments',
      body: over.pr2Body ?? 'Regression in #1: runs of spaces gave empty segments. Adds `_collapse_separators` and checks `separator`.',
      discussion: over.pr2Discussion ?? '',
      patch: diff('minilib/text.py', [
        'def _collapse_separators(slug, separator):',
        '    return re.sub(re.escape(separator) + "+", separator, slug)',
        'def slugify(title, separator="-"):',
        '    if len(separator) != 1:',
        '        raise ValueError(f"slug separator must be one character, got {separator!r}")',
        '    words = normalize_space(title).lower().split(" ")',
        '    return _collapse_separators(separator.join(words), separator)',
      ]),
      testPatch: diff('tests/test_text.py', [
        'def test_slugify_collapses_whitespace():',
        '    assert slugify("a  b") == "a-b"',
        'def test_slugify_rejects_long_separator():',
        '    with pytest.raises(ValueError, match="slug separator must be one character"):',
        '        slugify("a b", separator="--")',
      ]),
    },
    blame: { linesFromPr1: 3, linesFromOthers: 0, explicitReference: true },
    tests: { pr1FailToPass: ['tests/test_text.py::test_slugify_basic'], anticipation: ['tests/test_text.py::test_slugify_collapses_whitespace'] },
    feedback: null,
  };
}

describe('leak detector', () => {
  it("catches a planted leak: PR2's new helper, its error message and its test name", () => {
    const statement =
      'Add a slugify() helper that lowercases a title and joins its words with hyphens.\n\n' +
      'Runs of spaces must not give empty segments: collapse them with a `_collapse_separators` step, ' +
      'and reject a separator longer than one character with "slug separator must be one character". ' +
      'The test test_slugify_collapses_whitespace should pass.';
    expect(leakedTokens(statement, input())).toEqual([
      '_collapse_separators',
      'slug separator must be one character',
      'test_slugify_collapses_whitespace',
    ]);
  });

  it("catches a held-out test named only by the anticipation ids, and PR2's code names written as code", () => {
    const i = input();
    i.tests.anticipation.push('tests/test_text.py::TestSlugEdges::test_unicode_titles');
    const statement = 'Make slugify() handle what TestSlugEdges checks, e.g. test_unicode_titles, and call `escape` on the separator.';
    // `escape` is a plain word PR2 calls (re.escape): written as code in the statement it counts; re.escape is PR2's too.
    expect(leakedTokens(statement, i)).toEqual(['TestSlugEdges', 'escape', 'test_unicode_titles']);
    expect(leakedTokens('Make slugify() escape nothing, and return re.escape-free slugs.', i)).toEqual(['escape', 're.escape']);
  });

  it("finds nothing in a statement made of PR1's own identifiers and ordinary English", () => {
    const i = input();
    const statement =
      'Add slugify helper\n\nslugify() lowercases a title and joins its words with hyphens, for use in URLs. ' +
      'It should use normalize_space(title) first and accept a `separator` argument; blog_post titles are a typical input. ' +
      'Runs of spaces between words, a separator of one character, empty segments and long titles must all be handled ' +
      'well: the slug must never contain the separator twice in a row, and a bad separator must raise an error. ' +
      'test_slugify_basic covers the simple case.';
    expect(leakedTokens(statement, i)).toEqual([]);
    // The raw statement (PR1's title, body and discussion) is PR1's own material: never a leak.
    expect(leakedTokens(`${i.pr1.title}\n\n${i.pr1.body}\n\n${i.pr1.discussion}`, i)).toEqual([]);
  });

  it('ignores a token present in both PRs, and a plain English word PR2 happens to define', () => {
    const i = input({ pr1Body: 'slugify() joins words with hyphens. A future _collapse_separators pass may follow.' });
    expect(leakedTokens('Add slugify() and a _collapse_separators pass.', i)).toEqual([]);
    // PR2 calls escape(); as prose "escape" is English, not code.
    expect(leakedTokens('Titles may contain characters that need an escape.', i)).toEqual([]);
  });

  it("reads PR2's discussion: a traceback's error message and backticked names", () => {
    const i = input({ pr2Discussion: 'Comment by erin:\nSeen in prod:\n```\nTraceback (most recent call last):\nIndexError: list index out of range in slug_parts\n```\nCaused by `Slugger.split_words`.' });
    const statement = 'slugify() must not fail with "list index out of range in slug_parts", see Slugger.split_words.';
    expect(leakedTokens(statement, i)).toEqual(['Slugger.split_words', 'list index out of range in slug_parts', 'slug_parts', 'split_words']);
  });

  it('keeps URLs, hosts, product names and short literals out', () => {
    const i = input({ pr2Body: 'fix(text): reported on GitHub, see https://github.com/acme/minilib/issues/20 and docs.example.com; PostgreSQL users hit it, e.g. on Node.js.' });
    const statement = 'feat(text): add slugify(). See fix(text) on GitHub and docs.example.com; PostgreSQL users, e.g. on Node.js, want "a-b" slugs.';
    expect(leakedTokens(statement, i)).toEqual([]);
  });
});
