/**
 * Scratch files git needs as paths (blame's ignore-revs list, a revert's graft) live in directories this
 * process owns: gone when it exits, and a killed process's are swept by the next one.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ForesightError } from '../../core/foundation/errors.ts';
import { processScratch } from '../../core/foundation/scratch.ts';
import { gitRepo, type GitRepo } from '../helpers/git-repo.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..', '..');
const cleanup: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  await Promise.all(cleanup.map((f) => f()));
});

const day = (n: number): string => `2024-01-${String(n).padStart(2, '0')}T12:00:00Z`;

/** Run `body` (TypeScript, with `attributeFix`, `MetaChanges`, `processScratch` and `readdir` in scope) in a child node with its own TMPDIR. */
async function child(tmp: string, body: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'foresight-scratch-test-'));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  const script = join(dir, 'child.mts'); // .mts: an ES module (top-level await) outside the package
  await writeFile(
    script,
    [
      `import { readdir } from 'node:fs/promises';`,
      `import { attributeFix } from ${JSON.stringify(join(ROOT, 'stages/szz/attribute.ts'))};`,
      `import { MetaChanges } from ${JSON.stringify(join(ROOT, 'stages/szz/meta.ts'))};`,
      `import { processScratch } from ${JSON.stringify(join(ROOT, 'core/foundation/scratch.ts'))};`,
      body,
    ].join('\n'),
  );
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, env: { ...process.env, TMPDIR: tmp } });
  return stdout;
}

async function history(): Promise<{ repo: GitRepo; greetFix: string; greetInducer: string; scaleFix: string; scaleInducer: string }> {
  const repo = await gitRepo();
  cleanup.push(() => repo.remove());
  const greetInducer = await repo.commit({ files: { 'pkg/greet.py': "def greet(name):\n    return 'Hello, ' + name + '!!'\n" }, message: 'Add greet()', date: day(1) });
  const style = await repo.commit({ files: { 'pkg/greet.py': 'def greet(name):\n    return "Hello, " + name + "!!"\n' }, message: 'Use double quotes', date: day(2) });
  await repo.commit({ files: { '.git-blame-ignore-revs': `${style}\n` }, message: 'Ignore the quote-style commit in blame', date: day(3) });
  const head = 'def scale(x):\n    y = x * 2\n';
  const scaleInducer = await repo.commit({ files: { 'pkg/scale.py': `${head}    return y + 1\n` }, message: 'Add scale()', date: day(4) });
  const d = await repo.commit({ files: { 'pkg/scale.py': `${head}    return y + 2\n` }, message: 'Add two in scale()', date: day(5) });
  await repo.commit({ files: { 'pkg/scale.py': `${head}    return y + 1\n` }, message: `Revert "Add two in scale()"\n\nThis reverts commit ${d}.\n`, date: day(6) });
  const greetFix = await repo.commit({ files: { 'pkg/greet.py': 'def greet(name):\n    return "Hello, " + name + "!"\n' }, message: 'Fix greet()', date: day(7) });
  const scaleFix = await repo.commit({ files: { 'pkg/scale.py': `${head}    return y\n` }, message: 'Fix scale()', date: day(8) });
  return { repo, greetFix, greetInducer, scaleFix, scaleInducer };
}

/** foresight's entries of a temp dir (tsx keeps its cache there too). */
const ours = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((d) => d.startsWith('foresight-')).sort();

describe('process scratch directories', () => {
  it('SZZ with an ignore-revs file and a revert graft leaves nothing in the temp dir once its process exits', async () => {
    const h = await history();
    const tmp = await mkdtemp(join(tmpdir(), 'foresight-scratch-tmp-'));
    cleanup.push(() => rm(tmp, { recursive: true, force: true }));
    const out = await child(
      tmp,
      `const meta = new MetaChanges(${JSON.stringify(h.repo.dir)});
const fix = async (sha: string) => (await attributeFix(${JSON.stringify(h.repo.dir)}, { baseSha: sha + '^1', mergeSha: sha }, { variant: 'foresight', meta })).commits[0]?.sha;
const found = [await fix(${JSON.stringify(h.greetFix)}), await fix(${JSON.stringify(h.scaleFix)})];
const made = (await readdir(process.env.TMPDIR!)).filter((d) => d.startsWith('foresight-')).sort();
const files = await Promise.all(made.map(async (d) => (await readdir(process.env.TMPDIR! + '/' + d)).length));
console.log(JSON.stringify({ found, made, files }));`,
    );
    const seen = JSON.parse(out) as { found: string[]; made: string[]; files: number[] };
    // The attribution used both files (the quote-style commit looked through, the revert's graft followed) ...
    expect(seen.found).toEqual([h.greetInducer, h.scaleInducer]);
    expect(seen.made.map((d) => d.replace(/-\d+-\w+$/, ''))).toEqual(['foresight-grafts', 'foresight-ignore-revs']);
    expect(seen.files.every((n) => n > 0)).toBe(true);
    // ... and they went with the process.
    expect(await ours(tmp)).toEqual([]);
  });

  it("a killed process's scratch is removed by the next process that asks for the same name; a live owner's stays", async () => {
    const tmp = await mkdtemp(join(tmpdir(), 'foresight-scratch-tmp-'));
    cleanup.push(() => rm(tmp, { recursive: true, force: true }));
    // A pid no process holds: the kernel's pid_max is at most 2^22.
    const dead = join(tmp, 'foresight-grafts-4194305-abcdef');
    const live = join(tmp, `foresight-grafts-${process.pid}-abcdef`);
    const other = join(tmp, 'foresight-ignore-revs-4194305-abcdef');
    for (const d of [dead, live, other]) await mkdir(d);
    const out = await child(tmp, `const d = await processScratch('grafts');\nconsole.log(JSON.stringify({ d, before: (await readdir(process.env.TMPDIR!)).filter((d) => d.startsWith('foresight-')).sort() }));`);
    const seen = JSON.parse(out) as { d: string; before: string[] };
    // The dead owner's was swept before the child made its own.
    expect(seen.before).toEqual([seen.d.split('/').pop(), `foresight-grafts-${process.pid}-abcdef`, 'foresight-ignore-revs-4194305-abcdef'].sort());
    // After the child: its own is gone, the dead one is gone, the live one and the other name's are left.
    expect(await ours(tmp)).toEqual([`foresight-grafts-${process.pid}-abcdef`, 'foresight-ignore-revs-4194305-abcdef']);
  });

  it('a temp dir that cannot be written to is one line naming it and the remedy', async () => {
    const before = process.env.TMPDIR;
    const missing = join(tmpdir(), 'foresight-scratch-missing', 'nowhere');
    process.env.TMPDIR = missing;
    try {
      const err = await processScratch('unwritable').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ForesightError);
      expect((err as ForesightError).oneLine()).toMatch(new RegExp(`^cannot make a scratch directory in ${missing}: ENOENT.* — set TMPDIR to a writable directory`));
    } finally {
      process.env.TMPDIR = before;
    }
  });
});
