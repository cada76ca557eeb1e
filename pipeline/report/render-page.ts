/**
 * The report as one static HTML file: styles and scripts inline (diff2html's browser bundle and CSS, the
 * page's own script), the data as JSON in a <script type="application/json"> with every `<` escaped, and
 * a Content-Security-Policy that lets only those two scripts run and nothing load from anywhere
 * (`default-src 'none'`): a row that smuggled markup past the escaping could still neither run nor fetch.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { EXCLUSION_REASONS } from '../../core/foundation/model/change.ts';
import type { ReportRow } from './read-dataset.ts';
import type { ChainEval, EvalModel } from './read-evals.ts';
import type { ChainStates } from './read-states.ts';

export interface ReportPlot {
  /** File name under plots/. */
  name: string;
  title: string;
  /** A data: URL of the SVG, shown with <img> (an SVG image runs no script and loads nothing). */
  src: string;
}

/** What the page's script reads (assets/report.js). */
export interface ReportPageData {
  repos: string[];
  foresightVersion: string;
  /** exclusion_reason -> its meaning. */
  reasons: Record<string, string>;
  plots: ReportPlot[];
  /** `evals`: each eval model's result on the chain (index `m` into `evals.models`). */
  rows: Array<ReportRow & { states: ChainStates | null; evals: ChainEval[] }>;
  /** `foresight eval`'s results beside the dataset: the latest run per model and split. */
  evals: {
    models: EvalModel[];
    /** Why no result is shown (no eval folder, or every report skipped), else null. */
    note: string | null;
  };
  /** Why no chain has per-state outcomes (no validate artifact beside the dataset, or an unreadable one). */
  statesNote: string | null;
  /** Chains whose validate record no longer gives the emitted sets: their states are left out. */
  staleStates: string[];
}

export interface PageAssets {
  diffJs: string;
  diffCss: string;
  js: string;
  css: string;
}

const require = createRequire(import.meta.url);

export async function loadAssets(): Promise<PageAssets> {
  const [diffJs, diffCss, js, css] = await Promise.all([
    readFile(require.resolve('diff2html/bundles/js/diff2html.min.js'), 'utf8'),
    readFile(require.resolve('diff2html/bundles/css/diff2html.min.css'), 'utf8'),
    readFile(fileURLToPath(new URL('./assets/report.js', import.meta.url)), 'utf8'),
    readFile(fileURLToPath(new URL('./assets/report.css', import.meta.url)), 'utf8'),
  ]);
  return { diffJs, diffCss, js, css };
}

export function reasonMeanings(): Record<string, string> {
  return { ...EXCLUSION_REASONS };
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON safe inside a <script> element: no `<` survives, so neither `</script>` nor `<!--` can end it. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

const cspHash = (script: string): string => `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;

/** Inline code must not be able to close its own element. */
function inline(code: string, tag: 'script' | 'style', what: string): string {
  if (new RegExp(`</${tag}`, 'i').test(code)) throw new Error(`${what} contains </${tag}> and cannot be inlined`);
  return code;
}

export function renderPage(data: ReportPageData, assets: PageAssets): string {
  const diffJs = inline(assets.diffJs, 'script', 'diff2html.min.js');
  const js = inline(assets.js, 'script', 'report.js');
  const csp = [`default-src 'none'`, `img-src data:`, `style-src 'unsafe-inline'`, `script-src ${cspHash(diffJs)} ${cspHash(js)}`].join('; ');
  const title = `foresight report: ${data.repos.join(', ') || 'empty dataset'}`;
  const test = data.rows.filter((r) => r.split === 'test').length;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(title)}</title>
<style>${inline(assets.diffCss, 'style', 'diff2html.min.css')}</style>
<style>${inline(assets.css, 'style', 'report.css')}</style>
</head>
<body>
<header class="top">
<h1>${escapeHtml(title)}</h1>
<div class="muted">${data.rows.length} chains in <code>funnel</code>, ${test} in <code>test</code> and <code>verified</code> · foresight ${escapeHtml(data.foresightVersion)}</div>
</header>
<main id="app"><noscript>This report draws its tables and diffs with JavaScript: open it in a browser with scripts enabled.</noscript></main>
<script type="application/json" id="report-data">${scriptJson(data)}</script>
<script>${diffJs}</script>
<script>${js}</script>
</body>
</html>
`;
}
