/**
 * The probe of PR1's base (core/attribution predates.ts) through real Docker, on a history the test
 * generates: PR2's source change applied three-way at PR1's base, the anticipation tests run with it and
 * without it.
 *  - pad() is older than #1 and cuts long strings; #1 adds rows (its test module now imports `row`), #2
 *    guards pad(): at #1's base #2's whole test module cannot import, #2's test changes on the commit's own
 *    module run, and pass only with #2's fix: `predates`, transplanted;
 *  - initials() is older than #3 and breaks on repeated spaces, which normalise() hid until #3 kept names as
 *    written; #4 fixes initials(): at #3's base its test passes with and without the fix: `passes_without`;
 *  - slug() came with #5, fixed by #6: the fix has nothing to apply to at #5's base: `not_applied`, no run
 *    read as evidence.
 * One container (the bookworm base image has pytest; PYTHONPATH points at the work tree).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probePredates, sourceFilesOf, type PredatesOptions } from '../../../core/attribution/index.ts';
import { connectDocker, DEFAULT_BASE_ALIAS, ensureImage, getRunner, isDockerReachable, openChainEnv, type ChainEnv } from '../../../core/env/index.ts';
import { PredatesProbeSchema } from '../../../core/foundation/model/attribution.ts';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const docker = connectDocker();
const dockerUp = await isDockerReachable(docker);
const skip = !dockerUp && !process.env['CI'];
if (skip) console.warn('[predates-docker.test] SKIPPED: Docker is not reachable and CI is unset');

const pytest = getRunner('pytest');
const day = (n: number): string => `2024-03-${String(n).padStart(2, '0')}T12:00:00Z`;

const PAD_V1 = "def pad(s, width):\n    out = s\n    # Grow the string to width.\n    while len(out) < width:\n        out += ' '\n    return out[:width]\n";
const PAD_V2 = (guard: boolean) =>
  "def pad(s, width, fill=' '):\n    out = s\n    # Grow the string to width.\n" +
  (guard ? '    if len(s) >= width:\n        return s\n' : '') +
  "    while len(out) < width:\n        out += fill\n    result = out[:width]\n    return result\n\n\ndef row(cells, width):\n    return '|'.join(pad(c, width) for c in cells)\n";
const TEST_PAD = "\n\ndef test_pad_short():\n    assert pad('ab', 4) == 'ab  '\n";
const TEST_ROW = "\n\ndef test_row():\n    assert row(['a', 'b'], 2) == 'a |b '\n";
const TEST_LONG = "\n\ndef test_pad_long():\n    assert pad('abcdef', 3) == 'abcdef'\n";
const NAMES = (opts: { strip: boolean; split: boolean }) =>
  `def initials(name):\n    return ''.join(part[0].upper() for part in name.split(${opts.split ? '' : "' '"}))\n\n\n` +
  `def normalise(name):\n    return ${opts.strip ? 'name.strip()' : "' '.join(name.split())"}\n\n\n` +
  'def badge(name):\n    return initials(normalise(name))\n';
const TEST_BADGE = "from names import badge\n\n\ndef test_badge():\n    assert badge('ada lovelace') == 'AL'\n";
const TEST_BADGE_SPACES = "\n\ndef test_badge_spaces():\n    assert badge('ada  lovelace') == 'AL'\n";
const SLUG = (digits: boolean) => `\n\ndef slug(s):\n    return '-'.join(w for w in s.lower().split() if w.${digits ? 'isalnum' : 'isalpha'}())\n`;
const TEST_SLUG = (digits: boolean) =>
  "from text import slug\n\n\ndef test_slug():\n    assert slug('Hello World') == 'hello-world'\n" +
  (digits ? "\n\ndef test_slug_digits():\n    assert slug('Route 66') == 'route-66'\n" : '');

describe.skipIf(skip)("probePredates: PR2's fix at PR1's base (Docker, a generated history)", () => {
  let repo: GitRepo;
  let env: ChainEnv;
  const c: string[] = [];
  beforeAll(async () => {
    await ensureImage(DEFAULT_BASE_ALIAS, { docker });
    repo = await gitRepo();
    const commits: Array<Record<string, string>> = [
      { 'text.py': PAD_V1, 'tests/test_text.py': `from text import pad${TEST_PAD}`, 'names.py': NAMES({ strip: false, split: false }), 'tests/test_names.py': TEST_BADGE },
      { 'text.py': PAD_V2(false), 'tests/test_text.py': `from text import pad, row${TEST_PAD}${TEST_ROW}` },
      { 'text.py': PAD_V2(true), 'tests/test_text.py': `from text import pad, row${TEST_PAD}${TEST_ROW}${TEST_LONG}` },
      { 'names.py': NAMES({ strip: true, split: false }) },
      { 'names.py': NAMES({ strip: true, split: true }), 'tests/test_names.py': TEST_BADGE + TEST_BADGE_SPACES },
      { 'text.py': PAD_V2(true) + SLUG(false), 'tests/test_slug.py': TEST_SLUG(false) },
      { 'text.py': PAD_V2(true) + SLUG(true), 'tests/test_slug.py': TEST_SLUG(true) },
    ];
    for (const [i, files] of commits.entries()) c.push(await repo.commit({ files, message: i ? `Change (#${i})` : 'Initial commit', date: day(i + 1) }));
    env = await openChainEnv({ gitDir: join(repo.dir, '.git'), docker, image: DEFAULT_BASE_ALIAS, runner: pytest, env: { PYTHONPATH: '/tmp/testbed' } });
  }, 300_000);
  afterAll(async () => {
    await env?.close();
    await repo?.remove();
  });

  /** PR1 is #n (its base c[n-1]), PR2 is #n+1; the tests are PR2's new ones in `file`. */
  const probe = async (n: number, file: string, tests: string[]) => {
    const opts: PredatesOptions = {
      commit: c[n - 1]!,
      fix: { baseSha: c[n]!, headSha: c[n + 1]! },
      sourceFiles: await sourceFilesOf(repo.dir, c[n]!, c[n + 1]!),
      tests: tests.map((t) => `${file}::${t}`),
      testFiles: [file],
      overlayFiles: [file],
      env: async () => ({ kind: 'ready', env, runner: pytest }),
    };
    return PredatesProbeSchema.parse(await probePredates(opts));
  };

  it("reads PR2's source files apart from its tests", async () => {
    expect(await sourceFilesOf(repo.dir, c[1]!, c[2]!)).toEqual(['text.py']);
    expect(await sourceFilesOf(repo.dir, c[5]!, c[6]!)).toEqual(['text.py']);
  });

  it("predates: #2's fix makes its test pass at #1's base, where it fails without (#2's test changes on the base's own module)", async () => {
    const p = await probe(1, 'tests/test_text.py', ['test_pad_long']);
    expect(p).toMatchObject({
      commit: c[0],
      applied: { base: c[1], head: c[2], files: ['text.py'] },
      transplanted: true,
      tests: [{ id: 'tests/test_text.py::test_pad_long', with_fix: 'pass', without_fix: 'fail' }],
      verdict: 'predates',
    });
    // The whole module with the fix (cannot import `row`), transplanted with it, transplanted without it.
    expect(p.runs).toBe(3);
  });

  it('passes_without: the test passes at #3\'s base with and without #4\'s fix, the defect came with #3', async () => {
    const p = await probe(3, 'tests/test_names.py', ['test_badge_spaces']);
    expect(p).toMatchObject({
      transplanted: false,
      tests: [{ id: 'tests/test_names.py::test_badge_spaces', with_fix: 'pass', without_fix: 'pass' }],
      verdict: 'passes_without',
      runs: 2,
    });
  });

  it("not_applied: #6's fix of slug() does not apply at #5's base, which has no slug(); no test outcome is recorded", async () => {
    const p = await probe(5, 'tests/test_slug.py', ['test_slug_digits']);
    expect(p).toMatchObject({ verdict: 'not_applied', tests: [], runs: 1 });
    expect(p.detail).toMatch(/does not apply at /);
  });
});
