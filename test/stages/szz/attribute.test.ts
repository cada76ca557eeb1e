/**
 * SZZ attribution on small real git histories: each test builds the history that would make a naive
 * blame (B-SZZ) point at the wrong commit, and checks that foresight's variant blames the commit that
 * actually wrote the defect.
 */
import { describe, expect, it } from 'vitest';
import { attributeFix, type AttributeOptions, type Attribution } from '../../../stages/szz/attribute.ts';
import { YEAR } from '../../../stages/szz/fit.ts';
import { MetaChanges } from '../../../stages/szz/meta.ts';
import { freshRepos, type GitRepo } from '../../helpers/git-repo.ts';

const fresh = freshRepos();

/** Noon UTC on day `n` of January 2024. */
const day = (n: number): string => `2024-01-${String(n).padStart(2, '0')}T12:00:00Z`;

/** Attribute the fix commit `fix` (its parent is the base) with a fresh MetaChanges over `repo`. */
async function attribute(repo: GitRepo, fix: string, opts: Partial<AttributeOptions> & Pick<AttributeOptions, 'variant'>): Promise<Attribution> {
  const base = (await repo.git(['rev-parse', `${fix}^1`])).trim();
  return attributeFix(repo.dir, { baseSha: base, mergeSha: fix }, { meta: new MetaChanges(repo.dir), ...opts });
}

const shas = (a: Attribution): string[] => a.commits.map((c) => c.sha);
const top = (a: Attribution): string | undefined => a.commits[0]?.sha;

