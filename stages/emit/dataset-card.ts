import { ForesightError } from '../../core/foundation/errors.ts';
import { EXCLUSION_REASONS, type ExclusionReason } from '../../core/foundation/model/change.ts';
import type { HubLicenseId, LicenseDetection } from './license.ts';
import { sumFunnels, type Funnel, type Plot } from './plots.ts';
import { datasetLicenseMeta, frontMatter } from './card-meta.ts';

export { CONFIGS, sizeCategory, toYaml } from './card-meta.ts';

type Row = Record<string, unknown>;

/** One mined repository of a dataset. */
export interface DatasetRepo {
  /** owner/name. */
  repo: string;
  /** Its license at the mined head (license.ts): the rows are its code and text. */
  license: LicenseDetection;
  /** Its chains from discover's candidates to `test` rows (plots.ts). */
  funnel: Funnel;
}

export interface CardInput {
  /** The dataset's name: `pretty_name` and the card's heading (one repository's: "Fix-chains of owner/name"). */
  title: string;
  /** The mined repositories, each with its license and funnel: the card lists every license and sums the funnels. */
  repos: ReadonlyArray<DatasetRepo>;
  /**
   * The Hub dataset the card is published as (owner/name); null (the default) until publishing knows it:
   * the usage snippet then names REPO_ID_PLACEHOLDER, which `setCardRepoId` replaces.
   */
  repoId?: string | null;
  /** The `test` split: chains that passed every gate, v1 schema. */
  testRows: ReadonlyArray<Row>;
  /** The `verified` config: the same chains in the verified schema (a later release may add published rows now excluded). */
  verifiedRows: ReadonlyArray<Row>;
  /** The `funnel` config: every mined chain, with its exclusion (verified schema). */
  funnelRows: ReadonlyArray<Row>;
  foresightVersion: string;
  /** The plots written beside the card (plots.ts), linked by their relative paths. */
  plots?: ReadonlyArray<Pick<Plot, 'file' | 'title' | 'alt'>>;
  /** Markdown lines shown under "Changelog" (a release's); none: no such section. */
  changelog?: ReadonlyArray<string>;
  /**
   * A release's splits of `verified` and `funnel` after their first (`verified`, `funnel`), oldest first: each
   * release adds its own and leaves the earlier ones as published. `verifiedRows` and `funnelRows` are then the
   * last one's; `testRows` the frozen `test` split's.
   */
  releaseSplits?: ReadonlyArray<string>;
}

/** What the usage snippet names until the Hub repository is known; `setCardRepoId` replaces it. */
export const REPO_ID_PLACEHOLDER = '<hub-owner>/<dataset-name>';

// A Hub repository id: owner/name, letters, digits, '-', '_', '.'.
const REPO_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9][A-Za-z0-9_.-]*$/;

function checkRepoId(repoId: string): string {
  if (!REPO_ID.test(repoId)) {
    throw new ForesightError(`"${repoId}" is not a Hugging Face repository id`, { remedy: 'pass owner/name (letters, digits, "-", "_", ".")' });
  }
  return repoId;
}

/** The card with its usage snippet naming `repoId` (publishing knows it; emit does not). */
export function setCardRepoId(card: string, repoId: string): string {
  return card.split(REPO_ID_PLACEHOLDER).join(checkRepoId(repoId));
}

