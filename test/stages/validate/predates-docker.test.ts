/**
 * Defects older than PR1, through real Docker on a history the test generates (squash-merged PRs
 * "Title (#N)"), mined by discover, szz, extract and validate as `make mine` does:
 *  - pad() came with the first commit (no PR) and cuts strings longer than the width. #2 adds rows on it
 *    and rewrites most of pad() (a fill character), #4 guards pad() against long strings: blame names #2,
 *    but #4's test fails at every older commit (the bisection finds no pass), and #4's source change applied
 *    at #2's base makes it pass there: the defect predates #2, the chain is excluded `defect_predates_pr1`
 *    with the probe in its attribution record;
 *  - initials() came with #5 and fails on repeated spaces, fixed by #6: before #5 #6's test fails another
 *    way (ImportError) and from #5 on as at #6's base, so the bisection confirms #5 and the chain stays in
 *    (no probe needed).
 * One container for the whole run (one explicit image: the bookworm base has pytest; a root conftest.py puts
 * the work tree on sys.path).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, isDockerReachable } from '../../../core/env/index.ts';
import { EXCLUSION_REASONS } from '../../../core/foundation/model/change.ts';
import type { ValidatedChain } from '../../../core/foundation/model/validated.ts';
import { mineValidated } from '../../helpers/mine-validated.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[predates-docker.test] SKIPPED: Docker is not reachable and CI is unset');

const day = (n: number): string => `2024-03-${String(n).padStart(2, '0')}T12:00:00Z`;

// The first commit's pad(): cuts a string longer than the width (the defect).
const PAD_V1 = "def pad(s, width):\n    out = s\n    # Grow the string to width.\n    while len(out) < width:\n        out += ' '\n    return out[:width]\n";
// #2 rewrites most of it (a fill character) and adds rows; the cut stays.
const ROWS = "\n\ndef row(cells, width):\n    return '|'.join(pad(c, width) for c in cells)\n";
const PAD_V2 = (guard: boolean) =>
  "def pad(s, width, fill=' '):\n    out = s\n    # Grow the string to width.\n" +
  (guard ? '    if len(s) >= width:\n        return s\n' : '') +
  '    while len(out) < width:\n        out += fill\n    result = out[:width]\n    return result\n' +
  ROWS;
const TEST_PAD = "from text import pad\n\n\ndef test_pad_short():\n    assert pad('ab', 4) == 'ab  '\n";
const TEST_ROW = "\n\ndef test_row():\n    from text import row\n    assert row(['a', 'b'], 2) == 'a |b '\n";
const TEST_LONG = "\n\ndef test_pad_long():\n    assert pad('abcdef', 3) == 'abcdef'\n";
const GREET = "def greet(name):\n    return 'Hello, ' + name\n";
const INITIALS = (fixed: boolean) => `${GREET}\n\ndef initials(name):\n    return ''.join(part[0].upper() for part in name.split(${fixed ? '' : "' '"}))\n`;
const TEST_GREET = "from names import greet\n\n\ndef test_greet():\n    assert greet('Ada') == 'Hello, Ada'\n";
const TEST_INITIALS = (spaces: boolean) =>
  TEST_GREET +
  "\n\ndef test_initials():\n    from names import initials\n    assert initials('ada lovelace') == 'AL'\n" +
  (spaces ? "\n\ndef test_initials_spaces():\n    from names import initials\n    assert initials('ada  lovelace') == 'AL'\n" : '');

async function history(): Promise<GitRepo> {
  const repo = await gitRepo();
  const prs: Array<{ title: string; files: Record<string, string> }> = [
    { title: 'Add a changelog', files: { 'CHANGELOG.md': '- pad\n' } },
    { title: 'Add table rows', files: { 'text.py': PAD_V2(false), 'tests/test_text.py': TEST_PAD + TEST_ROW } },
    { title: 'Tidy the readme', files: { 'README.md': 'text helpers\n' } },
    { title: 'Fix pad truncating long strings', files: { 'text.py': PAD_V2(true), 'tests/test_text.py': TEST_PAD + TEST_ROW + TEST_LONG } },
    { title: 'Add an initials helper', files: { 'names.py': INITIALS(false), 'tests/test_names.py': TEST_INITIALS(false) } },
    { title: 'Fix initials failing on repeated spaces', files: { 'names.py': INITIALS(true), 'tests/test_names.py': TEST_INITIALS(true) } },
  ];
  // A direct commit (no PR) brings pad(), greet() and their tests; the root conftest.py puts the work tree on sys.path.
  const first = { 'README.md': 'demo\n', 'conftest.py': '', 'text.py': PAD_V1, 'tests/test_text.py': TEST_PAD, 'names.py': GREET, 'tests/test_names.py': TEST_GREET };
  await repo.commit({ files: first, message: 'Initial commit', date: day(1) });
  for (const [i, pr] of prs.entries()) await repo.commit({ files: pr.files, message: `${pr.title} (#${i + 1})`, date: day(i + 2) });
  return repo;
}

describe.skipIf(skip)('validate: a defect older than PR1 (Docker, a generated history)', () => {
  let repo: GitRepo;
  let dataRoot: string;
  let chains: ValidatedChain[];
  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    repo = await history();
    dataRoot = await mkdtemp(join(tmpdir(), 'foresight-predates-'));
    chains = await mineValidated(repo.dir, dataRoot, 'gen/predates');
  }, 600_000);
  afterAll(async () => {
    await repo?.remove();
    if (dataRoot) await rm(dataRoot, { recursive: true, force: true });
  });

  it("excludes #2 -> #4 as defect_predates_pr1: #4's fix applied at #2's base makes its test pass there, where it fails without", () => {
    const c = chains.find((x) => x.pr2.id === '4')!;
    // Blame names #2 (it wrote most of pad()); the sets alone make a gradeable chain.
    expect(c.pr1.id).toBe('2');
    expect(c.szz.candidates.map((k) => k.change)).toEqual(['2']);
    expect(c.FAIL_TO_PASS).toEqual(['tests/test_text.py::test_row']);
    expect(c.PASS_TO_PASS).toEqual(['tests/test_text.py::test_pad_short']);
    expect(c.ANTICIPATION_FAIL_TO_PASS).toEqual(['tests/test_text.py::test_pad_long']);
    // The test fails at every older commit: no pass, no import boundary, blame's #2 stands.
    expect(c.attribution).toMatchObject({ decision: 'attributed', method: 'blame', change: '2', commit: null, execution: 'no_good_end', moved_from: null });
    expect(c.attribution!.steps.filter((s) => !s.reused).every((s) => s.outcome === 'bad')).toBe(true);
    // The probe: #4's source change (text.py alone) at #2's base, with and without.
    expect(c.attribution!.predates).toMatchObject({
      commit: c.pr1_base,
      applied: { base: c.pr2_base, head: c.pr2_head, files: ['text.py'] },
      transplanted: false,
      tests: [{ id: 'tests/test_text.py::test_pad_long', with_fix: 'pass', without_fix: 'fail' }],
      verdict: 'predates',
      runs: 2,
    });
    expect(c.excluded).toMatchObject({ reason: 'defect_predates_pr1', stage: 'validate' });
    expect(c.excluded!.detail).toMatch(/predates PR1/);
    expect(c.gradeable).toBe(false);
    expect(EXCLUSION_REASONS.defect_predates_pr1).toMatch(/older than PR1/);
  });

  it('keeps #5 -> #6, whose defect came with #5: the bisection confirms #5 and no probe runs', () => {
    const c = chains.find((x) => x.pr2.id === '6')!;
    expect(c.pr1.id).toBe('5');
    expect(c.PASS_TO_PASS).toEqual(['tests/test_names.py::test_greet']);
    expect(c.attribution).toMatchObject({ decision: 'attributed', method: 'execution+blame', change: '5', execution: 'introduced', predates: null });
    expect(c.ANTICIPATION_FAIL_TO_PASS).toEqual(['tests/test_names.py::test_initials_spaces']);
    expect(c.excluded).toBeNull();
    expect(c.gradeable).toBe(true);
  });
});
