/**
 * Build the demo `minilib` repository: a small pure-Python package whose git history holds
 * PRs (squash commits and real merges), direct commits, fixes of earlier PRs and a revert.
 * The result is byte-for-byte deterministic: the same commit shas on every run and machine.
 *
 *   npx tsx pipeline/demo/make-demo-repo.ts DIR    # prints the head sha
 *
 * Fix-chains planted in the history (PR1 -> PR2):
 *   #1 slugify        -> #9  whitespace runs gave empty segments
 *   #3 parse_duration -> #8  uppercase units were ignored
 *   #6 clamp          -> #10 a direct commit made clamp truncate floats (#6 itself was fine)
 *   #4 format_bytes   -> #11 follow-up feature (binary units), not a bug fix
 *   #5 word_count     -> #12 revert
 */
import { realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeDeadOwned } from '../../core/foundation/scratch.ts';
import * as c from './content.ts';
import { DemoRepo, isolatedEnv, type Person } from './demo-git.ts';

const ALICE: Person = { name: 'Alice Maintainer', email: 'alice@example.com' };
const BOB: Person = { name: 'Bob Okafor', email: 'bob@example.com' };
const CAROL: Person = { name: 'Carol Diaz', email: 'carol@example.com' };
const DAVE: Person = { name: 'Dave Kim', email: 'dave@example.com' };
const ERIN: Person = { name: 'Erin Walsh', email: 'erin@example.com' };
const FRANK: Person = { name: 'Frank Moreau', email: 'frank@example.com' };
const GRACE: Person = { name: 'Grace Liu', email: 'grace@example.com' };
/**
 * Create the demo repository in `dir` (which must not exist or be empty). It is built in a sibling
 * folder `<dir>.partial-<pid>-<random>` and renamed into place once complete, so `dir` never holds a
 * half-made history: a run killed midway leaves only its partial folder, which the next call removes.
 */