/** The Hub's names of the license ids we detect (https://huggingface.co/docs/hub/repositories-licenses). */
const LICENSE_NAMES: Record<HubLicenseId, string> = {
  'apache-2.0': 'Apache license 2.0',
  mit: 'MIT',
  bsd: 'BSD license family (4-clause)',
  'bsd-2-clause': 'BSD 2-clause "Simplified" license',
  'bsd-3-clause': 'BSD 3-clause "New" or "Revised" license',
  'bsd-3-clause-clear': 'BSD 3-clause Clear license',
  isc: 'ISC',
  'mpl-2.0': 'Mozilla Public License 2.0',
  'gpl-2.0': 'GNU General Public License v2.0',
  'gpl-3.0': 'GNU General Public License v3.0',
  'lgpl-2.1': 'GNU Lesser General Public License v2.1',
  'lgpl-3.0': 'GNU Lesser General Public License v3.0',
  'agpl-3.0': 'GNU Affero General Public License v3.0',
  unlicense: 'The Unlicense',
  'bsl-1.0': 'Boost Software License 1.0',
  zlib: 'zLib License',
  postgresql: 'PostgreSQL License',
  'cc0-1.0': 'Creative Commons Zero v1.0 Universal',
  'epl-2.0': 'Eclipse Public License 2.0',
  'artistic-2.0': 'Artistic license 2.0',
};

const MINING_CATEGORIES: Record<string, string> = {
  cross_reference: "PR2's message or discussion names PR1 (#N, \"Regression in ...\"), confirmed by blame when possible",
  szz: 'found by blame alone: PR1 wrote the lines PR2 fixed, and PR2 names no PR',
  advisory: 'a security advisory links the fix',
};

const NOT_JUDGED = 'not judged';

// ---- tables -------------------------------------------------------------------------------------

/** A markdown table cell: one line, pipes escaped. */
const cell = (v: unknown): string => String(v).replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');

function table(header: readonly string[], rows: ReadonlyArray<readonly unknown[]>): string[] {
  return [`| ${header.map(cell).join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`)];
}

