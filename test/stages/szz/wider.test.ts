/**
 * The wider SZZ (attributeFix with `wider`): candidates found beyond the fixed lines' blame (the blocks
 * around the fix, the fixed files' newest history, the names the fix shares with a commit) and their
 * ranking. Each history is built so that blame of the fixed lines alone cannot name the inducing commit.
 */
import { describe, expect, it } from 'vitest';
import { attributeFix, type Attribution } from '../../../stages/szz/attribute.ts';
import { MetaChanges } from '../../../stages/szz/meta.ts';
import { YEAR } from '../../../stages/szz/fit.ts';
import { changedNames, FEATURES, FITTED, rankScore, type CandidateFeatures, type RankerWeights } from '../../../stages/szz/rank.ts';
import { freshRepos, type GitRepo } from '../../helpers/git-repo.ts';

const fresh = freshRepos();

const day = (n: number): string => `2024-01-${String(n).padStart(2, '0')}T12:00:00Z`;

/** Weights that rank by one feature only. */
function only(feature: keyof CandidateFeatures): RankerWeights {
  return { bias: 0, w: { ...(Object.fromEntries(FEATURES.map((k) => [k, 0])) as RankerWeights['w']), [feature]: 5 } };
}

async function attribute(repo: GitRepo, fix: string, opts: { wider?: boolean; weights?: RankerWeights; meta?: MetaChanges; reportedAt?: string; horizon?: number | null } = {}): Promise<Attribution> {
  const base = (await repo.git(['rev-parse', `${fix}^1`])).trim();
  return attributeFix(repo.dir, { baseSha: base, mergeSha: fix }, { variant: 'foresight', meta: opts.meta ?? new MetaChanges(repo.dir), ...opts });
}

const find = (a: Attribution, sha: string) => a.commits.find((c) => c.sha === sha);

