import { describe, expect, it } from 'vitest';
import { ForesightError } from '../../../core/foundation/errors.ts';
import type { JudgedChain } from '../../../core/foundation/model/judged.ts';
import { datasetCard, REPO_ID_PLACEHOLDER, setCardRepoId, sizeCategory, type CardInput } from '../../../stages/emit/dataset-card.ts';
import type { LicenseDetection } from '../../../stages/emit/license.ts';
import { funnelOf, renderPlots, sumFunnels, type Funnel, type PlotInput } from '../../../stages/emit/plots.ts';
import { bars, hubMetadata, svgElements } from '../../helpers/card.ts';

type Row = Record<string, unknown>;
const sets = (f2p: number, p2p: number, anti: number) => ({
  FAIL_TO_PASS: JSON.stringify(Array.from({ length: f2p }, (_, i) => `t::f${i}`)),
  PASS_TO_PASS: JSON.stringify(Array.from({ length: p2p }, (_, i) => `t::p${i}`)),
  ANTICIPATION_FAIL_TO_PASS: JSON.stringify(Array.from({ length: anti }, (_, i) => `t::a${i}`)),
});
const labels = { severity: null, failure_mode: null, difficulty: null, pr1_difficulty: null };

function funnelRow(id: string, over: Row = {}): Row {
  return { instance_id: id, repo: 'acme/widgets', language: 'python', gradeable: false, excluded: true, exclusion_reason: 'ineligible', mining_category: 'szz', gap_days: 3, ...sets(0, 0, 0), ...labels, ...over };
}

const ROWS = {
  funnel: [
    funnelRow('w__1-2', { gradeable: true, excluded: false, exclusion_reason: null, mining_category: 'cross_reference', gap_days: 0, ...sets(1, 40, 1) }),
    funnelRow('w__3-4', { gradeable: true, excluded: false, exclusion_reason: null, gap_days: 3, ...sets(3, 7, 2) }),
    funnelRow('w__5-6', { gradeable: true, exclusion_reason: 'unattributed', gap_days: 3, ...sets(1, 2, 1) }),
    funnelRow('w__7-8', { gap_days: 250 }),
    funnelRow('w__9-10', { exclusion_reason: 'pr1_no_tests', gap_days: 21 }),
  ],
  verified: [] as Row[],
  test: [] as Row[],
};
ROWS.verified = ROWS.funnel.filter((r) => r.excluded === false);
ROWS.test = ROWS.verified.map(({ exclusion_reason: _e, excluded: _x, gradeable: _g, language: _l, ...r }) => r);
const FUNNEL: Funnel = { candidates: 12, chains: 5, gradeable: 3, judged: 2, test: 2 };
const BSD: LicenseDetection = { kind: 'known', ids: ['bsd-3-clause'], files: ['LICENSE'], commit: 'a'.repeat(40) };

function cardInput(over: Partial<CardInput> = {}, license: LicenseDetection = BSD): CardInput {
  return {
    title: 'Fix-chains of acme/widgets',
    repos: [{ repo: 'acme/widgets', license, funnel: FUNNEL }],
    repoId: null,
    testRows: ROWS.test,
    verifiedRows: ROWS.verified,
    funnelRows: ROWS.funnel,
    foresightVersion: 'test',
    plots: [{ file: 'plots/funnel.svg', title: 'Funnel', alt: 'Funnel: 12 candidates [x]' }],
    ...over,
  };
}