/** Count of rows per value of `key` (null: NOT_JUDGED), most frequent first, then by name. */
function countBy(rows: ReadonlyArray<Row>, key: string, nullAs: string | null = null): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of rows) {
    const v = r[key] ?? nullAs;
    if (v === null || v === undefined) continue;
    m.set(String(v), (m.get(String(v)) ?? 0) + 1);
  }
  return new Map([...m.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

/** The known values in their order, then any other value seen, then NOT_JUDGED if a row has none. */
function levels(known: readonly string[], rows: ReadonlyArray<Row>, keys: readonly string[]): string[] {
  const seen = new Set(rows.flatMap((r) => keys.map((k) => (r[k] ?? NOT_JUDGED) as string)));
  return [...known, ...[...seen].filter((v) => !known.includes(v) && v !== NOT_JUDGED).sort(), ...(seen.has(NOT_JUDGED) ? [NOT_JUDGED] : [])];
}

/** Every chain once: the funnel's rows, then any `verified` row a release carries that its funnel lacks. */
function everyChain(input: CardInput): Row[] {
  const ids = new Set(input.funnelRows.map((r) => r.instance_id));
  return [...input.funnelRows, ...input.verifiedRows.filter((r) => !ids.has(r.instance_id))];
}

/** Every repository: those with chains, most first, then any the input names without one. */
function repositories(input: CardInput): string[] {
  const seen = [...countBy(everyChain(input), 'repo').keys()];
  return [...seen, ...input.repos.map((r) => r.repo).filter((r) => !seen.includes(r))];
}

/** Per group (a repository, a language): its chains in `funnel`, gradeable, excluded, and its rows of `verified` and `test`. */
function composition(input: CardInput, heading: string, groups: readonly string[], groupOf: (r: Row) => unknown): string[] {
  // `test` rows have no language column: a row's group is read from its chain in `funnel` (or `verified`).
  const byId = new Map([...input.funnelRows, ...input.verifiedRows].map((r) => [r.instance_id, groupOf(r)]));
  const of = (r: Row) => groupOf(r) ?? byId.get(r.instance_id);
  const n = (rows: ReadonlyArray<Row>, g: string, f: (r: Row) => boolean = () => true) => rows.filter((r) => of(r) === g && f(r)).length;
  return table(
    [heading, 'mined chains (`funnel`)', 'gradeable', 'excluded', '`verified` rows', '`test` rows'],
    groups.map((g) => [g, n(input.funnelRows, g), n(input.funnelRows, g, (r) => r.gradeable === true), n(input.funnelRows, g, (r) => r.excluded === true), n(input.verifiedRows, g), n(input.testRows, g)]),
  );
}

function perRepository(input: CardInput): string[] {
  return composition(input, 'repository', repositories(input), (r) => r.repo);
}

/** The same counts per row language (python, javascript, typescript, go: the runner's, core/env/runners/language.ts). */
function perLanguage(input: CardInput): string[] {
  return composition(input, 'language', [...countBy(everyChain(input), 'language').keys()], (r) => r.language);
}

function miningCategories(input: CardInput): string[] {
  const f = countBy(input.funnelRows, 'mining_category');
  const t = countBy(input.testRows, 'mining_category');
  return table(['mining_category', 'meaning', '`funnel`', '`test`'], [...f].map(([k, n]) => [k, MINING_CATEGORIES[k] ?? '', n, t.get(k) ?? 0]));
}

function exclusions(input: CardInput): string[] {
  const reasons = countBy(input.funnelRows, 'exclusion_reason');
  if (!reasons.size) return ['No chain is excluded.'];
  return table(['exclusion_reason', 'chains', 'meaning'], [...reasons].map(([k, n]) => [k, n, EXCLUSION_REASONS[k as ExclusionReason] ?? '']));
}

/** Why a label table may be empty of judgements: the offline rules leave every label null. */
const NOT_JUDGED_NOTE =
  'Not judged: `severity`, `failure_mode`, `difficulty` and `pr1_difficulty` come from the LLM judges; the offline rules provider (the default) judges only eligibility, attribution and fairness and leaves them null';

function severityByDetectability(rows: ReadonlyArray<Row>): string[] {
  const sev = levels(['major', 'minor', 'not_a_bug'], rows, ['severity']);
  const mode = levels(['silent', 'loud', 'none'], rows, ['failure_mode']);
  const n = (s: string, m: string) => rows.filter((r) => (r.severity ?? NOT_JUDGED) === s && (r.failure_mode ?? NOT_JUDGED) === m).length;
  return table(['severity \\ failure_mode', ...mode], sev.map((s) => [s, ...mode.map((m) => n(s, m))]));
}

function difficulty(rows: ReadonlyArray<Row>): string[] {
  const lv = levels(['easy', 'medium', 'hard'], rows, ['difficulty', 'pr1_difficulty']);
  const n = (key: string, l: string) => rows.filter((r) => (r[key] ?? NOT_JUDGED) === l).length;
  return table(['level', '`difficulty` (PR2 fix)', '`pr1_difficulty` (PR1 task)'], lv.map((l) => [l, n('difficulty', l), n('pr1_difficulty', l)]));
}

const LABELS = ['severity', 'failure_mode', 'difficulty', 'pr1_difficulty'] as const;

function labelTables(input: CardInput): string[] {
  const rows = input.testRows;
  if (!rows.length) return ['### Labels', '', 'No row is in `test` yet, so no label is shown.'];
  if (rows.every((r) => LABELS.every((k) => r[k] === null || r[k] === undefined))) {
    return ['### Labels: severity × detectability, difficulty', '', `${NOT_JUDGED_NOTE} (${rows.length} of ${rows.length} \`test\` rows)`];
  }
  return [
    '### Severity × detectability (`test`)',
    '',
    "`failure_mode` is how the missed edge case shows: `silent` (a wrong result, no error), `loud` (an error or crash), `none`. `severity` is derived from the judge's impact, reach and the failure mode (see Judgements).",
    '',
    ...severityByDetectability(rows),
    '',
    '### Difficulty (`test`)',
    '',
    ...difficulty(rows),
    ...(rows.some((r) => LABELS.some((k) => r[k] === null || r[k] === undefined)) ? ['', `Rows counted as _${NOT_JUDGED}_ have no such label: a judge gave none.`] : []),
  ];
}

/** `picked_by` of a row's mining_evidence: attribution is asked only when blame chose PR1. */
function pickedBy(r: Row): string | null {
  try {
    const v = (JSON.parse(String(r.mining_evidence)) as { picked_by?: unknown }).picked_by;
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}

/**
 * Per judgement, how many `test` rows a judge decided and how many none did (`not judged`: the offline
 * rules abstain where they cannot read the answer reliably; the row stays, its verdict null).
 */
function judgedCounts(input: CardInput): string[] {
  const inTest = new Set(input.testRows.map((r) => r.instance_id));
  const rows = input.verifiedRows.filter((r) => inTest.has(r.instance_id));
  if (!rows.length) return [];
  const known = (r: Row, key: string) => r[key] !== null && r[key] !== undefined;
  const count = (key: string, asked: ReadonlyArray<Row> = rows) => [asked.length, asked.filter((r) => known(r, key)).length, asked.filter((r) => !known(r, key)).length];
  return [
    ...table(
      ['judgement (`verified` column)', '`test` rows asked', 'judged', NOT_JUDGED],
      [
        ['eligibility (`eligibility_verdict`)', ...count('eligibility_verdict')],
        ['attribution (`attribution_verdict`; asked when blame chose PR1)', ...count('attribution_verdict', rows.filter((r) => pickedBy(r) === 'blame'))],
        ['fairness (`fairness_consensus`)', ...count('fairness_consensus')],
        ['solvability (`solvability_verdict`)', ...count('solvability_verdict')],
      ],
    ),
    '',
  ];
}

function funnelTable(f: Funnel): string[] {
  return table(
    ['step', 'chains'],
    [
      ['fix candidates (discover)', f.candidates ?? 'not recorded'],
      ['chains attributed to a PR1 (szz): `funnel`', f.chains],
      ['gradeable (validate: every state ran; F2P, P2P and anticipation sets non-empty)', f.gradeable],
      ['passed the judges (judge)', f.judged],
      ['`test` rows (emit: eval image built, gold patch grades X = 100%, Y = 0%)', f.test],
    ],
  );
}

/** One repository's license in words, with the files it was read from and the commit. */
function licenseWords(l: LicenseDetection): string {
  const at = `at commit \`${l.commit.slice(0, 12)}\``;
  const files = l.kind === 'none' ? '' : l.files.map((f) => `\`${f}\``).join(', ');
  if (l.kind === 'known') return `${l.ids.map((id) => `${LICENSE_NAMES[id]} (\`${id}\`)`).join(' and ')}, read from ${files} ${at}`;
  if (l.kind === 'unrecognised') return `not recognised: ${files} ${at} matches no license foresight recognises; read it before reusing its rows`;
  return `unknown: no LICENSE or COPYING file ${at}; ask its owners before reusing its rows`;
}

function licenseSection(input: CardInput): string[] {
  if (input.repos.length !== 1) {
    return [
      '## License',
      '',
      `The rows hold code, tests and text from ${input.repos.length} repositories, each row under the license of its own repository (its \`repo\`)${datasetLicenseMeta(input.repos).license === 'other' ? ', so the metadata says `other`' : ''}:`,
      '',
      ...table(['repository', 'license'], input.repos.map((r) => [r.repo, licenseWords(r.license)])),
    ];
  }
  const { repo, license: l } = input.repos[0]!;
  const at = `at commit \`${l.commit.slice(0, 12)}\``;
  const files = l.kind === 'none' ? '' : l.files.map((f) => `\`${f}\``).join(', ');
  const body =
    l.kind === 'known'
      ? `The rows hold code, tests and text from ${repo}, under its license: ${licenseWords(l)}.`
      : l.kind === 'unrecognised'
        ? `The rows hold code, tests and text from ${repo}. Its license file (${files} ${at}) matches no license foresight recognises, so the metadata says \`other\`: read that file before reusing the data.`
        : `The rows hold code, tests and text from ${repo}, which has no LICENSE or COPYING file ${at}, so the metadata says \`other\`: its terms are unknown; ask its owners before reusing the data.`;
  return ['## License', '', body];
}

/** The configs, what each holds and how to load it. */
function configsSection(input: CardInput, id: string): string[] {
  const republished = input.verifiedRows.filter((r) => r.excluded === true).length;
  const latest = input.releaseSplits?.at(-1);
  const split = (base: string) => latest ?? base;
  return [
    '## Configs',
    '',
    ...table(
      ['config', 'split', 'rows', 'what it holds'],
      [
        ['`default`', '`test`', input.testRows.length, `the chains that passed every gate, in the v1 schema (SWE-bench-compatible fields plus the anticipation set)${latest ? ': the first release\'s, frozen' : ''}`],
        ['`verified`', `\`${split('verified')}\``, input.verifiedRows.length, `${latest ? "this release's chains that passed every gate, the new and the earlier releases' rows validated again" : 'the same chains'} in the verified schema: it adds \`language\`, PR2's own sets, the judges' verdicts, \`gradeable\` / \`excluded\` / \`exclusion_reason\`, and drops v1-only fields`],
        ['`funnel`', `\`${split('funnel')}\``, input.funnelRows.length, `every ${latest ? 'chain this release mined' : 'mined chain'}, in the verified schema: the audit trail, each with \`gradeable\`, \`excluded\` and the \`exclusion_reason\` that kept it out`],
      ],
    ),
    '',
    ...(latest ? [`Each release adds its split to \`verified\` and \`funnel\` (${['verified', ...input.releaseSplits!].map((x) => `\`${x}\``).join(', ')}, oldest first) and leaves the earlier ones byte for byte as published: numbers measured on one stay valid.`, ''] : []),
    '```python',
    'from datasets import load_dataset',
    `test = load_dataset("${id}", split="test")`,
    `verified = load_dataset("${id}", "verified", split="${split('verified')}")`,
    `funnel = load_dataset("${id}", "funnel", split="${split('funnel')}")`,
    '```',
    '',
    "A `verified` row may carry `excluded = true`: a row an earlier release published that no longer holds, kept with its `exclusion_reason`; filter on `excluded` (or `gradeable`) to grade only the rows that hold." +
      (republished ? ` This release has ${republished} such row${republished === 1 ? '' : 's'}.` : ''),
  ];
}

