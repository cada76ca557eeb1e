/**
 * Parameters a repository chooses for itself: its own oracle from "regression in <sha>" messages, the
 * history horizon chosen on it (and cached), the fallback when it has too few, and the file reader the
 * attribution uses instead of a git process per file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BlobReader } from '../../../stages/szz/blobs.ts';
import { blameTop } from '../../../stages/szz/evaluate.ts';
import { ENOUGH, fitHorizon, scoreHorizon, YEAR, type HorizonCase } from '../../../stages/szz/fit.ts';
import { MetaChanges } from '../../../stages/szz/meta.ts';
import { namedInducers, ownOracle } from '../../../stages/szz/own-oracle.ts';
import { FEATURES, type CandidateFeatures } from '../../../stages/szz/rank.ts';
import { fitRepository } from '../../../stages/szz/repo-fit.ts';
import { freshRepos } from '../../helpers/git-repo.ts';

const fresh = freshRepos();

const at = (unix: number): string => `${unix} +0000`;
const T0 = Date.parse('2010-01-01T00:00:00Z') / 1000;
const DAY = 86400;

describe('own oracle', () => {
  it('reads_the_ways_projects_name_the_commit_a_bug_came_from', () => {
    expect(namedInducers('Fixed #1 -- Crash.\n\nRegression in 1a2b3c4d.')).toEqual(['1a2b3c4d']);
    expect(namedInducers('Regression from 985f39c0ce78b546e832c250588c14023123edfb #18147')).toEqual(['985f39c0ce78b546e832c250588c14023123edfb']);
    expect(namedInducers('this bug was\nintroduced by 9bc151850c1c (builtin: x)')).toEqual(['9bc151850c1c']);
    expect(namedInducers('It regressed in abcdef1 and a regression since 1234567.')).toEqual(['abcdef1', '1234567']);
    // A feature's origin, a short hex word, a ticket number: none names an inducing commit.
    expect(namedInducers('The option was introduced in 1234567.')).toEqual([]);
    expect(namedInducers('Regression in 3.2 (#1234).')).toEqual([]);
  });

  it('keeps_named_commits_that_exist_and_are_ancestors_newest_fix_first', async () => {
    const repo = await fresh();
    const a = await repo.commit({ files: { 'pkg/a.py': 'x = 1\n' }, message: 'Add a', date: at(T0) });
    const fix1 = await repo.commit({ files: { 'pkg/a.py': 'x = 2\n' }, message: `Fix a\n\nRegression in ${a.slice(0, 9)}.`, date: at(T0 + DAY) });
    // Names a commit that does not exist, and itself: neither is an inducer.
    await repo.commit({ files: { 'pkg/b.py': 'y = 1\n' }, message: 'Fix b\n\nRegression in 0000000deadbeef.', date: at(T0 + 2 * DAY) });
    const fix3 = await repo.commit({ files: { 'pkg/a.py': 'x = 3\n' }, message: `Fix a again\n\nregressed in ${fix1.slice(0, 8)}, bug from ${a}`, date: at(T0 + 3 * DAY) });
    expect(await ownOracle(repo.dir)).toEqual([
      { fix: fix3, inducing: [fix1, a] },
      { fix: fix1, inducing: [a] },
    ]);
    expect(await ownOracle(repo.dir, { limit: 1 })).toEqual([{ fix: fix3, inducing: [fix1, a] }]);
  });
});

/** A fix whose blame names `commits` (highest score first) at `age` years... and whose inducer is `inducing`. */
function kase(commits: Array<[string, number]>, inducing: string): HorizonCase {
  return { baseTime: 100 * YEAR, commits: commits.map(([sha, years]) => ({ sha, time: 100 * YEAR - years * YEAR })), inducing: [inducing] };
}

