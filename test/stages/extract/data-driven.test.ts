/**
 * A data-driven test suite, mined from discover through emit on a generated history with real Docker and the
 * offline judges: tests/test_cases.py is one parametrised test per file under tests/data/cases/ (an expression
 * and its value), the way sqlfluff's dialect fixtures are read.
 *  - #1 adds hexadecimal numbers and only the data file hex.txt; #2 fixes an uppercase "0X" prefix #1 missed
 *    and adds only hex_upper.txt. Neither touches a test module: extract selects tests/test_cases.py (it names
 *    the folder "data" / "cases"), not tests/test_misc.py, and the `test` row's FAIL_TO_PASS and
 *    ANTICIPATION_FAIL_TO_PASS are the new parametrised cases; mining_evidence says which module read what.
 *    The suite holds 28 cases before #1: PASS_TO_PASS is the fixed sample of them the runner keeps beside the
 *    cases naming the PR's data (foresight_keep.py), and the one case that would hang (`slow`, outside the
 *    sample) runs in no state and in no gold self-check: the run timeout is 60 s, the row emerges.
 *  - #3 adds a data file no module reads; #4 fixes #3's code with a test module: the chain stays pr1_no_tests,
 *    its detail naming the unread file, and no module of the suite is run for it.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable, KEEP_SAMPLE } from '../../../core/env/index.ts';
import { readJsonl, stageDir } from '../../../core/foundation/artifacts.ts';
import { loadConfig } from '../../../core/foundation/config.ts';
import { silentLogger } from '../../../core/foundation/log.ts';
import { ExtractedChainSchema, type ExtractedChain } from '../../../core/foundation/model/extracted.ts';
import { runPipeline } from '../../../pipeline/pipeline.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[data-driven.test] SKIPPED: Docker is not reachable and CI is unset');

const day = (n: number): string => `2024-07-${String(n).padStart(2, '0')}T12:00:00Z`;
const CASES_TEST = `import time
from pathlib import Path

import pytest

from calc import evaluate

CASES = Path(__file__).parent / "data" / "cases"


@pytest.mark.parametrize("name", sorted(p.stem for p in CASES.glob("*.txt")))
def test_case(name):
    if name == "slow":
        time.sleep(3600)
    expr, expected = (CASES / (name + ".txt")).read_text().split("\\n")[:2]
    assert evaluate(expr) == int(expected)
`;
const MISC_TEST = 'from calc import evaluate\n\n\ndef test_spaces():\n    assert evaluate("1+ 2") == 3\n';
const CALC = (hex: 'none' | 'lower' | 'any') => `def number(tok):
${hex === 'none' ? '' : `    if ${hex === 'lower' ? 'tok.strip().startswith("0x")' : 'tok.strip()[:2].lower() == "0x"'}:\n        return int(tok.strip()[2:], 16)\n`}    return int(tok)


def evaluate(expr):
    return sum(number(t) for t in expr.split("+"))
`;
const VERSION = (v: string) => `def version():\n    return ${v}\n`;

async function history(): Promise<GitRepo> {
  const repo = await gitRepo();
  // The root conftest.py puts the work tree on sys.path (pytest's rootdir insertion).
  await repo.commit({
    files: {
      'README.md': 'calc\n', 'conftest.py': '', 'calc.py': CALC('none'), 'tests/test_cases.py': CASES_TEST, 'tests/test_misc.py': MISC_TEST,
      'tests/data/cases/add.txt': '1+2\n3\n', 'tests/data/cases/single.txt': '7\n7\n', 'tests/data/cases/slow.txt': '1\n1\n', ...FILLERS,
    },
    message: 'Initial commit',
    date: day(1),
  });
  await repo.commit({ files: { 'calc.py': CALC('lower'), 'tests/data/cases/hex.txt': '0x10+1\n17\n' }, message: 'Add hexadecimal numbers (#1)', date: day(2) });
  await repo.commit({ files: { 'calc.py': CALC('any'), 'tests/data/cases/hex_upper.txt': '0X1F+1\n32\n' }, message: 'Fix evaluate crashing on an uppercase hexadecimal prefix (#2)', date: day(3) });
  await repo.commit({ files: { 'version.py': VERSION('"1.0"'), 'tests/data/notes/table.csv': 'a,b\n' }, message: 'Add a version (#3)', date: day(4) });
  await repo.commit({
    files: { 'version.py': VERSION('"1.0.0"'), 'tests/test_version.py': 'from version import version\n\n\ndef test_version():\n    assert version().count(".") == 2\n' },
    message: 'Fix version missing its patch number (#4)',
    date: day(5),
  });
  return repo;
}

const FILLERS = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`tests/data/cases/f${String(i).padStart(2, '0')}.txt`, `${i}+1\n${i + 1}\n`] as const));
const caseId = (name: string): string => `tests/test_cases.py::test_case[${name}]`;
const OLD_CASES = ['add', 'single', 'slow', ...Object.keys(FILLERS).map((f) => f.slice('tests/data/cases/'.length, -'.txt'.length))].map(caseId);
const sha1 = (s: string): string => createHash('sha1').update(s).digest('hex');
/** The runner's regression sample: the KEEP_SAMPLE node ids with the smallest sha1. */
const sampled = (ids: readonly string[]): string[] => [...ids].sort((a, b) => (sha1(a) < sha1(b) ? -1 : 1)).slice(0, KEEP_SAMPLE).sort();