/** README.md of the Hugging Face dataset: metadata so the three configs load and the Hub files it, then what the rows are. */
export function datasetCard(input: CardInput): string {
  const id = input.repoId ? checkRepoId(input.repoId) : REPO_ID_PLACEHOLDER;
  const from = input.repos.length === 1 ? input.repos[0]!.repo : `${input.repos.length} repositories (${input.repos.map((r) => r.repo).join(', ')})`;
  const lines = [
    ...frontMatter(input),
    '',
    `# ${input.title}`,
    '',
    `Each row is a PR1 → PR2 chain mined from ${from}: PR1 introduced or owned a behaviour, a later PR2 fixed an edge case PR1 missed.`,
    "An agent is given PR1's task (`problem_statement`, derived from PR1 only); PR2's tests (`ANTICIPATION_FAIL_TO_PASS`) are the held-out signal.",
    '',
    ...configsSection(input, id),
    '',
    '## From candidates to test rows',
    '',
    ...funnelTable(sumFunnels(input.repos.map((r) => r.funnel))),
    '',
    ...(input.plots ?? []).flatMap((p) => [`![${cell(p.alt).replace(/[[\]]/g, '')}](${p.file})`, '']),
    '## Composition',
    '',
    '### Per repository',
    '',
    ...perRepository(input),
    '',
    '### Per language',
    '',
    ...perLanguage(input),
    '',
    '### Mining category',
    '',
    ...miningCategories(input),
    '',
    '### Exclusions in `funnel`',
    '',
    ...exclusions(input),
    '',
    ...labelTables(input),
    '',
    '## Evaluating an agent',
    '',
    "Each gradeable row's `docker_image` is its eval image (`image_tier` 3): the row's environment with the repository at `repo_path` (/testbed), checked out at `base_commit`, whose git store holds no object after it (no later commit, branch or tag), and the runner's files at `/foresight` (`run_helper`). Nothing is resolved at eval time: no bind mount, no network. `env_image_pr1` / `env_image_pr2` name the images validation ran in.",
    '',
    "`db_backend` is the database the row's sets were computed on: `sqlite` (the tests' own, no service: the default), or `postgresql` / `postgis` / `mysql` (MariaDB) when the recipe names that backend and the chain's tests were skipped on the ones before it (a fix that only shows there). Such a row is graded with that database running beside the eval image, as validation ran it: a sidecar container (Debian's own packages) reached as host `db` on an internal network with no outside access, the connection in `FORESIGHT_DB*` and libpq's `PG*` variables, Django's settings module in `FORESIGHT_DJANGO_SETTINGS` (`foresight eval` does this).",
    '',
    "The held-out tests are not in the image: `grading_bundle` (JSON) carries them. `x.files` are the test and support files PR1 touched, as at PR1's head; `y.files` are PR2's, as at PR2's head. After the agent's patch is applied (test files it touched reset), score X: lay `x.files`, run the runner on `x.run`, X = share of `FAIL_TO_PASS` passing (`PASS_TO_PASS` regressions reported beside it). Score Y: lay `x.files` then `y.files`, run `y.run`, Y = share of `ANTICIPATION_FAIL_TO_PASS` passing. The anticipation gap is X − Y. A file name that is not UTF-8 is written as git writes it in a diff, C-quoted (`\"tests/caf\\351.txt\"`): lay that file under the bytes it names.",
    '',
    '## Judgements',
    '',
    "`judged_by` in `quality` (test) and `llm_usage` (verified) says who judged a row: `llm` (an OpenAI-compatible endpoint) or `rules` (the offline default, which decides only what a rule can read reliably: it excludes reverts, changes that outside their tests touch only documentation or version strings, and explicit feature requests with no defect named in PR2's text or discussion, and otherwise abstains; a chain it abstains on stays in `test` with a null verdict, counted below as _not judged_; every other judgement column stays null and `eval_ready` is false, never guessed).",
    '',
    ...judgedCounts(input),
    "- `problem_statement`: PR1's own words (title, body, the issue or ticket it closes, written before it merged); a statement coded `B2` (under-specified) is enriched from PR1's own material and re-judged (solvability, clarity, two fairness judges on distinct models, a deterministic leak detector) until it passes or a bound is reached: `pr1_code_original`, `pr1_code`, `pr1_spec_repaired`, and every round in `spec_repairs` (verified). PR2 never enters that repair.",
    '- `pr1_code` / `pr2_spec_code`: A solvable; B1 tests check details the statement cannot imply; B2 under-specified; B3 tests check a different task; B4 needs outside knowledge; B5 the gold patch bundles unrelated changes the tests require.',
    "- `clarity_score` 0 (clear) – 3 (unusable); `pr1_task_type` bug / feature / mixed; `eval_ready` = PR2 is a bug fix ∧ `pr1_code` = A ∧ clarity ≤ 1.",
    "- `pr2_problem_statement`: PR2's task, synthesised from PR2 and its held-out tests and repaired until the tests are derivable from it (`pr2_spec_repaired`).",
    '- Labels of the edge case: `failure_mode` silent / loud / none, `trigger_path` default / opt-in, `mechanism`, `difficulty` (PR2 fix) and `pr1_difficulty` (PR1 task) easy / medium / hard, `security`; `severity` is derived, not asked: not_a_bug without impact or failure, else points = impact (low 1, medium 2, high 3) + reach (narrow −1, moderate 0, wide +1) + 1 if silent; major when points ≥ 3 and impact ≥ medium, else minor. The judge\'s impact and reach are in `labels_verdict` (verified).',
    '',
    ...licenseSection(input),
    '',
    ...(input.changelog?.length ? ['## Changelog', '', ...input.changelog, ''] : []),
    `Generated by foresight ${input.foresightVersion}.`,
    '',
  ];
  return lines.join('\n');
}
