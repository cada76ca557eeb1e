/**
 * The card's YAML front matter: the Hub's metadata (name, license, tags, size) and the configs whose
 * data_files make `load_dataset` find each split.
 */
import type { CardInput, DatasetRepo } from './dataset-card.ts';
import type { LicenseDetection } from './license.ts';

type Yaml = string | readonly Yaml[] | { readonly [k: string]: Yaml };

// Plain scalars only where YAML cannot read them as anything but that string; everything else is quoted (JSON is YAML).
const PLAIN = /^[A-Za-z_][A-Za-z0-9 _./<>*+-]*$/;
const RESERVED = /^(true|false|yes|no|on|off|null|y|n)$/i;
const scalar = (s: string): string => (PLAIN.test(s) && !RESERVED.test(s) && !s.endsWith(' ') ? s : JSON.stringify(s));

/** Block-style YAML of maps, lists and strings: the subset the card's metadata needs. */
export function toYaml(value: Yaml, indent = ''): string[] {
  if (typeof value === 'string') return [`${indent}${scalar(value)}`];
  if (Array.isArray(value)) {
    return (value as readonly Yaml[]).flatMap((item) => {
      const [first, ...rest] = typeof item === 'string' ? [scalar(item)] : toYaml(item, `${indent}  `).map((l) => l.slice(indent.length + 2));
      return [`${indent}- ${first}`, ...rest.map((l) => `${indent}  ${l}`)];
    });
  }
  return Object.entries(value as Record<string, Yaml>).flatMap(([k, v]) =>
    typeof v === 'string' ? [`${indent}${scalar(k)}: ${scalar(v)}`] : [`${indent}${scalar(k)}:`, ...toYaml(v, Array.isArray(v) ? indent : `${indent}  `)],
  );
}

/** The Hub's size bucket of a row count. */
export function sizeCategory(n: number): string {
  const buckets: Array<[number, string]> = [
    [1e3, 'n<1K'], [1e4, '1K<n<10K'], [1e5, '10K<n<100K'], [1e6, '100K<n<1M'], [1e7, '1M<n<10M'],
    [1e8, '10M<n<100M'], [1e9, '100M<n<1B'], [1e10, '1B<n<10B'], [1e11, '10B<n<100B'], [1e12, '100B<n<1T'],
  ];
  return buckets.find(([limit]) => n < limit)?.[1] ?? 'n>1T';
}

function licenseMeta(l: LicenseDetection): Record<string, Yaml> {
  if (l.kind === 'known') return { license: l.ids.length === 1 ? l.ids[0]! : l.ids };
  // `other` needs a license_name on the Hub; the card's License section says what was (not) found.
  return { license: 'other', license_name: l.kind === 'none' ? 'no-license-file' : 'unrecognised-license' };
}

/**
 * The dataset's license: the repositories' when they all agree; else `other`, named `multiple-licenses` (a list
 * of ids would read as a choice between them): each row is under its own repository's, as the License section lists.
 */
export function datasetLicenseMeta(repos: ReadonlyArray<DatasetRepo>): Record<string, Yaml> {
  const metas = repos.map((r) => licenseMeta(r.license));
  const first = metas[0];
  if (first && metas.every((m) => JSON.stringify(m) === JSON.stringify(first))) return first;
  return { license: 'other', license_name: first ? 'multiple-licenses' : 'no-repository' };
}

/** The three configs: where each one's parquet lives (the folders publish owns, pipeline/publish/select-files.ts). */
export const CONFIGS = [
  { config_name: 'default', split: 'test', path: 'data/test-*' },
  { config_name: 'verified', split: 'verified', path: 'verified/verified-*' },
  { config_name: 'funnel', split: 'funnel', path: 'funnel/funnel-*' },
] as const;

export function frontMatter(input: CardInput): string[] {
  const languages = [...new Set(input.funnelRows.map((r) => r.language).filter((l): l is string => typeof l === 'string'))].sort();
  const meta: Record<string, Yaml> = {
    pretty_name: input.title,
    ...datasetLicenseMeta(input.repos),
    // Agents are asked to write a patch: text (code) generation; the Hub has no code-repair category.
    task_categories: ['text-generation'],
    tags: ['code', 'benchmark', 'software-engineering', 'swe-bench', 'fix-chains', ...languages],
    // The largest config: every chain is a row of `funnel` (`test` and `verified` hold those that passed).
    size_categories: [sizeCategory(Math.max(input.funnelRows.length, input.verifiedRows.length, input.testRows.length))],
    configs: CONFIGS.map((c) => ({
      config_name: c.config_name,
      data_files: [{ split: c.split, path: c.path }, ...(c.split === 'test' ? [] : (input.releaseSplits ?? []).map((name) => ({ split: name, path: `${c.split}/${name}-*` })))],
    })),
  };
  return ['---', ...toYaml(meta), '---'];
}