describe('horizon fit', () => {
  it('chooses_the_horizon_with_the_best_f1_the_shorter_on_a_tie_and_none_with_too_few_fixes', () => {
    // Old commits outscore the inducer in blame for half the fixes: a horizon that cuts them helps.
    const cases = Array.from({ length: ENOUGH }, (_, i) => (i % 2 ? kase([[`old${i}`, 6], [`ind${i}`, 1.5]], `ind${i}`) : kase([[`ind${i}`, 0.5]], `ind${i}`)));
    const fit = fitHorizon(cases);
    expect(fit).toMatchObject({ basis: 'own', horizon: 2 * YEAR, fixes: ENOUGH, f1: 1 });
    expect(fit.f1Without).toBeCloseTo(scoreHorizon(cases, null).f1);
    expect(fit.f1Without).toBeLessThan(1);
    // The whole history is among the choices: where nothing old misleads, no horizon cuts recall.
    const olderInducers = Array.from({ length: ENOUGH }, (_, i) => kase([[`ind${i}`, 12]], `ind${i}`));
    expect(fitHorizon(olderInducers)).toMatchObject({ basis: 'own', horizon: null, f1: 1 });
    expect(fitHorizon(cases.slice(0, ENOUGH - 1))).toMatchObject({ basis: 'too_few', horizon: null, fixes: ENOUGH - 1 });
  });

  it('fits_a_repository_on_its_own_fixes_and_reuses_the_cached_fit_for_the_same_head', async () => {
    const repo = await fresh();
    // Per module: an old commit writes two lines, a recent one rewrites the second; the fix changes both
    // and names the recent one. Blame over the whole history ties them and picks the older writer first
    // only when it wrote more fixed lines: so every module's old commit writes one more line than the inducer.
    let t = T0;
    for (let i = 0; i < ENOUGH; i++) {
      const file = `pkg/m${i}.py`;
      await repo.commit({ files: { [file]: `a = ${i}\nb = ${i}\nc = ${i}\n` }, message: `Add m${i}`, date: at(t) });
      t += DAY;
    }
    t += 6 * 365 * DAY;
    const inducers: string[] = [];
    for (let i = 0; i < ENOUGH; i++) {
      inducers.push(await repo.commit({ files: { [`pkg/m${i}.py`]: `a = ${i}\nb = ${i}\nc = ${i + 100}\n` }, message: `Change m${i}`, date: at(t) }));
      t += DAY;
    }
    for (let i = 0; i < ENOUGH; i++) {
      await repo.commit({ files: { [`pkg/m${i}.py`]: `a = ${i + 1}\nb = ${i + 1}\nc = ${i + 200}\n` }, message: `Fix m${i}\n\nRegression in ${inducers[i]!.slice(0, 10)}.`, date: at(t) });
      t += DAY;
    }
    const data = join(repo.dir, '.git', 'fit-cache');
    const fit = await fitRepository(repo.dir, { meta: new MetaChanges(repo.dir), cacheDir: data });
    expect(fit.horizon).toMatchObject({ basis: 'own', horizon: 1 * YEAR, fixes: ENOUGH, f1: 1, f1Without: 0 });
    const cached = JSON.parse(await readFile(join(data, 'szz-fit.json'), 'utf8')) as { fit: unknown };
    expect(cached.fit).toEqual(fit);
    // The same head reads the cache (a changed cache shows it was read); a new commit fits again.
    const edited = { ...fit, horizon: { ...fit.horizon, horizon: 7 * YEAR } };
    await import('node:fs/promises').then((fs) => fs.writeFile(join(data, 'szz-fit.json'), JSON.stringify({ ...(cached as object), fit: edited })));
    expect((await fitRepository(repo.dir, { meta: new MetaChanges(repo.dir), cacheDir: data })).horizon.horizon).toBe(7 * YEAR);
    await repo.commit({ files: { 'pkg/other.py': 'z = 1\n' }, message: 'Unrelated', date: at(t) });
    expect((await fitRepository(repo.dir, { meta: new MetaChanges(repo.dir), cacheDir: data })).horizon.horizon).toBe(1 * YEAR);
  });

  it('a_repository_with_too_few_own_fixes_blames_the_whole_history', async () => {
    const repo = await fresh();
    const a = await repo.commit({ files: { 'pkg/a.py': 'x = 1\n' }, message: 'Add a', date: at(T0) });
    await repo.commit({ files: { 'pkg/a.py': 'x = 2\n' }, message: `Fix a\n\nRegression in ${a}.`, date: at(T0 + DAY) });
    const fit = await fitRepository(repo.dir, { meta: new MetaChanges(repo.dir) });
    expect(fit.horizon).toMatchObject({ basis: 'too_few', horizon: null, fixes: 1 });
  });
});

describe('blame top and file reader', () => {
  it('blame_top_is_the_largest_blame_share_the_newer_on_a_tie_never_a_history_only_candidate', () => {
    const zero = Object.fromEntries(FEATURES.map((k) => [k, 0])) as unknown as CandidateFeatures;
    const c = (sha: string, blame: number, age: number) => ({ sha, features: { ...zero, blame, age } });
    expect(blameTop({ fix: 'f', inducing: [], candidates: [c('h', 0, 0.1), c('old', 0.5, 4), c('new', 0.5, 2), c('small', 0.2, 1)] })).toBe('new');
    expect(blameTop({ fix: 'f', inducing: [], candidates: [c('h', 0, 0.1)] })).toBeNull();
  });

  it('reads_files_at_a_revision_through_one_process_and_answers_null_for_missing_ones', async () => {
    const repo = await fresh();
    const one = await repo.commit({ files: { 'pkg/a.py': 'x = 1\n', 'pkg/ü b.py': 'é = 2\n' }, message: 'Add', date: at(T0) });
    await repo.commit({ files: { 'pkg/a.py': 'x = 3\n' }, message: 'Change', date: at(T0 + DAY) });
    const reader = new BlobReader(repo.dir);
    const got = await Promise.all([reader.read(one, 'pkg/a.py'), reader.read('HEAD', 'pkg/a.py'), reader.read(one, 'pkg/ü b.py'), reader.read(one, 'pkg/none.py'), reader.read(one, 'pkg')]);
    expect(got).toEqual(['x = 1\n', 'x = 3\n', 'é = 2\n', null, null]);
    await expect(reader.read(one, 'a\nb')).rejects.toThrow(/newline/);
    // After the idle close a new request starts the process again.
    await new Promise((r) => setTimeout(r, 1200));
    expect(await reader.read(one, 'pkg/a.py')).toBe('x = 1\n');
  });

  it('a_closing_process_never_answers_for_the_one_that_replaced_it', async () => {
    const repo = await fresh();
    const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`pkg/f${i}.py`, `v = ${i}\n`.repeat(i + 1)]));
    const sha = await repo.commit({ files, message: 'Add', date: at(T0) });
    // Closed as soon as it is idle: requests made while the previous process is still closing go to a new one.
    const reader = new BlobReader(repo.dir, 0);
    for (let round = 0; round < 30; round++) {
      const names = Object.keys(files);
      expect(await Promise.all(names.map((n) => reader.read(sha, n)))).toEqual(names.map((n) => files[n]));
      if (round % 3 === 0) await new Promise((r) => setTimeout(r, 1));
    }
  });
});
