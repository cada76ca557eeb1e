/**
 * README.md's configuration table, made from the settings table (core/foundation/settings.ts), one row per
 * setting. `tsx scripts/settings-doc.ts` prints it; `--write` replaces the README's section between the markers;
 * `--check` exits 1 when the README's section differs. test/core/settings.test.ts fails when they differ too.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ForesightError } from '../core/foundation/errors.ts';
import { documentedSettings, shownDefault } from '../core/foundation/settings.ts';
import { PROJECT_ROOT } from '../core/foundation/version.ts';

export const README = join(PROJECT_ROOT, 'README.md');
export const BEGIN = '<!-- settings: generated from core/foundation/settings.ts by `tsx scripts/settings-doc.ts --write`; edit the table there -->';
export const END = '<!-- end of settings -->';

const code = (text: string): string => `\`${text}\``;

/** The Markdown table of every setting a user can set, in the table's order. */
export function settingsMarkdown(): string {
  const rows = documentedSettings().map(([, s]) => {
    const shown = shownDefault(s);
    const meaning = `${s.on ? `${code(s.on)}: ` : ''}${s.doc}${s.secret ? ' (a secret: redacted wherever text leaves the process, never fingerprinted)' : ''}`;
    const cells = [s.env ? code(s.env) : '', s.flag ? code(s.flag.spec) : '', shown === 'unset' ? 'unset' : code(shown), meaning];
    // A pipe would end the cell.
    return `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  });
  return ['| variable | flag | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** Where the generated section sits in `readme`: the text between the markers. */
function bounds(readme: string): { from: number; to: number } {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin < 0 || end < begin) {
    throw new ForesightError('README.md has no settings section', { remedy: `put the lines ${BEGIN} and ${END} where the configuration table goes` });
  }
  return { from: begin + BEGIN.length, to: end };
}

/** The README's settings section as it stands. */
export function readmeSection(readme: string): string {
  const { from, to } = bounds(readme);
  return readme.slice(from, to).trim();
}

/** `readme` with its settings section replaced by `table`. */
export function withSection(readme: string, table: string): string {
  const { from, to } = bounds(readme);
  return `${readme.slice(0, from)}\n${table}\n${readme.slice(to)}`;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const table = settingsMarkdown();
  const readme = readFileSync(README, 'utf8');
  if (process.argv.includes('--write')) {
    const updated = withSection(readme, table);
    if (updated !== readme) writeFileSync(README, updated);
    process.stderr.write(updated === readme ? 'README.md: settings section up to date\n' : 'README.md: settings section rewritten\n');
  } else if (process.argv.includes('--check')) {
    if (readmeSection(readme) !== table) {
      process.stderr.write('README.md: the settings section differs from core/foundation/settings.ts; run tsx scripts/settings-doc.ts --write\n');
      process.exitCode = 1;
    }
  } else {
    process.stdout.write(`${table}\n`);
  }
}