export async function makeDemoRepo(dir: string): Promise<{ head: string }> {
  dir = resolve(dir);
  if ((await readdir(dir).catch(() => [])).length > 0) throw new Error(`makeDemoRepo: ${dir} is not empty`);
  await mkdir(dirname(dir), { recursive: true });
  await removeDeadPartials(dir);

  const work = await mkdtemp(`${dir}${PARTIAL}${process.pid}-`);
  const home = await mkdtemp(join(tmpdir(), 'demo-repo-home-'));
  try {
    const repo = new DemoRepo(work, isolatedEnv(home));
    // An empty template dir: no hooks or other files copied into .git.
    await repo.git(['init', '--quiet', '-b', 'main', `--template=${home}`]);
    await buildHistory(repo);
    const head = await repo.git(['rev-parse', 'HEAD']);
    // rename(2) replaces an empty directory and fails on a non-empty one: a complete repository or nothing.
    await rename(work, dir);
    return { head };
  } catch (err) {
    await rm(work, { recursive: true, force: true });
    throw err;
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

const PARTIAL = '.partial-';

/** Partial folders next to `dir` left by generations whose process is gone (killed midway); a live owner's stays. */
function removeDeadPartials(dir: string): Promise<void> {
  return removeDeadOwned(dirname(dir), `${basename(dir)}${PARTIAL}`);
}

async function buildHistory(repo: DemoRepo): Promise<void> {
  const textPy = 'minilib/text.py';
  const numbersPy = 'minilib/numbers.py';
  const timeparsePy = 'minilib/timeparse.py';
  const testText = 'tests/test_text.py';
  const testNumbers = 'tests/test_numbers.py';
  const testTimeparse = 'tests/test_timeparse.py';
  const testPackage = 'tests/test_package.py';

  // 0. Initial commit
  await repo.commit({
    message: 'Initial commit',
    author: ALICE,
    files: {
      '.gitignore': c.gitignore,
      'pyproject.toml': c.pyproject('0.1.0'),
      'README.md': c.readme,
      'minilib/__init__.py': c.init('0.1.0'),
      [textPy]: c.pyFile(c.textHeader, c.normalizeSpace),
      [numbersPy]: c.pyFile(c.numbersHeader, c.isEven),
      [testText]: c.pyFile(c.testTextHeader, c.testNormalizeSpace),
      [testNumbers]: c.pyFile(c.testNumbersHeader, c.testIsEven),
      [testPackage]: c.pyFile(c.testPackageHeader, c.testVersion),
    },
  });

  // 1. PR #1: slugify (its whitespace bug is fixed by #9)
  await repo.squashPr({
    author: DAVE,
    subject: 'Add slugify helper (#1)',
    body: 'slugify() lowercases a title and joins its words with hyphens, for use in URLs.',
    files: {
      [textPy]: c.pyFile(c.textHeader, c.normalizeSpace, c.slugifyV1),
      [testText]: c.pyFile(c.testTextHeader, c.testNormalizeSpace, c.testSlugifyBasic),
    },
  });

  // 2. PR #2: README usage, merged
  await repo.mergePr({
    number: 2,
    branch: 'bob/readme',
    title: 'Document usage',
    merger: ALICE,
    commits: [{ message: 'Document usage', author: BOB, files: { 'README.md': c.readmeWithUsage } }],
  });

  // 3. PR #3: parse_duration in two commits, merged (its uppercase bug is fixed by #8)
  await repo.mergePr({
    number: 3,
    branch: 'carol/parse-duration',
    title: 'Add parse_duration',
    merger: ALICE,
    commits: [
      {
        message: 'Add parse_duration',
        author: CAROL,
        files: {
          [timeparsePy]: c.timeparseV1,
          [testTimeparse]: c.pyFile(c.testTimeparseHeader, c.testParseBasic),
        },
      },
      {
        message: 'Export parse_duration',
        author: CAROL,
        files: {
          'minilib/__init__.py': c.initWithExports('0.1.0'),
          [testPackage]: c.pyFile(c.testPackageHeader, c.testVersion, c.testExportsParseDuration),
        },
      },
    ],
  });

  // 4. PR #4: format_bytes (extended by #11)
  await repo.squashPr({
    author: DAVE,
    subject: 'Add format_bytes helper (#4)',
    body: 'format_bytes() renders a byte count with SI units (B, KB, MB, GB, TB).',
    files: {
      [numbersPy]: c.pyFile(c.numbersHeader, c.isEven, c.formatBytesV1),
      [testNumbers]: c.pyFile(c.testNumbersHeader, c.testIsEven, c.testFormatBytes),
    },
  });

  // 5. PR #5: word_count (reverted by #12)
  const wordCountSha = await repo.squashPr({
    author: GRACE,
    subject: 'Add word_count helper (#5)',
    body: 'word_count() counts the whitespace-separated words in a string.',
    files: {
      [textPy]: c.pyFile(c.textHeader, c.normalizeSpace, c.slugifyV1, c.wordCount),
      // Inserted above the slugify test, so #12 reverts cleanly after #9 appends below it.
      [testText]: c.pyFile(c.testTextHeader, c.testNormalizeSpace, c.testWordCount, c.testSlugifyBasic),
    },
  });

  // 6. PR #6: clamp (correct as merged)
  await repo.squashPr({
    author: GRACE,
    subject: 'Add clamp helper (#6)',
    body: 'clamp() limits a value to a closed range.',
    files: {
      [numbersPy]: c.pyFile(c.numbersHeader, c.isEven, c.formatBytesV1, c.clampV1),
      [testNumbers]: c.pyFile(c.testNumbersHeader, c.testIsEven, c.testFormatBytes, c.testClamp),
    },
  });

  // 7. Direct commit that breaks clamp for floats (fixed by #10)
  await repo.commit({
    message: 'clamp: return an int so callers can index with it',
    author: ALICE,
    files: { [numbersPy]: c.pyFile(c.numbersHeader, c.isEven, c.formatBytesV1, c.clampInt) },
  });

  // 8. PR #7: contributing guide, merged
  await repo.mergePr({
    number: 7,
    branch: 'erin/contributing',
    title: 'Add contributing guide',
    merger: ALICE,
    commits: [{ message: 'Add contributing guide', author: ERIN, files: { 'CONTRIBUTING.md': c.contributing } }],
  });

  // 9. PR #8: fixes #3 without saying so
  await repo.squashPr({
    author: BOB,
    subject: 'Fix parse_duration ignoring uppercase units (#8)',
    body: 'parse_duration("2H") returned 0 instead of 7200.',
    files: {
      [timeparsePy]: c.timeparseV2,
      [testTimeparse]: c.pyFile(c.testTimeparseHeader, c.testParseBasic, c.testParseUppercaseUnits),
    },
  });

  // 10. PR #9: fixes #1
  const testTextAfter9 = [c.testTextHeader, c.testNormalizeSpace, c.testWordCount, c.testSlugifyBasic, c.testSlugifyCollapsesWhitespace];
  await repo.squashPr({
    author: GRACE,
    subject: 'Fix slugify producing empty segments (#9)',
    body: 'Regression in #1: "a  b" became "a--b".',
    files: {
      [textPy]: c.pyFile(c.textHeader, c.normalizeSpace, c.slugifyV2, c.wordCount),
      [testText]: c.pyFile(...testTextAfter9),
    },
  });

  // 11. PR #10: fixes the direct commit, names #6
  const testNumbersAfter10 = [c.testNumbersHeader, c.testIsEven, c.testFormatBytes, c.testClamp, c.testClampKeepsFloats];
  await repo.squashPr({
    author: DAVE,
    subject: 'Fix clamp truncating floats (#10)',
    body: 'clamp() was added in #6; it must keep float values.',
    files: {
      [numbersPy]: c.pyFile(c.numbersHeader, c.isEven, c.formatBytesV1, c.clampV1),
      [testNumbers]: c.pyFile(...testNumbersAfter10),
    },
  });

  // 12. PR #11: follow-up feature to #4
  await repo.squashPr({
    author: CAROL,
    subject: 'Add binary units option to format_bytes (#11)',
    body: 'Follow-up to #4: support IEC units (KiB, MiB) with binary=True.',
    files: {
      [numbersPy]: c.pyFile(c.numbersHeader, c.isEven, c.formatBytesV2, c.clampV1),
      [testNumbers]: c.pyFile(...testNumbersAfter10, c.testFormatBytesBinary),
    },
  });

  // 13. PR #12: exact inverse of #5
  await repo.squashPr({
    author: ALICE,
    subject: 'Revert "Add word_count helper (#5)" (#12)',
    body: `This reverts commit ${wordCountSha}.\n\nword_count duplicated str.split.`,
    files: {
      [textPy]: c.pyFile(c.textHeader, c.normalizeSpace, c.slugifyV2),
      [testText]: c.pyFile(...testTextAfter9.filter((b) => b !== c.testWordCount)),
    },
  });

  // 14. PR #13: version bump, merged
  await repo.mergePr({
    number: 13,
    branch: 'frank/bump-version',
    title: 'Bump version to 0.2.0',
    merger: ALICE,
    commits: [
      {
        message: 'Bump version to 0.2.0',
        author: FRANK,
        files: { 'pyproject.toml': c.pyproject('0.2.0'), 'minilib/__init__.py': c.initWithExports('0.2.0') },
      },
    ],
  });
}

function invokedAsScript(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (invokedAsScript()) {
  const args = process.argv.slice(2);
  if (args.length !== 1 || args[0] === '-h' || args[0] === '--help') {
    console.error('usage: npx tsx pipeline/demo/make-demo-repo.ts DIR   (DIR must not exist or be empty)');
    process.exit(2);
  }
  makeDemoRepo(args[0]!).then(
    ({ head }) => console.log(head),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exitCode = 1;
    },
  );
}
