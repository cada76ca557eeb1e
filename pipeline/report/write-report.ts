import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { writeAtomic } from '../../core/foundation/artifacts.ts';
import { FORESIGHT_VERSION } from '../../core/foundation/version.ts';
import { readReportRows } from './read-dataset.ts';
import { readEvals } from './read-evals.ts';
import { readStates, type ChainStates } from './read-states.ts';
import { loadAssets, reasonMeanings, renderPage, type ReportPlot } from './render-page.ts';

export interface ReportOptions {
  /** The emitted dataset folder (data/<owner>__<name>/emit/hf: jsonl/{funnel,verified,test}.jsonl, plots/*.svg). */
  dataset: string;
  /** Where the page goes. Default: `<dataset>/../report.html`, beside the dataset so publishing the folder never uploads it. */
  out?: string;
}

export interface ReportResult {
  /** The page written. */
  path: string;
  chains: number;
  test: number;
  plots: number;
  /** Chains shown with their per-state outcomes. */
  withStates: number;
  /** Eval results shown: one per model and split (the latest run of each). */
  evalModels: Array<{ model: string; split: string; run: string; instances: number }>;
  /** What the page leaves out and why, one line each (the CLI prints them). */
  notes: string[];
}

/** The default page path: beside the dataset folder, not inside it. */
export function defaultReportPath(dataset: string): string {
  return join(dirname(resolve(dataset)), 'report.html');
}

/** plots/*.svg of the dataset (written by emit), by file name. */
async function readPlots(dataset: string, notes: string[]): Promise<ReportPlot[]> {
  const dir = join(dataset, 'plots');
  if (!existsSync(dir)) return [];
  const plots: ReportPlot[] = [];
  for (const name of (await readdir(dir)).filter((n) => n.endsWith('.svg')).sort()) {
    const svg = await readFile(join(dir, name));
    if (!svg.toString('utf8').includes('<svg')) {
      notes.push(`plots/${name} is not an SVG image: left out`);
      continue;
    }
    plots.push({ name, title: name.replace(/\.svg$/, '').replace(/[-_]+/g, ' '), src: `data:image/svg+xml;base64,${svg.toString('base64')}` });
  }
  return plots;
}

/** `foresight report`: one self-contained HTML page of an emitted dataset. */
export async function writeReport(opts: ReportOptions): Promise<ReportResult> {
  const dataset = resolve(opts.dataset);
  const path = opts.out ? resolve(opts.out) : defaultReportPath(dataset);
  const notes: string[] = [];
  const { rows, olderLayout } = await readReportRows(dataset);
  if (olderLayout) notes.push(`${join(dataset, 'jsonl')} has no funnel.jsonl (an older foresight wrote it): every chain is read from verified.jsonl; emit again for the three configs`);
  const plots = await readPlots(dataset, notes);
  const states = await readStates(dataset, new Map(rows.map((r) => [r.instance_id, r])));
  let statesNote: string | null = null;
  let stale: string[] = [];
  let byId = new Map<string, ChainStates>();
  switch (states.kind) {
    case 'absent':
      statesNote = `per-state outcomes not shown: ${states.reason}`;
      break;
    case 'unreadable':
      statesNote = `per-state outcomes not shown: ${states.path} ${states.reason}`;
      break;
    case 'read':
      ({ byId, stale } = states);
      if (stale.length) notes.push(`per-state outcomes left out for ${stale.join(', ')}: ${states.path} no longer gives the emitted sets (validate ran after emit: emit again)`);
      break;
  }
  if (statesNote) notes.push(statesNote);
  const evals = await readEvals(dataset, new Map(rows.map((r) => [r.instance_id, r])));
  notes.push(...evals.warnings);
  const evalNote = evals.models.length
    ? null
    : evals.found
      ? `no eval result shown: every ${join(dataset, 'eval')}/*/report.json was skipped (see the notes printed by foresight report)`
      : `no eval results beside the dataset: foresight eval --dataset ${dataset} --gold (or --predictions preds.jsonl) writes ${join(dataset, 'eval')}/<run>/report.json`;
  if (!relative(dataset, path).startsWith('..')) notes.push(`${path} is inside the dataset folder: publishing the folder would upload the page`);
  const page = renderPage(
    {
      repos: [...new Set(rows.map((r) => r.repo).filter(Boolean))].sort(),
      foresightVersion: FORESIGHT_VERSION,
      reasons: reasonMeanings(),
      plots,
      rows: rows.map((r) => ({ ...r, states: byId.get(r.instance_id) ?? null, evals: evals.byId.get(r.instance_id) ?? [] })),
      statesNote,
      staleStates: stale,
      evals: { models: evals.models, note: evalNote },
    },
    await loadAssets(),
  );
  await writeAtomic(path, page);
  return {
    path,
    chains: rows.length,
    test: rows.filter((r) => r.split === 'test').length,
    plots: plots.length,
    withStates: byId.size,
    evalModels: evals.models.map((m) => ({ model: m.model, split: m.split, run: m.run, instances: m.aggregate.instances })),
    notes,
  };
}