describe('wider SZZ candidates', () => {
  it('deletion_elsewhere_in_the_file_is_found_by_history_and_shared_names', async () => {
    const repo = await fresh();
    const x = await repo.commit({
      files: { 'pkg/text.py': 'def normalize(s, strip=True):\n    return s.strip() if strip else s\n\n\ndef caller(s):\n    return normalize(s)\n' },
      message: 'Add normalize() and caller()',
      date: day(1),
    });
    // The inducing commit: drops the strip default from normalize(); caller()'s line keeps its blame.
    const d = await repo.commit({
      files: { 'pkg/text.py': 'def normalize(s, strip=False):\n    return s.strip() if strip else s\n\n\ndef caller(s):\n    return normalize(s)\n' },
      message: 'Change the default',
      date: day(5),
    });
    await repo.commit({ files: { 'pkg/other.py': 'OTHER = 1\n' }, message: 'Unrelated', date: day(6) });
    const fix = await repo.commit({
      files: { 'pkg/text.py': 'def normalize(s, strip=False):\n    return s.strip() if strip else s\n\n\ndef caller(s):\n    return normalize(s, strip=True)\n' },
      message: 'Fix caller() not stripping',
      date: day(8),
    });
    const plain = await attribute(repo, fix);
    expect(plain.commits.map((c) => c.sha)).toEqual([x]);
    const wide = await attribute(repo, fix, { wider: true, weights: only('tokens') });
    const found = find(wide, d);
    // Made a day before the fix's parent: fresh.
    expect(found?.features).toMatchObject({ blame: 0, block: 0, historyOnly: 1, recent: 1, overlap: 1, fresh: 1 });
    // The fix's changed lines name normalize and strip; so do d's.
    expect(found?.features?.tokens).toBe(1);
    expect(find(wide, x)?.features).toMatchObject({ blame: 1, historyOnly: 0, recent: 0.5 });
    // The unrelated commit touched no fixed file: not a candidate.
    expect(wide.commits).toHaveLength(2);
    // x created the file: it holds every name too. Blame favours x; the files' history d.
    expect((await attribute(repo, fix, { wider: true, weights: only('blame') })).commits[0]!.sha).toBe(x);
    const byRecent = await attribute(repo, fix, { wider: true, weights: only('recent') });
    expect(byRecent.commits[0]!.sha).toBe(d);
  });

  it('inducer_behind_a_later_refactor_is_found_in_the_enclosing_function', async () => {
    const repo = await fresh();
    const head = 'def total(items):\n    s = 0\n';
    const a = await repo.commit({ files: { 'pkg/sum.py': `${head}    for i in items:\n        s += i.price\n    return s\n` }, message: 'Add total()', date: day(1) });
    // The inducer rewrites the loop (skipping free items by mistake) in three lines of the function.
    const b = await repo.commit({
      files: { 'pkg/sum.py': `${head}    for i in items:\n        if i.price > 1:\n            s += i.price\n    return s\n` },
      message: 'Skip free items',
      date: day(3),
    });
    // A later refactor (a comment) on the line the fix will touch.
    const r = await repo.commit({
      files: { 'pkg/sum.py': `${head}    for i in items:\n        if i.price > 1:\n            s += i.price\n    return s  # total\n` },
      message: 'Comment the return',
      date: day(5),
    });
    const fix = await repo.commit({
      files: { 'pkg/sum.py': `${head}    for i in items:\n        if i.price > 1:\n            s += i.price\n    return s + 0  # total\n` },
      message: 'Fix total()',
      date: day(7),
    });
    const plain = await attribute(repo, fix);
    expect(plain.commits.map((c) => c.sha)).toEqual([r]);
    const wide = await attribute(repo, fix, { wider: true, weights: only('block') });
    // The function's 6 lines: blame ignores whitespace, so a keeps the re-indented `s += ...`: a 4, b the `if`, r the fixed one.
    expect(find(wide, a)?.features?.block).toBeCloseTo(4 / 6, 5);
    expect(find(wide, b)?.features?.block).toBeCloseTo(1 / 6, 5);
    expect(find(wide, b)?.features?.blame).toBe(0);
    expect(find(wide, r)?.features?.blame).toBe(1);
  });

  it('insertion_at_the_top_level_blames_its_neighbours', async () => {
    const repo = await fresh();
    const n = await repo.commit({ files: { 'pkg/conf.py': 'A = 1\nB = 2\nC = 3\n' }, message: 'Add settings', date: day(1) });
    await repo.commit({ files: { 'pkg/conf.py': 'A = 1\nB = 2\nC = 3\n\n\n\n\n\n\n\nZ = 9\n' }, message: 'Add Z far below', date: day(2) });
    const fix = await repo.commit({ files: { 'pkg/conf.py': 'A = 1\nB = 2\nB2 = 4\nC = 3\n\n\n\n\n\n\n\nZ = 9\n' }, message: 'Add B2', date: day(3) });
    const wide = await attribute(repo, fix, { wider: true, weights: only('block') });
    expect(wide.commits[0]!.sha).toBe(n);
    expect(find(wide, n)?.features?.block).toBe(1);
  });

  it('commit_that_changed_the_fixs_test_directory_gets_the_test_feature', async () => {
    const repo = await fresh();
    const a = await repo.commit({ files: { 'pkg/calc.py': 'def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n' }, message: 'Add calc', date: day(1) });
    // The inducer brings sub()'s behaviour with its tests, in tests/calc/.
    const b = await repo.commit({
      files: { 'pkg/calc.py': 'def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return b - a\n', 'tests/calc/test_sub.py': 'def test_sub():\n    pass\n' },
      message: 'Rework sub',
      date: day(3),
    });
    const c = await repo.commit({ files: { 'pkg/calc.py': 'def add(a, b):\n    return a + b  # sum\n\n\ndef sub(a, b):\n    return b - a\n' }, message: 'Comment add', date: day(4) });
    const fix = await repo.commit({
      files: { 'pkg/calc.py': 'def add(a, b):\n    return a + b  # sum\n\n\ndef sub(a, b):\n    return a - b\n', 'tests/calc/test_regression.py': 'def test_it():\n    pass\n' },
      message: 'Fix sub',
      date: day(6),
    });
    const wide = await attribute(repo, fix, { wider: true, weights: only('testDir') });
    expect(find(wide, b)?.features?.testDir).toBe(1);
    expect(find(wide, a)?.features?.testDir).toBe(0);
    expect(find(wide, c)?.features?.testDir).toBe(0);
    expect(wide.commits[0]!.sha).toBe(b);
  });

  it('history_only_meta_change_and_commits_after_the_report_are_not_candidates', async () => {
    const repo = await fresh();
    const a = await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n    return x + 1\n', 'pkg/b.py': 'B = 1\n', 'pkg/c.py': 'C = 1\n' }, message: 'Add f', date: day(1) });
    // Touches three files: a mass change for MetaChanges(massFiles = 3).
    const mass = await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n    return x + 1\n\n', 'pkg/b.py': 'B = 1\n\n', 'pkg/c.py': 'C = 1\n\n' }, message: 'Trailing lines', date: day(2) });
    const late = await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n    return x + 1\n\n\ndef g():\n    pass\n' }, message: 'Add g', date: day(9) });
    const fix = await repo.commit({ files: { 'pkg/a.py': 'def f(x):\n    return x + 2\n\n\ndef g():\n    pass\n' }, message: 'Fix f', date: day(10) });
    const wide = await attribute(repo, fix, { wider: true, meta: new MetaChanges(repo.dir, 3), reportedAt: day(8) });
    const shas = wide.commits.map((c) => c.sha);
    expect(shas).toContain(a);
    expect(shas).not.toContain(mass);
    expect(shas).not.toContain(late);
    // Without the report time, the later commit is a candidate (found by the file's history).
    const all = await attribute(repo, fix, { wider: true, meta: new MetaChanges(repo.dir, 3) });
    expect(all.commits.map((c) => c.sha)).toContain(late);
  });
  it('the_horizon_hides_older_commits_but_keeps_the_shares_of_newer_ones', async () => {
    const repo = await fresh();
    const body = (a: string, b: string, c: string): string => `def f(x):\n    a = x + ${a}\n    b = x * ${b}\n    c = x - ${c}\n    return a, b, c\n`;
    const root = await repo.commit({ files: { 'pkg/a.py': body('1', '2', '3') }, message: 'Add f', date: '2018-01-01T12:00:00Z' });
    const old = await repo.commit({ files: { 'pkg/a.py': body('1', '4', '3') }, message: 'Change b', date: '2019-01-01T12:00:00Z' });
    const mid = await repo.commit({ files: { 'pkg/a.py': body('1', '4', '5') }, message: 'Change c', date: '2023-03-01T12:00:00Z' });
    const recent = await repo.commit({ files: { 'pkg/a.py': body('6', '4', '5') }, message: 'Change a', date: '2023-06-01T12:00:00Z' });
    const fix = await repo.commit({ files: { 'pkg/a.py': body('7', '8', '5') }, message: 'Fix a and b', date: '2024-01-10T12:00:00Z' });
    const all = await attribute(repo, fix, { wider: true, horizon: null });
    const bounded = await attribute(repo, fix, { wider: true, horizon: 3 * YEAR });
    // Blame (line b), the block (def, return) and the file's history reach `old` and `root` only without the horizon.
    expect(new Set(all.commits.map((c) => c.sha))).toEqual(new Set([root, old, mid, recent]));
    expect(find(bounded, old)).toBeUndefined();
    expect(new Set(bounded.commits.map((c) => c.sha))).toEqual(new Set([mid, recent]));
    // The lines beyond the horizon still count in the totals: what remains scores as with the whole history.
    expect(find(bounded, recent)?.features).toEqual(find(all, recent)?.features);
    expect(find(bounded, mid)?.features).toEqual(find(all, mid)?.features);
    expect(find(bounded, recent)?.features?.blame).toBe(0.5);
  });
});

describe('ranker', () => {
  it('changed_names_reads_only_changed_lines_without_keywords', () => {
    const diff = ['--- a/x.py', '+++ b/x.py', '@@ -1 +1 @@', ' context_name = 1', '-    return normalize(s)', '+    return normalize(s, strip=True)'].join('\n');
    expect([...changedNames(diff)].sort()).toEqual(['normalize', 'strip']);
  });

  it('fitted_score_prefers_blamed_recent_commits_that_share_names', () => {
    const base: CandidateFeatures = { blame: 0, block: 0, recent: 0, overlap: 0.5, age: Math.log1p(200), size: Math.log1p(3), age2: 0, fresh: 0, historyOnly: 1, tokens: 0, testDir: 0 };
    const withAge2 = (f: CandidateFeatures): CandidateFeatures => ({ ...f, age2: (f.age * f.age) / 10 });
    const h = withAge2(base);
    expect(rankScore(withAge2({ ...base, blame: 1, historyOnly: 0 }), FITTED)).toBeGreaterThan(rankScore(h, FITTED));
    expect(rankScore(withAge2({ ...base, tokens: 0.8 }), FITTED)).toBeGreaterThan(rankScore(h, FITTED));
  });
});
