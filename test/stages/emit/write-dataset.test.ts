/**
 * writeDataset on the rows of two repositories in two languages (a campaign's merged dataset): built by emit's
 * own row builders from judged chains, written, then read back by the real `datasets` library through the card
 * and by the Hub's metadata parser.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVAL_REPO_PATH, runners } from '../../../core/env/index.ts';
import { ForesightError } from '../../../core/foundation/errors.ts';
import type { ExclusionReason } from '../../../core/foundation/model/change.ts';
import type { JudgedChain } from '../../../core/foundation/model/judged.ts';
import type { StageName } from '../../../core/foundation/stage.ts';
import { testRow, verifiedRow, type RowContext } from '../../../stages/emit/build-rows.ts';
import { funnelOf, writeDataset, type DatasetInput, type LicenseDetection } from '../../../stages/emit/index.ts';
import { bars, hubMetadata } from '../../helpers/card.ts';
import { validatedChain } from '../../helpers/chain-fixture.ts';
import { pythonWithDatasets, runPython } from '../../helpers/python.ts';

const RC: RowContext = { image: '', repoPath: EVAL_REPO_PATH, runners: new Map([...runners.values()].map((r) => [r.name, { testCmd: r.testCmd, script: r.script }])) };

/** A judged chain as the rules judge leaves it: no LLM verdict, not eval_ready. */
function judged(id: string, repo: string, over: { runner?: string; files?: string[]; gradeable?: boolean; excluded?: { reason: ExclusionReason; stage: StageName } } = {}): JudgedChain {
  const files = over.files ?? ['tests/test_timeparse.py'];
  const base = validatedChain({
    repo, instance_id: id, runner: over.runner ?? 'pytest', pr1_test_files: files, anticipation_test_files: files, gradeable: over.gradeable ?? true,
    excluded: over.excluded ? { reason: over.excluded.reason, detail: `${over.excluded.reason} in this fixture`, stage: over.excluded.stage } : null,
  });
  return {
    ...base,
    verdicts: { judged_by: 'rules', eligibility: null, attribution: null, fairness: [], solvability_original: null, solvability: null, pr2_solvability: null, labels: null, leaks: [], repairs: { pr1: [], pr2: [] }, failures: [] },
    judgement: {
      pr1_code: null, pr1_code_original: null, pr1_spec_repaired: false, clarity_score: null, pr1_task_type: null, pr2_problem_statement: null, pr2_spec_code: null, pr2_spec_repaired: false,
      severity: null, failure_mode: null, trigger_path: null, mechanism: null, difficulty: null, pr1_difficulty: null, security: null, eval_ready: false, quality_flags: ['not_judged'],
    },
    usage: { prompt_tokens: 0, completion_tokens: 0, calls: 0, cached: 0, usd: null },
  };
}

const eval_ = (id: string) => ({ instance_id: id, image: `foresight-eval:${id.replace(/\W/g, '').padEnd(24, '0').slice(0, 24)}`, bundle: JSON.stringify({ version: 1 }), problem: null });

// acme/widgets (python, MIT): one test row, one chain the judge excluded, one validate found ungradeable.
// acme/webkit (typescript through vitest, Apache-2.0): one test row, one whose gold check failed at emit.
const TS = ['test/parse.test.ts'];
const CHAINS: Record<string, JudgedChain[]> = {
  'acme/widgets': [
    judged('widgets__1-2', 'acme/widgets'),
    judged('widgets__3-4', 'acme/widgets', { excluded: { reason: 'ineligible', stage: 'judge' } }),
    judged('widgets__5-6', 'acme/widgets', { gradeable: false, excluded: { reason: 'pr1_no_tests', stage: 'extract' } }),
  ],
  'acme/webkit': [
    judged('webkit__1-3', 'acme/webkit', { runner: 'vitest', files: TS }),
    judged('webkit__2-5', 'acme/webkit', { runner: 'vitest', files: TS, excluded: { reason: 'gold_check_failed', stage: 'emit' } }),
  ],
};
const LICENSES: Record<string, LicenseDetection> = {
  'acme/widgets': { kind: 'known', ids: ['mit'], files: ['LICENSE'], commit: '1'.repeat(40) },
  'acme/webkit': { kind: 'known', ids: ['apache-2.0'], files: ['LICENSE'], commit: '2'.repeat(40) },
};
const CANDIDATES: Record<string, number> = { 'acme/widgets': 10, 'acme/webkit': 4 };

/** The merged input: each repository's rows built as emit builds them, concatenated. */
function input(): DatasetInput {
  const all = Object.values(CHAINS).flat();
  const passed = all.filter((c) => c.gradeable && !c.excluded);
  return {
    title: 'Fix-chains of two acme repositories',
    repoId: null,
    foresightVersion: 'test',
    repos: Object.keys(CHAINS).map((repo) => ({ repo, license: LICENSES[repo]!, funnel: funnelOf(CHAINS[repo]!, CANDIDATES[repo]!) })),
    test: passed.map((c) => testRow(c, RC, eval_(c.instance_id))),
    verified: passed.map((c) => verifiedRow(c, RC, eval_(c.instance_id))),
    funnel: all.map((c) => verifiedRow(c, RC, c.gradeable ? eval_(c.instance_id) : null)),
    changelog: ['- first release of the merged dataset'],
  };
}

