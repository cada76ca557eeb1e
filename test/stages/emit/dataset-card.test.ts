import { describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import type { JudgedChain } from '../../../core/foundation/model/judged.ts';
import { datasetCard, REPO_ID_PLACEHOLDER, setCardRepoId, sizeCategory, type CardInput } from '../../../stages/emit/dataset-card.ts';
import { funnelOf, renderPlots, type Funnel, type PlotInput } from '../../../stages/emit/plots.ts';
import { bars, hubMetadata, svgElements } from '../../helpers/card.ts';

type Row = Record<string, unknown>;
const sets = (f2p: number, p2p: number, anti: number) => ({
  FAIL_TO_PASS: JSON.stringify(Array.from({ length: f2p }, (_, i) => `t::f${i}`)),
  PASS_TO_PASS: JSON.stringify(Array.from({ length: p2p }, (_, i) => `t::p${i}`)),
  ANTICIPATION_FAIL_TO_PASS: JSON.stringify(Array.from({ length: anti }, (_, i) => `t::a${i}`)),
});
const labels = { severity: null, failure_mode: null, difficulty: null, pr1_difficulty: null };

function verifiedRow(id: string, over: Row = {}): Row {
  return { instance_id: id, repo: 'acme/widgets', language: 'python', gradeable: false, excluded: true, exclusion_reason: 'ineligible', mining_category: 'szz', gap_days: 3, ...sets(0, 0, 0), ...labels, ...over };
}

const ROWS = {
  verified: [
    verifiedRow('w__1-2', { gradeable: true, excluded: false, exclusion_reason: null, mining_category: 'cross_reference', gap_days: 0, ...sets(1, 40, 1) }),
    verifiedRow('w__3-4', { gradeable: true, excluded: false, exclusion_reason: null, gap_days: 3, ...sets(3, 7, 2) }),
    verifiedRow('w__5-6', { gradeable: true, exclusion_reason: 'unattributed', gap_days: 3, ...sets(1, 2, 1) }),
    verifiedRow('w__7-8', { gap_days: 250 }),
    verifiedRow('w__9-10', { exclusion_reason: 'pr1_no_tests', gap_days: 21 }),
  ],
  test: [] as Row[],
};
ROWS.test = ROWS.verified.filter((r) => r.excluded === false).map(({ exclusion_reason: _e, excluded: _x, gradeable: _g, language: _l, ...r }) => r);
const FUNNEL: Funnel = { candidates: 12, chains: 5, gradeable: 3, judged: 2, test: 2 };

function cardInput(over: Partial<CardInput> = {}): CardInput {
  return {
    repo: 'acme/widgets',
    repoId: null,
    testRows: ROWS.test,
    verifiedRows: ROWS.verified,
    foresightVersion: 'test',
    license: { kind: 'known', ids: ['bsd-3-clause'], files: ['LICENSE'], commit: 'a'.repeat(40) },
    funnel: FUNNEL,
    plots: [{ file: 'plots/funnel.svg', title: 'Funnel', alt: 'Funnel: 12 candidates [x]' }],
    ...over,
  };
}


describe('datasetCard metadata (parsed by huggingface_hub)', () => {
  it('has both configs, the detected license, the Hub task and size buckets, tags and a pretty name', async () => {
    const meta = await hubMetadata(datasetCard(cardInput()));
    expect(meta).toEqual({
      pretty_name: 'Fix-chains of acme/widgets',
      license: 'bsd-3-clause',
      task_categories: ['text-generation'],
      tags: ['code', 'benchmark', 'software-engineering', 'swe-bench', 'fix-chains', 'python'],
      size_categories: ['n<1K'],
      configs: [
        { config_name: 'default', data_files: [{ split: 'test', path: 'data/test-*' }] },
        { config_name: 'verified', data_files: [{ split: 'verified', path: 'verified/verified-*' }] },
      ],
    });
  });

  it('a dual license is a list; an unknown or missing one is `other` with a license_name, never a guess', async () => {
    const dual = await hubMetadata(datasetCard(cardInput({ license: { kind: 'known', ids: ['apache-2.0', 'mit'], files: ['LICENSE-APACHE', 'LICENSE-MIT'], commit: 'b'.repeat(40) } })));
    expect(dual.license).toEqual(['apache-2.0', 'mit']);
    const odd = await hubMetadata(datasetCard(cardInput({ license: { kind: 'unrecognised', files: ['COPYING'], commit: 'c'.repeat(40) } })));
    expect([odd.license, odd.license_name]).toEqual(['other', 'unrecognised-license']);
    const none = datasetCard(cardInput({ license: { kind: 'none', commit: 'd'.repeat(40) } }));
    expect((await hubMetadata(none)).license_name).toBe('no-license-file');
    expect(none).toContain('no LICENSE or COPYING file at commit `dddddddddddd`');
  });

  it('size_categories follows the row count across the Hub buckets', () => {
    expect([0, 999, 1000, 9999, 10_000, 250_000].map(sizeCategory)).toEqual(['n<1K', 'n<1K', '1K<n<10K', '1K<n<10K', '10K<n<100K', '100K<n<1M']);
  });
});

describe('datasetCard body', () => {
  it('the usage snippet names the repository id once publishing knows it', () => {
    const card = datasetCard(cardInput());
    expect(card).toContain(`load_dataset("${REPO_ID_PLACEHOLDER}", split="test")`);
    const published = setCardRepoId(card, 'acme/foresight-widgets');
    expect(published).not.toContain(REPO_ID_PLACEHOLDER);
    expect(published).toContain('load_dataset("acme/foresight-widgets", "verified", split="verified")');
    expect(published).toBe(datasetCard(cardInput({ repoId: 'acme/foresight-widgets' })));
  });

  it('refuses a repository id that would break out of the snippet', () => {
    expect(() => setCardRepoId(datasetCard(cardInput()), 'acme/x", trust_remote_code=True, x="')).toThrow(ForesightError);
    expect(() => datasetCard(cardInput({ repoId: 'no-owner' }))).toThrow(/not a Hugging Face repository id/);
  });

  it('composition tables: per repository, mining category, exclusions with their meaning', () => {
    const card = datasetCard(cardInput());
    expect(card).toContain('| acme/widgets | 5 | 3 | 3 | 2 |');
    expect(card).toContain('| szz | found by blame alone: PR1 wrote the lines PR2 fixed, and PR2 names no PR | 4 | 1 |');
    expect(card).toContain('| cross_reference |');
    expect(card).toContain('| ineligible | 1 | PR2 is not a bug fix (a feature, a revert or not a bug) |');
    expect(card).toContain('| unattributed | 1 | PR1 did not introduce the defect PR2 fixed |');
    expect(card).toContain('| fix candidates (discover) | 12 |');
    // Plots are linked relatively, the alt text kept free of brackets that would end the link.
    expect(card).toContain('![Funnel: 12 candidates x](plots/funnel.svg)');
  });

  it('labels under the offline rules say "not judged" instead of a table of zeros', () => {
    const card = datasetCard(cardInput());
    expect(card).toContain('Not judged: `severity`, `failure_mode`, `difficulty` and `pr1_difficulty` come from the LLM judges');
    expect(card).not.toContain('severity \\ failure_mode');
  });

  it('judged labels fill severity × failure_mode and difficulty, a missing one counted as not judged', () => {
    const judged = [
      { ...ROWS.test[0]!, severity: 'major', failure_mode: 'silent', difficulty: 'hard', pr1_difficulty: 'medium' },
      { ...ROWS.test[1]!, severity: 'minor', failure_mode: 'silent', difficulty: 'easy', pr1_difficulty: null },
    ];
    const card = datasetCard(cardInput({ testRows: judged }));
    const lines = card.split('\n');
    const at = lines.indexOf('| severity \\ failure_mode | silent | loud | none |');
    expect(lines.slice(at + 2, at + 5)).toEqual(['| major | 1 | 0 | 0 |', '| minor | 1 | 0 | 0 |', '| not_a_bug | 0 | 0 | 0 |']);
    expect(card).toContain('| hard | 1 | 0 |');
    expect(card).toContain('| not judged | 0 | 1 |');
  });
});

// ---- plots ---------------------------------------------------------------------------------------


const PLOT_INPUT: PlotInput = { verifiedRows: ROWS.verified, testRows: ROWS.test, funnel: FUNNEL };

describe('datasetCard judgements', () => {
  it('counts the test rows each judgement left undecided as not judged (the rules abstained; the rows stay)', () => {
    const rule = (v: string) => JSON.stringify({ verdict: v, reason: 'r' });
    const verified = [
      verifiedRow('w__1-2', { excluded: false, eligibility_verdict: null, fairness_consensus: 'pass', solvability_verdict: null, attribution_verdict: null, mining_evidence: JSON.stringify({ picked_by: 'blame' }) }),
      verifiedRow('w__3-4', { excluded: false, eligibility_verdict: null, fairness_consensus: 'pass', solvability_verdict: null, attribution_verdict: null, mining_evidence: JSON.stringify({ picked_by: 'reference' }) }),
      verifiedRow('w__5-6', { excluded: false, eligibility_verdict: rule('bug_fix'), fairness_consensus: 'pass', solvability_verdict: null, attribution_verdict: rule('A'), mining_evidence: JSON.stringify({ picked_by: 'blame' }) }),
      // Excluded: not a test row, not counted.
      verifiedRow('w__7-8', { eligibility_verdict: rule('revert') }),
    ];
    const card = datasetCard(cardInput({ verifiedRows: verified, testRows: verified.slice(0, 3).map((r) => ({ instance_id: r.instance_id, repo: r.repo })) }));
    expect(card).toContain('| eligibility (`eligibility_verdict`) | 3 | 1 | 2 |');
    expect(card).toContain('| attribution (`attribution_verdict`; asked when blame chose PR1) | 2 | 1 | 1 |');
    expect(card).toContain('| fairness (`fairness_consensus`) | 3 | 3 | 0 |');
    expect(card).toContain('| solvability (`solvability_verdict`) | 3 | 0 | 3 |');
  });
});

describe('renderPlots', () => {
  it('draws the funnel as one bar per step, with discover candidates first', async () => {
    const [funnel] = await renderPlots(PLOT_INPUT);
    expect(funnel!.file).toBe('plots/funnel.svg');
    expect(bars(funnel!.svg)).toEqual([
      'chains: 12; step: fix candidates (discover)',
      'chains: 5; step: chains attributed (szz)',
      'chains: 3; step: gradeable (validate)',
      'chains: 2; step: passed the judges (judge)',
      'chains: 2; step: test rows (emit)',
    ]);
    const [noCandidates] = await renderPlots({ ...PLOT_INPUT, funnel: { ...FUNNEL, candidates: null } });
    expect(bars(noCandidates!.svg)).toHaveLength(4);
  });

  it('bins the gap in whole days, each chain counted once, split by test membership', async () => {
    const gap = (await renderPlots(PLOT_INPUT))[1]!;
    // 0..250 days in 20-day bins: 0, 3, 3 in [0, 20); 21 in [20, 40); 250 in [240, 260).
    expect(bars(gap.svg).sort()).toEqual([
      'days (gap_days): 0 – 20; chains: 1; split: verified only',
      'days (gap_days): 0 – 20; chains: 2; split: test',
      'days (gap_days): 20 – 40; chains: 1; split: verified only',
      'days (gap_days): 240 – 260; chains: 1; split: verified only',
    ].sort());
  });

  it('one histogram per test set over the gradeable chains, each on its own integer bins', async () => {
    const sizes = (await renderPlots(PLOT_INPUT))[2]!;
    expect(bars(sizes.svg).sort()).toEqual([
      'ANTICIPATION_FAIL_TO_PASS (tests): 1 – 2; chains: 1; split: test',
      'ANTICIPATION_FAIL_TO_PASS (tests): 1 – 2; chains: 1; split: verified only',
      'ANTICIPATION_FAIL_TO_PASS (tests): 2 – 3; chains: 1; split: test',
      'FAIL_TO_PASS (tests): 1 – 2; chains: 1; split: test',
      'FAIL_TO_PASS (tests): 1 – 2; chains: 1; split: verified only',
      'FAIL_TO_PASS (tests): 3 – 4; chains: 1; split: test',
      // 0..40 in 5-test bins (the 1-2-5 step above 41 / 20).
      'PASS_TO_PASS (tests): 0 – 5; chains: 1; split: verified only',
      'PASS_TO_PASS (tests): 40 – 45; chains: 1; split: test',
      'PASS_TO_PASS (tests): 5 – 10; chains: 1; split: test',
    ].sort());
  });

  it('is deterministic: the same rows give the same bytes, whatever was rendered in between', async () => {
    const first = await renderPlots(PLOT_INPUT);
    await renderPlots({ verifiedRows: ROWS.verified.slice(0, 2), testRows: [], funnel: { ...FUNNEL, candidates: null } });
    const again = await renderPlots(PLOT_INPUT);
    expect(again.map((p) => p.svg)).toEqual(first.map((p) => p.svg));
  });

  it('is self-contained: no link, image, style sheet or script, nothing fetched', async () => {
    for (const plot of await renderPlots(PLOT_INPUT)) {
      const els = svgElements(plot.svg);
      expect(els.map((e) => e.tag).filter((t) => ['image', 'use', 'style', 'script', 'foreignObject', 'a'].includes(t))).toEqual([]);
      const external = els.flatMap((e) => Object.entries(e.attrs)).filter(([k, v]) => !k.startsWith('xmlns') && /(https?:|url\(|data:)/.test(v));
      expect(external).toEqual([]);
    }
  });

  it('renders an empty dataset without failing or warning', async () => {
    const warnings: string[] = [];
    const plots = await renderPlots({ verifiedRows: [], testRows: [], funnel: { candidates: 0, chains: 0, gradeable: 0, judged: 0, test: 0 } }, { warn: (m) => warnings.push(m) });
    expect(plots.map((p) => bars(p.svg).length)).toEqual([5, 0, 0]);
    expect(warnings).toEqual([]);
  });
});

describe('funnelOf', () => {
  const chain = (gradeable: boolean, stage: string | null) =>
    ({ gradeable, excluded: stage ? { reason: 'ineligible', detail: '', stage } : null }) as unknown as JudgedChain;
  it('counts a chain at every step it passed: excluded by the judges after validation found it gradeable', () => {
    const chains = [chain(true, null), chain(true, 'emit'), chain(true, 'judge'), chain(false, 'validate'), chain(false, 'extract')];
    expect(funnelOf(chains, 9)).toEqual({ candidates: 9, chains: 5, gradeable: 3, judged: 2, test: 1 });
  });
});
