/**
 * evaluateSzz on one small history holding four fixes whose inducing commits are known, scored by hand:
 *
 * | fix | what happened                                           | oracle  | b-szz predicts | foresight predicts |
 * |-----|---------------------------------------------------------|---------|----------------|--------------------|
 * | c1  | A1 wrote the bug, B1 re-indented the file               | A1      | B1             | A1                 |
 * | c2  | add-only guard inside A2's function                     | A2      | (nothing)      | A2                 |
 * | c3  | deletes X3's comment, rewrites A3's line                | A3      | A3, X3         | A3                 |
 * | c4  | rewrites A4's line and A4b's line, both inducing        | A4, A4b | A4, A4b        | one of them        |
 *
 * b-szz: 5 predictions, 3 right, 5 oracle pairs: P = R = F1 = 0.6.
 * foresight: 4 predictions, 4 right, 5 oracle pairs: P = 1, R = 0.8, F1 = 1.6 / 1.8 = 8/9.
 * Add-only subset (c2): b-szz 0/0/0, foresight 1/1/1.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import { evaluateSzz, formatScores, readOracle, type OracleEntry } from '../../../stages/szz/evaluate.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

describe('evaluateSzz', () => {
  let repo: GitRepo;
  let oracle: OracleEntry[];
  const day = (n: number): string => `2024-03-${String(n).padStart(2, '0')}T08:00:00Z`;

  beforeAll(async () => {
    repo = await gitRepo();
    const a1 = await repo.commit({ files: { 'pkg/first.py': 'def first(s):\n  parts = s.split(",")\n  return parts[1]\n' }, message: 'Add first()', date: day(1) });
    await repo.commit({ files: { 'pkg/first.py': 'def first(s):\n    parts = s.split(",")\n    return parts[1]\n' }, message: 'Reformat first.py', date: day(2) });
    const ratio = 'def ratio(a, b):\n    total = a + b\n    return a / total\n';
    const a2 = await repo.commit({ files: { 'pkg/ratio.py': ratio }, message: 'Add ratio()', date: day(3) });
    const a3 = await repo.commit({ files: { 'pkg/mean.py': 'def mean(xs):\n    return sum(xs) / len(xs) + 1\n' }, message: 'Add mean()', date: day(4) });
    await repo.commit({ files: { 'pkg/mean.py': 'def mean(xs):\n    # the arithmetic mean\n    return sum(xs) / len(xs) + 1\n' }, message: 'Document mean()', date: day(5) });
    const a4 = await repo.commit({ files: { 'pkg/calc.py': 'def calc(a, b):\n    s = a - b\n    t = s * 3\n    return t\n' }, message: 'Add calc()', date: day(6) });
    const a4b = await repo.commit({ files: { 'pkg/calc.py': 'def calc(a, b):\n    s = a - b\n    t = s * 4\n    return t\n' }, message: 'Tune calc()', date: day(7) });

    const c1 = await repo.commit({ files: { 'pkg/first.py': 'def first(s):\n    parts = s.split(",")\n    return parts[0]\n' }, message: 'Fix first()', date: day(8) });
    const c2 = await repo.commit({
      files: { 'pkg/ratio.py': 'def ratio(a, b):\n    total = a + b\n    if total == 0:\n        return 0.0\n    return a / total\n' },
      message: 'Fix ratio() dividing by zero',
      date: day(9),
    });
    const c3 = await repo.commit({ files: { 'pkg/mean.py': 'def mean(xs):\n    return sum(xs) / len(xs)\n' }, message: 'Fix mean()', date: day(10) });
    const c4 = await repo.commit({ files: { 'pkg/calc.py': 'def calc(a, b):\n    s = a + b\n    t = s * 5\n    return t\n' }, message: 'Fix calc()', date: day(11) });
    oracle = [
      { fix: c1, inducing: [a1] },
      { fix: c2, inducing: [a2] },
      { fix: c3, inducing: [a3] },
      { fix: c4, inducing: [a4, a4b] },
    ];
  });
  afterAll(() => repo.remove());

  it('foresight_scores_higher_than_b_szz_on_meta_changes_add_only_fixes_and_comments', async () => {
    const plain = await evaluateSzz({ clone: repo.dir, oracle, variant: 'b-szz' });
    const fs = await evaluateSzz({ clone: repo.dir, oracle, variant: 'foresight' });

    expect(plain.all).toMatchObject({ variant: 'b-szz', fixes: 4, predictions: 5, truePositives: 3, oraclePairs: 5 });
    expect(plain.all.precision).toBeCloseTo(0.6, 12);
    expect(plain.all.recall).toBeCloseTo(0.6, 12);
    expect(plain.all.f1).toBeCloseTo(0.6, 12);

    // Every fix's top candidate (what the szz stage picks): all right.
    expect(fs.allTop).toMatchObject({ variant: 'foresight', fixes: 4, predictions: 4, truePositives: 4, oraclePairs: 5, precision: 1 });
    expect(fs.allTop!.recall).toBeCloseTo(0.8, 12);
    expect(fs.allTop!.f1).toBeCloseTo(8 / 9, 12);
    // Scored predictions are the confident tops only: a subset of them, never a wrong one here.
    expect(fs.all.predictions).toBeLessThanOrEqual(4);
    expect(fs.all.precision).toBe(1);
    expect(fs.allTop!.f1).toBeGreaterThan(plain.all.f1);
    expect(plain.allTop).toBeUndefined();

    expect(plain.addOnly).toMatchObject({ fixes: 1, predictions: 0, truePositives: 0, oraclePairs: 1, precision: 0, recall: 0, f1: 0 });
    expect(fs.addOnly).toMatchObject({ fixes: 1, predictions: 1, truePositives: 1, oraclePairs: 1, precision: 1, recall: 1, f1: 1 });
  });

  it('trial: attribution scored only by commit, though a chain needs the inducing PR → scored by change too (a commit of the inducing PR counts)', async () => {
    // Calc was added and tuned in one PR: either commit of it names the change c4's defect came from.
    const [a4, a4b] = oracle[3]!.inducing;
    const changeOf = new Map([[a4!, 'calc-pr'], [a4b!, 'calc-pr']]);
    const fs = await evaluateSzz({ clone: repo.dir, oracle, variant: 'foresight', changeOf });
    // By commit, c4's top names one of its two inducing commits: 4 of 5 pairs. By change, c4 has one inducing change, and it is named.
    expect(fs.allTop!.recall).toBeCloseTo(0.8, 12);
    expect(fs.byChange).toMatchObject({ fixes: 4, oraclePairs: 4, truePositives: fs.all.truePositives, precision: 1 });
    const plain = await evaluateSzz({ clone: repo.dir, oracle, variant: 'b-szz', changeOf });
    // b-szz's two predictions for c4 are one change: 4 predictions (B1; A3, X3; calc), 2 right, 4 changes to find.
    expect(plain.byChange).toMatchObject({ predictions: 4, truePositives: 2, oraclePairs: 4, precision: 0.5, recall: 0.5 });
    expect(formatScores([plain, fs])).toContain('all fixes, by change (PR)');
    // Without a map there are no scores by change.
    expect((await evaluateSzz({ clone: repo.dir, oracle, variant: 'b-szz' })).byChange).toBeUndefined();
  });

  it('an oracle value that looks like an option is rejected and no file is written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'foresight-oracle-'));
    try {
      const victim = join(dir, 'precious.txt');
      await writeFile(victim, 'keep me\n');
      const path = join(dir, 'oracle.jsonl');
      const good = JSON.stringify(oracle[0]);
      await writeFile(path, `${good}\n${JSON.stringify({ fix: `--output=${victim}`, inducing: ['x'] })}\n`);
      const err = await readOracle(path).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ForesightError);
      expect((err as ForesightError).message).toBe(`oracle ${path}:2: fix must be a commit sha (7 to 40 lowercase hex digits)`);
      // An inducing value is checked the same way.
      await writeFile(path, `${good}\n${JSON.stringify({ fix: oracle[0]!.fix, inducing: [`--output=${victim}`] })}\n`);
      await expect(readOracle(path)).rejects.toThrow(`oracle ${path}:2: inducing.0 must be a commit sha`);

      // Entries handed to evaluateSzz directly skip that check: git still reads them as revisions only.
      for (const variant of ['b-szz', 'foresight'] as const) {
        const direct = await evaluateSzz({ clone: repo.dir, oracle: [{ fix: `--output=${victim}`, inducing: [oracle[0]!.inducing[0]!] }], variant }).catch((e: unknown) => e);
        expect(direct).toBeInstanceOf(ForesightError);
      }
      expect(await readFile(victim, 'utf8')).toBe('keep me\n');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reads abbreviated shas and scores them as the commits they name', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'foresight-oracle-'));
    try {
      const path = join(dir, 'oracle.jsonl');
      await writeFile(path, oracle.map((e) => JSON.stringify({ fix: e.fix.slice(0, 10), inducing: e.inducing.map((s) => s.slice(0, 7)) })).join('\n') + '\n');
      const short = await readOracle(path);
      expect(short).toHaveLength(4);
      const fs = await evaluateSzz({ clone: repo.dir, oracle: short, variant: 'foresight' });
      expect(fs.allTop).toMatchObject({ fixes: 4, predictions: 4, truePositives: 4, oraclePairs: 5, precision: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