describe('datasetCard metadata (parsed by huggingface_hub)', () => {
  it('has the three configs, the detected license, the Hub task and size buckets, tags and a pretty name', async () => {
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
        { config_name: 'funnel', data_files: [{ split: 'funnel', path: 'funnel/funnel-*' }] },
      ],
    });
  });

  it('a dual license is a list; an unknown or missing one is `other` with a license_name, never a guess', async () => {
    const dual = await hubMetadata(datasetCard(cardInput({}, { kind: 'known', ids: ['apache-2.0', 'mit'], files: ['LICENSE-APACHE', 'LICENSE-MIT'], commit: 'b'.repeat(40) })));
    expect(dual.license).toEqual(['apache-2.0', 'mit']);
    const odd = await hubMetadata(datasetCard(cardInput({}, { kind: 'unrecognised', files: ['COPYING'], commit: 'c'.repeat(40) })));
    expect([odd.license, odd.license_name]).toEqual(['other', 'unrecognised-license']);
    const none = datasetCard(cardInput({}, { kind: 'none', commit: 'd'.repeat(40) }));
    expect((await hubMetadata(none)).license_name).toBe('no-license-file');
    expect(none).toContain('no LICENSE or COPYING file at commit `dddddddddddd`');
  });

  it('several repositories: one license when they agree, else `other` named multiple-licenses, each listed in the License section', async () => {
    const mit: LicenseDetection = { kind: 'known', ids: ['mit'], files: ['LICENSE'], commit: 'e'.repeat(40) };
    const two = (a: LicenseDetection, b: LicenseDetection) =>
      datasetCard(cardInput({ title: 'Fix-chains, spring release', repos: [{ repo: 'acme/widgets', license: a, funnel: FUNNEL }, { repo: 'acme/gadgets', license: b, funnel: FUNNEL }] }));
    const same = await hubMetadata(two(mit, { ...mit, commit: 'f'.repeat(40) }));
    expect([same.license, same.license_name, same.pretty_name]).toEqual(['mit', undefined, 'Fix-chains, spring release']);
    const mixed = two(mit, BSD);
    expect(await hubMetadata(mixed)).toMatchObject({ license: 'other', license_name: 'multiple-licenses' });
    expect(mixed).toContain('| acme/widgets | MIT (`mit`), read from `LICENSE` at commit `eeeeeeeeeeee` |');
    expect(mixed).toContain('| acme/gadgets | BSD 3-clause "New" or "Revised" license (`bsd-3-clause`), read from `LICENSE` at commit `aaaaaaaaaaaa` |');
    // A repository with no chain yet is still a row of the composition, and its funnel counts.
    expect(mixed).toContain('| acme/gadgets | 0 | 0 | 0 | 0 | 0 |');
    expect(mixed).toContain('| fix candidates (discover) | 24 |');
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

  it('the configs section says what each config holds, its rows, and loads each one', () => {
    const card = datasetCard(cardInput({ repoId: 'acme/foresight-widgets' }));
    expect(card).toContain('| `default` | `test` | 2 | the chains that passed every gate');
    expect(card).toContain('| `verified` | `verified` | 2 | the same chains in the verified schema');
    expect(card).toContain('| `funnel` | `funnel` | 5 | every mined chain, in the verified schema: the audit trail');
    expect(card).toContain('funnel = load_dataset("acme/foresight-widgets", "funnel", split="funnel")');
    expect(card).not.toContain('This release has');
    // A later release's `verified` may carry a published row that no longer holds: same schema, excluded = true.
    const republished = datasetCard(cardInput({ verifiedRows: [...ROWS.verified, ROWS.funnel[2]!] }));
    expect(republished).toContain('This release has 1 such row.');
    expect(republished).toContain('| `verified` | `verified` | 3 |');
  });

  it('a changelog is rendered when given, and only then', () => {
    const card = datasetCard(cardInput({ changelog: ['- 2026-03: `minilib__3-8` excluded (gold_check_failed)', '- 2026-02: first release'] }));
    const lines = card.split('\n');
    const at = lines.indexOf('## Changelog');
    expect(lines.slice(at, at + 4)).toEqual(['## Changelog', '', '- 2026-03: `minilib__3-8` excluded (gold_check_failed)', '- 2026-02: first release']);
    expect(at).toBeGreaterThan(lines.indexOf('## License'));
    expect(datasetCard(cardInput())).not.toContain('## Changelog');
  });

  it('refuses a repository id that would break out of the snippet', () => {
    expect(() => setCardRepoId(datasetCard(cardInput()), 'acme/x", trust_remote_code=True, x="')).toThrow(ForesightError);
    expect(() => datasetCard(cardInput({ repoId: 'no-owner' }))).toThrow(/not a Hugging Face repository id/);
  });

  it('composition tables: per repository, mining category, exclusions with their meaning', () => {
    const card = datasetCard(cardInput());
    // funnel chains, gradeable, excluded, verified rows, test rows
    expect(card).toContain('| acme/widgets | 5 | 3 | 3 | 2 | 2 |');
    expect(card).toContain('| python | 5 | 3 | 3 | 2 | 2 |');
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


const PLOT_INPUT: PlotInput = { funnelRows: ROWS.funnel, testRows: ROWS.test, funnel: FUNNEL };

describe('datasetCard judgements', () => {
  it('counts the test rows each judgement left undecided as not judged (the rules abstained; the rows stay)', () => {
    const rule = (v: string) => JSON.stringify({ verdict: v, reason: 'r' });
    const funnel = [
      funnelRow('w__1-2', { excluded: false, eligibility_verdict: null, fairness_consensus: 'pass', solvability_verdict: null, attribution_verdict: null, mining_evidence: JSON.stringify({ picked_by: 'blame' }) }),
      funnelRow('w__3-4', { excluded: false, eligibility_verdict: null, fairness_consensus: 'pass', solvability_verdict: null, attribution_verdict: null, mining_evidence: JSON.stringify({ picked_by: 'reference' }) }),
      funnelRow('w__5-6', { excluded: false, eligibility_verdict: rule('bug_fix'), fairness_consensus: 'pass', solvability_verdict: null, attribution_verdict: rule('A'), mining_evidence: JSON.stringify({ picked_by: 'blame' }) }),
      // Excluded: not a test row, not counted.
      funnelRow('w__7-8', { eligibility_verdict: rule('revert') }),
    ];
    const card = datasetCard(cardInput({ funnelRows: funnel, verifiedRows: funnel.slice(0, 3), testRows: funnel.slice(0, 3).map((r) => ({ instance_id: r.instance_id, repo: r.repo })) }));
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
      'days (gap_days): 0 – 20; chains: 1; split: funnel only',
      'days (gap_days): 0 – 20; chains: 2; split: test',
      'days (gap_days): 20 – 40; chains: 1; split: funnel only',
      'days (gap_days): 240 – 260; chains: 1; split: funnel only',
    ].sort());
  });

  it('one histogram per test set over the gradeable chains, each on its own integer bins', async () => {
    const sizes = (await renderPlots(PLOT_INPUT))[2]!;
    expect(bars(sizes.svg).sort()).toEqual([
      'ANTICIPATION_FAIL_TO_PASS (tests): 1 – 2; chains: 1; split: test',
      'ANTICIPATION_FAIL_TO_PASS (tests): 1 – 2; chains: 1; split: funnel only',
      'ANTICIPATION_FAIL_TO_PASS (tests): 2 – 3; chains: 1; split: test',
      'FAIL_TO_PASS (tests): 1 – 2; chains: 1; split: test',
      'FAIL_TO_PASS (tests): 1 – 2; chains: 1; split: funnel only',
      'FAIL_TO_PASS (tests): 3 – 4; chains: 1; split: test',
      // 0..40 in 5-test bins (the 1-2-5 step above 41 / 20).
      'PASS_TO_PASS (tests): 0 – 5; chains: 1; split: funnel only',
      'PASS_TO_PASS (tests): 40 – 45; chains: 1; split: test',
      'PASS_TO_PASS (tests): 5 – 10; chains: 1; split: test',
    ].sort());
  });

  it('is deterministic: the same rows give the same bytes, whatever was rendered in between', async () => {
    const first = await renderPlots(PLOT_INPUT);
    await renderPlots({ funnelRows: ROWS.funnel.slice(0, 2), testRows: [], funnel: { ...FUNNEL, candidates: null } });
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
    const plots = await renderPlots({ funnelRows: [], testRows: [], funnel: { candidates: 0, chains: 0, gradeable: 0, judged: 0, test: 0 } }, { warn: (m) => warnings.push(m) });
    expect(plots.map((p) => bars(p.svg).length)).toEqual([5, 0, 0]);
    expect(warnings).toEqual([]);
  });
});

describe('sumFunnels', () => {
  it('adds each step; the candidates are unknown when one repository has none recorded', () => {
    expect(sumFunnels([FUNNEL, { candidates: 3, chains: 2, gradeable: 1, judged: 1, test: 0 }])).toEqual({ candidates: 15, chains: 7, gradeable: 4, judged: 3, test: 2 });
    expect(sumFunnels([FUNNEL, { ...FUNNEL, candidates: null }]).candidates).toBeNull();
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