describe('attributeFix on real histories', () => {
  it('reformatting_commit_is_looked_through', async () => {
    const repo = await fresh();
    const a = await repo.commit({
      files: { 'pkg/a.py': 'def first(s):\n  parts = s.split(",")\n  return parts[1]\n' },
      message: 'Add first()',
      date: day(1),
    });
    // Re-indent the whole file from 2 to 4 spaces: whitespace only.
    const b = await repo.commit({
      files: { 'pkg/a.py': 'def first(s):\n    parts = s.split(",")\n    return parts[1]\n' },
      message: 'Reformat',
      date: day(2),
    });
    const c = await repo.commit({
      files: { 'pkg/a.py': 'def first(s):\n    parts = s.split(",")\n    return parts[0]\n' },
      message: 'Fix first() returning the second item',
      date: day(3),
    });
    expect(shas(await attribute(repo, c, { variant: 'foresight' }))).toEqual([a]);
    expect(shas(await attribute(repo, c, { variant: 'b-szz' }))).toEqual([b]);
  });

  it('git_blame_ignore_revs_is_honoured', async () => {
    const repo = await fresh();
    const a = await repo.commit({
      files: { 'pkg/greet.py': "def greet(name):\n    prefix = 'Hello'\n    return prefix + ', ' + name + '!!'\n" },
      message: 'Add greet()',
      date: day(1),
    });
    // A style change on every line, the buggy one included: not whitespace, one file, not a revert.
    const b = await repo.commit({
      files: { 'pkg/greet.py': 'def greet(name):\n    prefix = "Hello"\n    return prefix + ", " + name + "!!"\n' },
      message: 'Use double quotes',
      date: day(2),
    });
    await repo.commit({ files: { '.git-blame-ignore-revs': `# quote style\n${b}\n` }, message: 'Ignore the quote-style commit in blame', date: day(3) });
    const c = await repo.commit({
      files: { 'pkg/greet.py': 'def greet(name):\n    prefix = "Hello"\n    return prefix + ", " + name + "!"\n' },
      message: 'Fix greet() double exclamation mark',
      date: day(4),
    });
    expect(await new MetaChanges(repo.dir).classify(b)).toBeNull();
    expect(shas(await attribute(repo, c, { variant: 'foresight' }))).toEqual([a]);
    // The file is what makes the difference: without MetaChanges nobody reads it.
    expect(shas(await attribute(repo, c, { variant: 'foresight', meta: undefined }))).toEqual([b]);
    expect(shas(await attribute(repo, c, { variant: 'b-szz' }))).toEqual([b]);
  });

  it('mass_change_is_looked_through', async () => {
    const repo = await fresh();
    const others = Array.from({ length: 99 }, (_, i) => `pkg/gen/m${String(i).padStart(3, '0')}.py`);
    const body = (helper: string, i: number): string => `from pkg.util import ${helper}\n\n\ndef run_${i}(x):\n    return ${helper}(x)\n`;
    await repo.commit({ files: Object.fromEntries(others.map((p, i) => [p, body('old_helper', i)])), message: 'Add generated modules', date: day(1) });
    const a = await repo.commit({
      files: { 'pkg/a.py': 'from pkg.util import old_helper\n\n\ndef total(x):\n    return old_helper(x) + 1\n' },
      message: 'Add total()',
      date: day(2),
    });
    // A rename across 100 files, the buggy line included.
    const b = await repo.commit({
      files: {
        'pkg/a.py': 'from pkg.util import new_helper\n\n\ndef total(x):\n    return new_helper(x) + 1\n',
        ...Object.fromEntries(others.map((p, i) => [p, body('new_helper', i)])),
      },
      message: 'Rename old_helper to new_helper everywhere',
      date: day(3),
    });
    const c = await repo.commit({
      files: { 'pkg/a.py': 'from pkg.util import new_helper\n\n\ndef total(x):\n    return new_helper(x)\n' },
      message: 'Fix total() off by one',
      date: day(4),
    });
    expect(await new MetaChanges(repo.dir).classify(b)).toBe('mass_change');
    const fs = await attribute(repo, c, { variant: 'foresight' });
    expect(shas(fs)).toEqual([a]);
    // Known mass changes are ignored up front (one blame round), so they never surface as blamed.
    expect(fs.metaSkipped).toEqual([]);
    expect(shas(await attribute(repo, c, { variant: 'b-szz' }))).toEqual([b]);
  });

  it('a_line_a_mass_change_wrote_is_nobodys', async () => {
    // Blame cannot look through a line the mass change itself added: git leaves it with that commit,
    // which must not become PR1 (Django: its Black reformatting was a chain's PR1 so).
    const repo = await fresh();
    const others = Array.from({ length: 99 }, (_, i) => `pkg/gen/m${String(i).padStart(3, '0')}.py`);
    const body = (i: number): string => `def run_${i}(x):\n    return x\n`;
    await repo.commit({ files: { ...Object.fromEntries(others.map((p, i) => [p, body(i)])), 'pkg/a.py': 'def total(x):\n    return x + 1\n' }, message: 'Add modules', date: day(1) });
    const future = 'from __future__ import annotations\n\n';
    const b = await repo.commit({
      files: { 'pkg/a.py': `${future}def total(x):\n    return x + 1\n`, ...Object.fromEntries(others.map((p, i) => [p, `${future}${body(i)}`])) },
      message: 'Add the future import everywhere',
      date: day(2),
    });
    const c = await repo.commit({ files: { 'pkg/a.py': 'from __future__ import annotations, division\n\ndef total(x):\n    return x + 1\n' }, message: 'Fix division in total()', date: day(3) });
    expect(await new MetaChanges(repo.dir).classify(b)).toBe('mass_change');
    expect(shas(await attribute(repo, c, { variant: 'b-szz' }))).toEqual([b]);
    const fs = await attribute(repo, c, { variant: 'foresight' });
    expect(shas(fs)).toEqual([]);
    expect(fs.blamedLines).toBe(0);
  });

  it('revert_is_not_an_inducing_commit', async () => {
    const repo = await fresh();
    const head = 'def scale(x):\n    y = x * 2\n';
    const a = await repo.commit({ files: { 'pkg/scale.py': `${head}    return y + 1\n` }, message: 'Add scale()', date: day(1) });
    // D removes the buggy line; R, a revert of D, puts it back: R is the line's last toucher.
    const d = await repo.commit({ files: { 'pkg/scale.py': head }, message: 'Drop the return of scale()', date: day(2) });
    await repo.commit({ files: { 'pkg/other.py': 'Z = 1\n' }, message: 'Add other', date: day(3) });
    const r = await repo.commit({
      files: { 'pkg/scale.py': `${head}    return y + 1\n` },
      message: `Revert "Drop the return of scale()"\n\nThis reverts commit ${d}.\n`,
      date: day(4),
    });
    const c = await repo.commit({ files: { 'pkg/scale.py': `${head}    return y\n` }, message: 'Fix scale() adding one', date: day(5) });
    expect(await new MetaChanges(repo.dir).classify(r)).toBe('revert');
    const fs = await attribute(repo, c, { variant: 'foresight' });
    expect(shas(fs)).toEqual([a]);
    expect(fs.metaSkipped).toContainEqual({ sha: r, reason: 'revert' });
    expect(shas(await attribute(repo, c, { variant: 'b-szz' }))).toEqual([r]);
  });

  it('reverted_change_is_not_blamed_for_the_line_its_revert_restored', async () => {
    const repo = await fresh();
    const head = 'def scale(x):\n    y = x * 2\n';
    const a = await repo.commit({ files: { 'pkg/scale.py': `${head}    return y + 1\n` }, message: 'Add scale()', date: day(1) });
    // D changes the buggy line; R reverts D, restoring A's line. D's text is gone: D cannot be the culprit.
    const d = await repo.commit({ files: { 'pkg/scale.py': `${head}    return y + 2\n` }, message: 'Add two in scale()', date: day(2) });
    const r = await repo.commit({
      files: { 'pkg/scale.py': `${head}    return y + 1\n` },
      message: `Revert "Add two in scale()"\n\nThis reverts commit ${d}.\n`,
      date: day(3),
    });
    const c = await repo.commit({ files: { 'pkg/scale.py': `${head}    return y\n` }, message: 'Fix scale() adding one', date: day(4) });
    expect(shas(await attribute(repo, c, { variant: 'foresight' }))).toEqual([a]);
    expect(shas(await attribute(repo, c, { variant: 'b-szz' }))).toEqual([r]);
  });

  it('looking_through_a_revert_keeps_the_authors_of_lines_it_did_not_restore', async () => {
    const repo = await fresh();
    const head = 'def scale(x):\n    y = x * 2\n';
    const a = await repo.commit({ files: { 'pkg/scale.py': `${head}    return y + 1\n` }, message: 'Add scale()', date: day(1) });
    const d = await repo.commit({ files: { 'pkg/scale.py': head }, message: 'Drop the return of scale()', date: day(2) });
    // E writes a line after D: it is not in D's parent, so it must not follow the revert's graft.
    const e = await repo.commit({ files: { 'pkg/scale.py': `${head}LIMIT = 10\n` }, message: 'Add LIMIT', date: day(3) });
    await repo.commit({
      files: { 'pkg/scale.py': `${head}    return y + 1\nLIMIT = 10\n` },
      message: `Revert "Drop the return of scale()"\n\nThis reverts commit ${d}.\n`,
      date: day(4),
    });
    const c = await repo.commit({ files: { 'pkg/scale.py': `${head}    return y\nLIMIT = 100\n` }, message: 'Fix scale() and LIMIT', date: day(5) });
    const fs = await attribute(repo, c, { variant: 'foresight' });
    expect(new Set(fs.commits.map((x) => `${x.sha}:${x.lines.map((l) => l.line).join(',')}`))).toEqual(new Set([`${a}:3`, `${e}:4`]));
  });

  it('commit_after_the_report_cannot_induce_the_bug', async () => {
    const repo = await fresh();
    const a = await repo.commit({
      files: { 'pkg/calc.py': 'def calc(a, b):\n    s = a - b\n    t = s * 3\n    u = t + 7\n    return u\n' },
      message: 'Add calc()',
      date: day(1),
    });
    const b = await repo.commit({
      files: { 'pkg/calc.py': 'def calc(a, b):\n    s = a - b\n    t = s * 4\n    u = t + 8\n    return u\n' },
      message: 'Tune calc() constants',
      date: day(10),
    });
    // The fix rewrites A's line 2 and B's lines 3 and 4: B outweighs A unless B postdates the report.
    const c = await repo.commit({
      files: { 'pkg/calc.py': 'def calc(a, b):\n    s = a + b\n    t = s * 5\n    u = t + 9\n    return u\n' },
      message: 'Fix calc()',
      date: day(11),
    });
    const unfiltered = await attribute(repo, c, { variant: 'foresight' });
    expect(unfiltered.commits.map((x) => [x.sha, x.score])).toEqual([
      [b, 2],
      [a, 1],
    ]);
    expect(unfiltered.filteredByTime).toBe(0);
    const filtered = await attribute(repo, c, { variant: 'foresight', reportedAt: day(5) });
    expect(filtered.commits.map((x) => [x.sha, x.score])).toEqual([[a, 1]]);
    expect(filtered.filteredByTime).toBe(2);
    expect(filtered.blamedLines).toBe(3);
  });

  it('add_only_fix_blames_the_enclosing_function', async () => {
    const repo = await fresh();
    const ratio = 'def ratio(a, b):\n    total = a + b\n    return a / total\n';
    const a = await repo.commit({ files: { 'pkg/ratio.py': ratio }, message: 'Add ratio()', date: day(1) });
    // Another function in the same file, by another commit: outside the block, never blamed.
    const x = await repo.commit({ files: { 'pkg/ratio.py': `${ratio}\n\ndef double(v):\n    return v * 2\n` }, message: 'Add double()', date: day(2) });
    const c = await repo.commit({
      files: {
        'pkg/ratio.py': 'def ratio(a, b):\n    total = a + b\n    if total == 0:\n        return 0.0\n    return a / total\n\n\ndef double(v):\n    return v * 2\n',
      },
      message: 'Fix ratio() dividing by zero',
      date: day(3),
    });
    const fs = await attribute(repo, c, { variant: 'foresight' });
    expect(fs.addOnly).toBe(true);
    expect(top(fs)).toBe(a);
    expect(shas(fs)).not.toContain(x);
    // The whole function is worth one line: 0.5 for the two lines around the insertion, 0.5 for the rest.
    expect(fs.commits[0]!.score).toBeCloseTo(1, 12);
    expect(fs.commits[0]!.lines.map((l) => l.line).sort()).toEqual([1, 2, 3]);
    const plain = await attribute(repo, c, { variant: 'b-szz' });
    expect(plain.addOnly).toBe(true);
    expect(plain.commits).toEqual([]);
  });

  it('blank_and_comment_lines_are_not_blamed', async () => {
    const repo = await fresh();
    const a = await repo.commit({ files: { 'pkg/mean.py': 'def mean(xs):\n    return sum(xs) / len(xs) + 1\n' }, message: 'Add mean()', date: day(1) });
    const x = await repo.commit({
      files: { 'pkg/mean.py': 'def mean(xs):\n    # the arithmetic mean\n    return sum(xs) / len(xs) + 1\n' },
      message: 'Document mean()',
      date: day(2),
    });
    // The fix deletes X's comment and rewrites A's code line.
    const c = await repo.commit({ files: { 'pkg/mean.py': 'def mean(xs):\n    return sum(xs) / len(xs)\n' }, message: 'Fix mean()', date: day(3) });
    const fs = await attribute(repo, c, { variant: 'foresight' });
    expect(shas(fs)).toEqual([a]);
    expect(fs.blamedLines).toBe(1);
    expect(new Set(shas(await attribute(repo, c, { variant: 'b-szz' })))).toEqual(new Set([a, x]));
  });

  it('test_only_fix_blames_its_tests', async () => {
    const repo = await fresh();
    await repo.commit({ files: { 'pkg/inc.py': 'def inc(x):\n    return x + 1\n' }, message: 'Add inc()', date: day(1) });
    const t = await repo.commit({
      files: { 'tests/test_inc.py': 'from pkg.inc import inc\n\n\ndef test_inc():\n    assert inc(1) == 3\n' },
      message: 'Test inc()',
      date: day(2),
    });
    const doc = await repo.commit({ files: { 'docs/inc.md': 'inc adds two\n' }, message: 'Document inc()', date: day(3) });
    // The fix repairs the test's expectation (and the docs); no code file changes.
    const c = await repo.commit({
      files: { 'tests/test_inc.py': 'from pkg.inc import inc\n\n\ndef test_inc():\n    assert inc(1) == 2\n', 'docs/inc.md': 'inc adds one\n' },
      message: 'Fix test_inc expectation',
      date: day(4),
    });
    const fs = await attribute(repo, c, { variant: 'foresight' });
    expect(shas(fs)).toEqual([t]);
    expect(fs.commits[0]!.lines).toEqual([{ file: 'tests/test_inc.py', line: 5 }]);
    // B-SZZ blames every changed file, docs included.
    expect(new Set(shas(await attribute(repo, c, { variant: 'b-szz' })))).toEqual(new Set([t, doc]));
  });

  it('moved_lines_follow_their_origin', async () => {
    const repo = await fresh();
    const small = 'def clamp_percentage(value):\n    bounded_value = min(max(value, 0), 1000)\n    return bounded_value\n';
    const fixedSmall = 'def clamp_percentage(value):\n    bounded_value = min(max(value, 0), 100)\n    return bounded_value\n';
    const big = Array.from({ length: 12 }, (_, i) => `    total_amount_${i} = compute_component_number(${i})`).join('\n');
    const large = `def summarize_everything():\n${big}\n    return locals()\n`;
    const a = await repo.commit({ files: { 'pkg/m.py': `${small}\n\n${large}` }, message: 'Add clamp and summary', date: day(1) });
    // B moves clamp_percentage below the (larger) summary function, unchanged.
    const b = await repo.commit({ files: { 'pkg/m.py': `${large}\n\n${small}` }, message: 'Reorder functions', date: day(2) });
    const c = await repo.commit({ files: { 'pkg/m.py': `${large}\n\n${fixedSmall}` }, message: 'Fix clamp bound', date: day(3) });
    expect(shas(await attribute(repo, c, { variant: 'foresight' }))).toEqual([a]);
    expect(shas(await attribute(repo, c, { variant: 'b-szz' }))).toEqual([b]);
  });

  it('commits_older_than_the_horizon_are_not_blamed', async () => {
    const repo = await fresh();
    await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n    a = x + 1\n    b = x * 2\n    return a, b\n' }, message: 'Add f', date: '2018-01-01T12:00:00Z' });
    const old = await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n    a = x + 1\n    b = x * 3\n    return a, b\n' }, message: 'Triple b', date: '2019-01-01T12:00:00Z' });
    const recent = await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n    a = x + 5\n    b = x * 3\n    return a, b\n' }, message: 'Add five', date: '2023-06-01T12:00:00Z' });
    const fix = await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n    a = x + 6\n    b = x * 4\n    return a, b\n' }, message: 'Fix f', date: '2024-01-10T12:00:00Z' });
    const bounded = await attribute(repo, fix, { variant: 'foresight', horizon: 3 * YEAR });
    expect(shas(bounded)).toEqual([recent]);
    expect(bounded.beyondHorizon).toBe(1);
    const all = await attribute(repo, fix, { variant: 'foresight', horizon: null });
    expect(shas(all)).toEqual([recent, old]);
    expect(all.beyondHorizon).toBe(0);
    // No horizon unless one is given: the whole history.
    expect(shas(await attribute(repo, fix, { variant: 'foresight' }))).toEqual([recent, old]);
    // A horizon reaching back before 2019 (5 years before the fix's parent) finds the older commit again.
    expect(shas(await attribute(repo, fix, { variant: 'foresight', horizon: 5 * YEAR }))).toEqual([recent, old]);
    // B-SZZ, the published baseline, always looks through the whole history.
    expect(new Set(shas(await attribute(repo, fix, { variant: 'b-szz' })))).toEqual(new Set([recent, old]));
  });

  it('lines_written_by_a_root_commit_within_the_horizon_are_blamed_to_it', async () => {
    const repo = await fresh();
    // git treats a root commit as a boundary, like one beyond --since: only --root keeps its lines.
    const root = await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n    return x + 1\n' }, message: 'Add f', date: day(1) });
    const fix = await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n    return x + 2\n' }, message: 'Fix f', date: day(5) });
    const a = await attribute(repo, fix, { variant: 'foresight', horizon: 3 * YEAR });
    expect(shas(a)).toEqual([root]);
    expect(a.beyondHorizon).toBe(0);
  });
});
