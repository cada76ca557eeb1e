import { logger, parse, View, Warn, type Loader } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { STAGES } from '../../core/foundation/stage.ts';
import type { JudgedChain } from '../../core/foundation/model/judged.ts';

/**
 * The dataset's pictures, drawn with vega-lite (compiled to vega, rendered headless to SVG): the
 * exclusion funnel, the gap between PR1 and PR2, and the sizes of the test sets. Self-contained SVG
 * (no font, image or URL outside the file) and deterministic: the same rows give the same bytes.
 */

/** How many chains survive each step, from the fix candidates discover found to the `test` rows. */
export interface Funnel {
  /** Fix candidates discover found (its manifest's stats); null when that manifest is absent. */
  candidates: number | null;
  /** Chains SZZ attributed to a PR1: every row of `funnel`. */
  chains: number;
  /** Chains validation found gradeable (every state ran; F2P, P2P and anticipation sets non-empty). */
  gradeable: number;
  /** Gradeable chains every judge passed. */
  judged: number;
  /** Rows of `test`: judged chains whose eval image built and whose gold patch graded right. */
  test: number;
}

/** The funnel of emit's chains (after emit's own gates), with discover's candidate count. */
export function funnelOf(chains: readonly JudgedChain[], candidates: number | null): Funnel {
  const judgeAt = STAGES.indexOf('judge');
  // Excluded at judge or later: validation had found it gradeable, so it counts at that step.
  const pastValidate = (c: JudgedChain) => !c.excluded || STAGES.indexOf(c.excluded.stage) >= judgeAt;
  const gradeable = chains.filter((c) => c.gradeable && pastValidate(c));
  const judged = gradeable.filter((c) => !c.excluded || c.excluded.stage === 'emit');
  return { candidates, chains: chains.length, gradeable: gradeable.length, judged: judged.length, test: chains.filter((c) => c.gradeable && !c.excluded).length };
}

/** The funnel of several repositories: each step summed; the candidates unknown when any repository's are. */
export function sumFunnels(funnels: readonly Funnel[]): Funnel {
  const sum = (k: Exclude<keyof Funnel, 'candidates'>) => funnels.reduce((n, f) => n + f[k], 0);
  const candidates = funnels.some((f) => f.candidates === null) ? null : funnels.reduce((n, f) => n + f.candidates!, 0);
  return { candidates, chains: sum('chains'), gradeable: sum('gradeable'), judged: sum('judged'), test: sum('test') };
}

export interface PlotInput {
  /** Rows of the `funnel` config (every mined chain). */
  funnelRows: ReadonlyArray<Record<string, unknown>>;
  /** Rows of the `test` split. */
  testRows: ReadonlyArray<Record<string, unknown>>;
  funnel: Funnel;
}

export interface Plot {
  /** Path inside the dataset folder, posix separators: `plots/<name>.svg`. */
  file: string;
  title: string;
  /** One sentence for the image's alt text. */
  alt: string;
  svg: string;
}

const SPLIT_COLORS = { domain: ['test', 'funnel only'], range: ['#4c78a8', '#bab0ac'] };
const WIDTH = 560;
const BASE = { $schema: 'https://vega.github.io/schema/vega-lite/v6.json', background: 'white', config: { font: 'sans-serif', view: { stroke: null } } } as const;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function funnelSpec(f: Funnel): TopLevelSpec {
  const steps = [
    ...(f.candidates === null ? [] : [{ step: 'fix candidates (discover)', n: f.candidates }]),
    { step: 'chains attributed (szz)', n: f.chains },
    { step: 'gradeable (validate)', n: f.gradeable },
    { step: 'passed the judges (judge)', n: f.judged },
    { step: 'test rows (emit)', n: f.test },
  ];
  const y = { field: 'step', type: 'nominal', sort: steps.map((s) => s.step), title: null, axis: { labelLimit: 260 } } as const;
  return {
    ...BASE,
    title: { text: 'From candidates to test rows', subtitle: f.candidates === null ? "discover's candidate count is not recorded" : [] },
    width: WIDTH - 200,
    data: { values: steps },
    encoding: { y, x: { field: 'n', type: 'quantitative', title: 'chains', axis: { tickMinStep: 1 } } },
    layer: [
      { mark: { type: 'bar', color: '#4c78a8' } },
      { mark: { type: 'text', align: 'left', dx: 4 }, encoding: { text: { field: 'n', type: 'quantitative' } } },
    ],
  };
}

const inTest = (testRows: PlotInput['testRows']) => {
  const ids = new Set(testRows.map((r) => String(r.instance_id)));
  return (r: Record<string, unknown>) => (ids.has(String(r.instance_id)) ? 'test' : 'funnel only');
};

function gapSpec(input: PlotInput): TopLevelSpec {
  const split = inTest(input.testRows);
  const values = input.funnelRows.map((r) => ({ gap_days: Number(r.gap_days), split: split(r) }));
  return {
    ...BASE,
    title: { text: 'Days between PR1 and PR2', subtitle: `merge to merge, ${plural(values.length, 'chain')}` },
    width: WIDTH,
    height: 200,
    data: { values },
    mark: 'bar',
    encoding: {
      x: histogramX('gap_days', values.map((v) => v.gap_days), 'days (gap_days)'),
      y: countY(values.length),
      color: { field: 'split', type: 'nominal', scale: SPLIT_COLORS, legend: { title: null, orient: 'top' } },
    },
  };
}

