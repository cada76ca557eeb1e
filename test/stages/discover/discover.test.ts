import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readJsonl, stageDir } from '../../../core/foundation/artifacts.ts';
import { CandidateSchema, type Candidate } from '../../../core/foundation/model/candidate.ts';
import { findReferences, hasFixKeywords, isRevert } from '../../../core/sources/git/find-references.ts';
import { listMergedPrs, readMainline } from '../../../core/history/mainline.ts';
import type { RefResolver } from '../../../core/sources/git/find-references.ts';
import { demoWorkspace, runOn } from '../../helpers/demo.ts';

describe('discover on the generated demo repository', () => {
  let ws: Awaited<ReturnType<typeof demoWorkspace>>;
  let candidates: Candidate[];
  beforeAll(async () => {
    ws = await demoWorkspace();
    await runOn(ws, { only: 'discover' });
    candidates = await readJsonl(join(stageDir(ws.dataRoot, ws.repo.name, 'discover'), 'items.jsonl'), CandidateSchema);
  });

  it('recognises squash and merge PRs on the first-parent history, and skips direct commits', async () => {
    const prs = await listMergedPrs(ws.clone, await readMainline(ws.clone, 'HEAD'));
    expect(prs.map((p) => p.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    const pr3 = prs.find((p) => p.number === 3)!;
    expect(pr3.style).toBe('merge');
    expect(pr3.title).toBe('Add parse_duration');
    expect(pr3.commits).toHaveLength(2); // both branch commits belong to the PR
    const pr1 = prs.find((p) => p.number === 1)!;
    expect(pr1.style).toBe('squash');
    expect(pr1.title).toBe('Add slugify helper');
    expect(pr1.commits).toEqual([pr1.mergeSha]);
  });

  it('keeps fixes and explicitly referencing PRs as candidates, and no feature or docs PR', () => {
    expect(candidates.map((c) => c.pr2.number)).toEqual([8, 9, 10, 11, 12]);
    const by = (n: number) => candidates.find((c) => c.pr2.number === n)!;
    expect(by(8).references).toEqual([]); // found only by blame later
    expect(by(9).references.map((r) => [r.kind, r.target])).toEqual([['regression', '1']]);
    expect(by(10).references.map((r) => [r.kind, r.target])).toEqual([['refs', '6']]);
    expect(by(11).references.map((r) => [r.kind, r.target])).toEqual([['refs', '4']]);
  });

  it('marks a revert ineligible at once, resolving "This reverts commit <sha>" to the reverted PR', () => {
    const revert = candidates.find((c) => c.pr2.number === 12)!;
    expect(revert.excluded?.reason).toBe('ineligible');
    expect(revert.references.find((r) => r.kind === 'revert')?.target).toBe('5');
  });
});

describe('reference parsing', () => {
  const pr = (number: number, title: string, body = '') => ({
    id: String(number), number, title, body, author: 'a', mergedAt: '2024-01-01T00:00:00Z', mergeSha: 'f'.repeat(40), baseSha: 'e'.repeat(40), style: 'squash' as const, commits: [],
  });
  /** Resolves #N to PR N when N is in `earlier`, and shas through `sha`. */
  const resolver = (earlier: number[], sha: RefResolver['sha'] = () => null): RefResolver => ({
    pr: (n) => (earlier.includes(n) ? String(n) : null),
    sha,
  });

  it('ignores a reference to the PR itself or to a PR not merged before it', () => {
    expect(findReferences(pr(9, 'Fix x (#9)', 'see #12 and #9'), resolver([1, 2]))).toEqual([]);
  });

  it('resolves "Regression in <sha>" through the sha resolver to the PR that holds the commit', () => {
    const refs = findReferences(pr(9, 'Fix x', 'Regression in abc1234.'), resolver([3], (s) => (s === 'abc1234' ? { target: '3', sha: 'abc1234' + '0'.repeat(33) } : null)));
    expect(refs.map((r) => [r.kind, r.target])).toEqual([['regression', '3']]);
  });

  it('does not read an HTML entity or a URL fragment as a PR mention', () => {
    expect(findReferences(pr(9, 'Fix &#39; escaping'), resolver([39]))).toEqual([]);
  });

  it('tells fixes and reverts by their titles', () => {
    expect(hasFixKeywords('Fix slugify producing empty segments')).toBe(true);
    expect(hasFixKeywords('Add binary units option')).toBe(false);
    expect(isRevert({ title: 'Revert "Add x (#5)"', body: '' })).toBe(true);
  });
});