describe('writeDataset: a dataset of two repositories and two languages', () => {
  let dir: string;
  let card: string;

  beforeAll(async () => {
    await pythonWithDatasets();
    dir = await mkdtemp(join(tmpdir(), 'foresight-write-dataset-'));
    await writeDataset(join(dir, 'hf'), input());
    card = await readFile(join(dir, 'hf', 'README.md'), 'utf8');
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('writes the three configs as parquet, their JSONL copies, the plots and the card', async () => {
    const hf = join(dir, 'hf');
    expect((await readdir(hf)).sort()).toEqual(['README.md', 'data', 'funnel', 'jsonl', 'plots', 'verified']);
    expect(await readdir(join(hf, 'funnel'))).toEqual(['funnel-00000-of-00001.parquet']);
    expect((await readdir(join(hf, 'jsonl'))).sort()).toEqual(['funnel.jsonl', 'test.jsonl', 'verified.jsonl']);
    for (const p of ['funnel', 'gap-days', 'test-set-sizes']) expect(existsSync(join(hf, 'plots', `${p}.svg`)), p).toBe(true);
  });

  it('the real datasets library loads every config through the card: funnel every chain with its exclusion, verified exactly the test rows', async () => {
    const out = await runPython(
      [
        'import json, sys, datasets',
        'names = datasets.get_dataset_config_names(sys.argv[1])',
        'test = datasets.load_dataset(sys.argv[1], split="test")',
        'ver = datasets.load_dataset(sys.argv[1], "verified", split="verified")',
        'fun = datasets.load_dataset(sys.argv[1], "funnel", split="funnel")',
        'print(json.dumps({"configs": sorted(names), "test": sorted(test["instance_id"]), "verified": sorted(ver["instance_id"]),',
        '  "funnel": {r["instance_id"]: [r["repo"], r["language"], r["excluded"], r["exclusion_reason"]] for r in fun},',
        '  "same_schema": ver.features == fun.features}))',
      ].join('\n'),
      [join(dir, 'hf')],
    );
    expect(JSON.parse(out)).toEqual({
      configs: ['default', 'funnel', 'verified'],
      test: ['webkit__1-3', 'widgets__1-2'],
      verified: ['webkit__1-3', 'widgets__1-2'],
      funnel: {
        'widgets__1-2': ['acme/widgets', 'python', false, null],
        'widgets__3-4': ['acme/widgets', 'python', true, 'ineligible'],
        'widgets__5-6': ['acme/widgets', 'python', true, 'pr1_no_tests'],
        'webkit__1-3': ['acme/webkit', 'typescript', false, null],
        'webkit__2-5': ['acme/webkit', 'typescript', true, 'gold_check_failed'],
      },
      same_schema: true,
    });
  }, 120_000);

  it('the card counts both repositories, both licenses and both languages, and sums the funnels', async () => {
    const meta = await hubMetadata(card);
    expect(meta).toMatchObject({ pretty_name: 'Fix-chains of two acme repositories', license: 'other', license_name: 'multiple-licenses' });
    expect(meta.tags).toEqual(expect.arrayContaining(['python', 'typescript']));
    expect(card).toContain('mined from 2 repositories (acme/widgets, acme/webkit)');
    // funnel chains, gradeable, excluded, verified rows, test rows
    expect(card).toContain('| acme/widgets | 3 | 2 | 2 | 1 | 1 |');
    expect(card).toContain('| acme/webkit | 2 | 2 | 1 | 1 | 1 |');
    expect(card).toContain('| python | 3 | 2 | 2 | 1 | 1 |');
    expect(card).toContain('| typescript | 2 | 2 | 1 | 1 | 1 |');
    expect(card).toContain('| acme/widgets | MIT (`mit`), read from `LICENSE` at commit `111111111111` |');
    expect(card).toContain('| acme/webkit | Apache license 2.0 (`apache-2.0`), read from `LICENSE` at commit `222222222222` |');
    expect(card).toContain('| ineligible | 1 |');
    expect(card).toContain('| gold_check_failed | 1 |');
    expect(card).toContain('| fix candidates (discover) | 14 |');
    expect(bars(await readFile(join(dir, 'hf', 'plots', 'funnel.svg'), 'utf8'))).toEqual([
      'chains: 14; step: fix candidates (discover)',
      'chains: 5; step: chains attributed (szz)',
      'chains: 4; step: gradeable (validate)',
      'chains: 3; step: passed the judges (judge)',
      'chains: 2; step: test rows (emit)',
    ]);
    expect(card).toContain('## Changelog\n\n- first release of the merged dataset\n');
  });

  it('refuses rows that do not make one dataset, writing nothing', async () => {
    const bad = join(dir, 'bad');
    const ok = input();
    const attempts: Array<[string, DatasetInput, RegExp]> = [
      ['a test row without its verified row', { ...ok, verified: ok.verified.slice(1) }, /in `test` but not a `verified` row that holds/],
      ['a verified row that holds but is not in test', { ...ok, test: ok.test.slice(1) }, /in `verified`, not excluded, but not in `test`/],
      ['a row of a repository repos does not name', { ...ok, repos: ok.repos.slice(0, 1) }, /of acme\/webkit, which repos does not name/],
      ['an instance id twice', { ...ok, funnel: [...ok.funnel, ok.funnel[0]!] }, /twice in `funnel`/],
    ];
    for (const [what, attempt, message] of attempts) {
      const err = await writeDataset(bad, attempt).then(() => null, (e: unknown) => e);
      expect(err, what).toBeInstanceOf(ForesightError);
      expect((err as Error).message, what).toMatch(message);
    }
    expect(existsSync(bad)).toBe(false);
  });
});