type Row = Record<string, string | number | boolean | null>;

describe.skipIf(skip)('data-driven tests: a PR whose tests are data files read by a parametrised module, mined to a `test` row (Docker)', () => {
  let repo: GitRepo;
  let dataRoot: string;
  let test: Row[];
  let funnel: Row[];
  let extracted: ExtractedChain[];

  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    repo = await history();
    dataRoot = await mkdtemp(join(tmpdir(), 'foresight-data-driven-'));
    // The whole pipeline, offline judges; one run per state and no bisection: not what this is about.
    const config = loadConfig({ FORESIGHT_OFFLINE: '1', FORESIGHT_IMAGE: DEFAULT_BASE_ALIAS, FORESIGHT_RUNS: '1', FORESIGHT_ATTRIBUTION: 'off', FORESIGHT_TIMEOUT_SEC: '60' });
    await runPipeline({ dataRoot, repo: { name: 'gen/calc', clone: repo.dir }, config, log: silentLogger });
    const read = async (split: string): Promise<Row[]> =>
      (await readFile(join(dataRoot, 'gen__calc', 'emit', 'hf', 'jsonl', `${split}.jsonl`), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);
    test = await read('test');
    funnel = await read('funnel');
    extracted = await readJsonl(join(stageDir(dataRoot, 'gen/calc', 'extract'), 'items.jsonl'), ExtractedChainSchema);
  }, 600_000);
  afterAll(async () => {
    await repo?.remove();
    if (dataRoot) await rm(dataRoot, { recursive: true, force: true });
  });

  const list = (v: unknown): unknown[] => JSON.parse(String(v)) as unknown[];

  it('extract runs the module that reads the data folder for both PRs, not the module beside it; the data files are overlaid', () => {
    const c = extracted.find((x) => x.instance_id === 'calc__1-2');
    expect(c, extracted.map((x) => `${x.instance_id} ${x.excluded?.reason ?? ''}`).join(', ')).toBeDefined();
    expect(c!.excluded).toBeNull();
    expect([c!.pr1_test_files, c!.anticipation_test_files]).toEqual([['tests/test_cases.py'], ['tests/test_cases.py']]);
    expect([c!.pr1_overlay_files, c!.anticipation_overlay_files]).toEqual([['tests/data/cases/hex.txt'], ['tests/data/cases/hex_upper.txt']]);
    expect(c!.data_consumers.pr2).toEqual({
      consumers: [{ module: 'tests/test_cases.py', files: ['tests/data/cases/hex_upper.txt'], reason: 'names its folder "data/cases"' }],
      unreferenced: [],
      capped: null,
    });
  });

  it("the `test` row's FAIL_TO_PASS and ANTICIPATION_FAIL_TO_PASS are the new parametrised cases; PASS_TO_PASS is the sample of the old cases, without the one that hangs", () => {
    const row = test.find((r) => r.instance_id === 'calc__1-2');
    expect(row, JSON.stringify(funnel.map((r) => [r.instance_id, r.exclusion_reason, r.exclusion_detail]))).toBeDefined();
    expect(list(row!.FAIL_TO_PASS)).toEqual(['tests/test_cases.py::test_case[hex]']);
    expect(list(row!.ANTICIPATION_FAIL_TO_PASS)).toEqual(['tests/test_cases.py::test_case[hex_upper]']);
    // The hanging case is outside the sample (else this test would say nothing of it).
    expect(sampled(OLD_CASES)).not.toContain(caseId('slow'));
    expect(list(row!.PASS_TO_PASS)).toEqual(sampled(OLD_CASES));
    // Grading runs what validation ran: the gold self-check passed within the 60 s timeout, with these rules.
    const bundle = JSON.parse(String(row!.grading_bundle)) as { x: { keep: unknown }; y: { keep: unknown } };
    expect([bundle.x.keep, bundle.y.keep]).toEqual([
      [{ module: 'tests/test_cases.py', data: ['tests/data/cases/hex.txt'] }],
      [{ module: 'tests/test_cases.py', data: ['tests/data/cases/hex_upper.txt'] }],
    ]);
    expect(list(row!.pr1_test_files)).toEqual(['tests/test_cases.py']);
    // Which module read which data file, and why, for each PR.
    const evidence = JSON.parse(String(row!.mining_evidence)) as { data_consumers: ExtractedChain['data_consumers'] };
    expect(evidence.data_consumers.pr1.consumers).toEqual([{ module: 'tests/test_cases.py', files: ['tests/data/cases/hex.txt'], reason: 'names its folder "data/cases"' }]);
    expect(evidence.data_consumers.pr2.consumers.map((c) => c.files)).toEqual([['tests/data/cases/hex_upper.txt']]);
  });

  it('a data file no module reads selects nothing: the chain is pr1_no_tests, its detail naming the file', () => {
    const row = funnel.find((r) => r.instance_id === 'calc__3-4');
    expect(row, funnel.map((r) => r.instance_id).join(', ')).toBeDefined();
    expect(row!.exclusion_reason).toBe('pr1_no_tests');
    expect(row!.exclusion_detail).toBe('extract: PR #3 touched no test file (no test module reads its data files tests/data/notes/table.csv)');
    expect(list(row!.pr1_test_files)).toEqual([]);
  });
});