const SETS = ['FAIL_TO_PASS', 'PASS_TO_PASS', 'ANTICIPATION_FAIL_TO_PASS'] as const;

function setSize(v: unknown): number {
  const list: unknown = typeof v === 'string' ? JSON.parse(v) : v;
  return Array.isArray(list) ? list.length : 0;
}

/**
 * Integer bins from 0 (or below, for a negative value) covering every value, about 20 of them at most, with
 * a 1-2-5 step: a set of 14 tests is the bar [14, 15) on an axis from 0, never one bin stretched over the width.
 */
function integerBins(values: readonly number[]): { extent: [number, number]; step: number } {
  const lo = values.reduce((a, b) => Math.min(a, b), 0);
  const hi = values.reduce((a, b) => Math.max(a, b), 0);
  const raw = Math.max(1, (hi - lo + 1) / 20);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw)!;
  return { extent: [Math.floor(lo / step) * step, Math.ceil((hi + 1) / step) * step], step };
}

/** The binned x of a histogram; its scale spans the bins, so an empty one still has an axis. */
function histogramX(field: string, values: readonly number[], title: string) {
  const bin = integerBins(values);
  return { field, type: 'quantitative', bin, scale: { domain: bin.extent }, title, axis: { format: 'd' } } as const;
}

/** The count axis; with no data its domain is [0, 1] rather than an infinite extent. */
function countY(n: number) {
  return { aggregate: 'count', type: 'quantitative', title: 'chains', axis: { tickMinStep: 1, format: 'd' }, ...(n ? {} : { scale: { domain: [0, 1] } }) } as const;
}

function setSizesSpec(input: PlotInput): TopLevelSpec {
  const split = inTest(input.testRows);
  // Gradeable chains: the ones whose sets are complete (every state ran).
  const rows = input.funnelRows.filter((r) => r.gradeable === true);
  const values = rows.flatMap((r) => SETS.map((set) => ({ set, size: setSize(r[set]), split: split(r) })));
  return {
    ...BASE,
    title: { text: 'Sizes of the test sets', subtitle: `tests per set, ${plural(rows.length, 'gradeable chain')}` },
    data: { values },
    // One histogram per set, each binned on its own range (PASS_TO_PASS runs to hundreds, the others to a few).
    vconcat: SETS.map((set) => ({
      width: WIDTH,
      height: 90,
      transform: [{ filter: { field: 'set', equal: set } }],
      mark: 'bar',
      encoding: {
        x: histogramX('size', values.filter((v) => v.set === set).map((v) => v.size), `${set} (tests)`),
        y: countY(rows.length),
        color: { field: 'split', type: 'nominal', scale: SPLIT_COLORS, legend: { title: null, orient: 'top' } },
      },
    })),
  };
}

// Every datum is inline: a spec that tried to load anything (data URL, image) fails instead of reaching out.
const NO_LOADS: Loader = {
  load: (uri) => Promise.reject(new Error(`plots load nothing (asked for ${uri})`)),
  sanitize: (uri) => Promise.reject(new Error(`plots load nothing (asked for ${uri})`)),
  http: (uri) => Promise.reject(new Error(`plots load nothing (asked for ${uri})`)),
  file: (uri) => Promise.reject(new Error(`plots load nothing (asked for ${uri})`)),
};

export interface RenderOptions {
  /** Where vega's and vega-lite's warnings go (default: nowhere; never the console, which the progress display owns). */
  warn?: (message: string) => void;
}

/** A vega-lite spec as SVG text: compiled to vega, rendered without a canvas or a DOM. */
export async function specToSvg(spec: TopLevelSpec, opts: RenderOptions = {}): Promise<string> {
  const log = logger(Warn, undefined, (_method, _level, args) => opts.warn?.(args.map(String).join(' ')));
  const view = new View(parse(compile(spec, { logger: log }).spec), { renderer: 'none', loader: NO_LOADS, logger: log });
  try {
    return (await view.toSVG()) + '\n';
  } finally {
    view.finalize();
  }
}

/** The dataset's plots, in the order the card shows them. */
export async function renderPlots(input: PlotInput, opts: RenderOptions = {}): Promise<Plot[]> {
  const f = input.funnel;
  const gradeable = input.funnelRows.filter((r) => r.gradeable === true).length;
  return [
    {
      file: 'plots/funnel.svg',
      title: 'From candidates to test rows',
      alt: `Funnel: ${f.candidates === null ? '' : `${plural(f.candidates, 'fix candidate')}, `}${plural(f.chains, 'chain')}, ${f.gradeable} gradeable, ${f.judged} passed the judges, ${plural(f.test, 'test row')}`,
      svg: await specToSvg(funnelSpec(f), opts),
    },
    {
      file: 'plots/gap-days.svg',
      title: 'Days between PR1 and PR2',
      alt: `Histogram of the days between PR1's and PR2's merges over ${plural(input.funnelRows.length, 'chain')}`,
      svg: await specToSvg(gapSpec(input), opts),
    },
    {
      file: 'plots/test-set-sizes.svg',
      title: 'Sizes of the test sets',
      alt: `Histograms of the FAIL_TO_PASS, PASS_TO_PASS and ANTICIPATION_FAIL_TO_PASS sizes over ${plural(gradeable, 'gradeable chain')}`,
      svg: await specToSvg(setSizesSpec(input), opts),
    },
  ];
}
