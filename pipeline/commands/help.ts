import { documentedSettings, longFlag, shownDefault, type Setting } from '../../core/foundation/settings.ts';

/** A doc line of the settings table as a terminal shows it (no Markdown). */
export function plain(doc: string): string {
  return doc.replace(/`/g, '');
}

/** One variable's help: its doc, then its flag, default and whether it is a secret. */
export function environmentHelp(s: Setting): string {
  const shown = shownDefault(s);
  const notes = [s.flag && longFlag(s.flag.spec), shown !== 'unset' && `default ${shown}`, s.secret && 'never printed'].filter(Boolean);
  return `${plain(s.on ? `${s.on}: ${s.doc}` : s.doc)}${notes.length ? ` (${notes.join('; ')})` : ''}`;
}

/** The environment variables, as `foresight --help` lists them: every one the settings table has, in its order. */
export const ENVIRONMENT: ReadonlyArray<readonly [name: string, meaning: string]> = documentedSettings()
  .filter(([, s]) => s.env !== undefined)
  .map(([, s]) => [s.env!, environmentHelp(s)] as const);

/** Two columns, the meaning on its own line when the names are long. */
export function helpTable(rows: ReadonlyArray<readonly [string, string]>): string {
  const width = 34;
  return rows.map(([a, b]) => (a.length < width - 2 ? `  ${a.padEnd(width - 2)}${b}` : `  ${a}\n${' '.repeat(width)}${b}`)).join('\n');
}

export const EXAMPLES: ReadonlyArray<readonly [string, string]> = [
  ['foresight demo', 'mine the bundled demo repository (no network, no keys)'],
  ['foresight run --repo encode/starlette --since 2024-01-01', 'mine a window of a GitHub repository'],
  ['foresight run --repo django/django --clone ~/src/django --from validate', 'rerun validate and the stages after it'],
  ['foresight eval --dataset data/demo__minilib/emit/hf --gold', "grade each row's own patch in its eval image"],
  ['foresight stages', 'the stages in order and the fingerprint of their code'],
];

/** A campaign file, as `foresight campaign --help` and the README show it. */
export const CAMPAIGN_EXAMPLE = `  name: spring-2026                  # <data>/campaigns/spring-2026/
  title: Fix-chains of three projects
  repos:
    - repo: django/django
      clone: ../src/django            # a local clone (relative to this file) or a git URL
      units: commits
      tracker: trac
      trac_url: https://code.djangoproject.com
      windows:
        - { since: 2023-05-01, until: 2023-08-01 }
    - repo: go-chi/chi
      language: go                    # which ecosystem recipe detection tries first
      windows:
        - { since: 2024-01-01 }
    - repo: unjs/ufo
      recipes: detect                 # shipped (default) or detect`;

export const ROOT_HELP = `
Examples:
${EXAMPLES.map(([cmd, what]) => `  $ ${cmd}\n      ${what}`).join('\n')}

Environment (flags win over it; README.md "Configuration" says more):
${helpTable(ENVIRONMENT)}
`;
