/**
 * runners/transplant_defs.py on generated histories (host python3, as checkout.sh runs it in a
 * container): where a PR's test patch conflicts at an older commit, the definitions it changed are laid
 * over that commit's own module, and the result is Python that runs.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { gitRepo, type GitRepo } from '../../helpers/git-repo.ts';

const SCRIPT = fileURLToPath(new URL('../../../core/env/runners/transplant_defs.py', import.meta.url));
const exec = promisify(execFile);

/** Run the script in `repo` (checked out at `at`); its exit code and stderr. */
async function transplant(repo: GitRepo, at: string, base: string, head: string, files: string[], env: Record<string, string> = {}) {
  await repo.git(['checkout', '-qf', at]);
  try {
    const r = await exec('python3', [SCRIPT, base, head, ...files], { cwd: repo.dir, env: { ...process.env, ...env } });
    return { code: 0, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

/** Import the module at `file` in `repo` and return what `expr` evaluates to (printed by python3). */
async function evaluate(repo: GitRepo, file: string, expr: string): Promise<string> {
  const code = `import importlib.util as u\ns = u.spec_from_file_location("m", ${JSON.stringify(join(repo.dir, file))})\nm = u.module_from_spec(s)\ns.loader.exec_module(m)\nprint(${expr})`;
  return (await exec('python3', ['-c', code], { cwd: repo.dir })).stdout.trim();
}

const OLD = [
  'import unittest',
  '',
  '',
  'class TextTests(unittest.TestCase):',
  '    def test_upper(self):',
  "        self.assertEqual('a'.upper(), 'A')",
  '',
  '    def test_strip(self):',
  "        self.assertEqual(' a '.strip(), 'a')",
  '',
].join('\n');

// An earlier change rewrote the module (reformatted, a method renamed, a class added): the PR's
// patch has no context to apply to at OLD.
const BASE = [
  'import unittest',
  'from os import path',
  '',
  'LIMIT = 3',
  '',
  '',
  'class TextTests(unittest.TestCase):',
  '    """Text helpers."""',
  '',
  '    def test_upper(self):',
  '        self.assertEqual("a".upper(), "A")',
  '',
  '    def test_strip_spaces(self):',
  '        self.assertEqual(" a ".strip(), "a")',
  '',
  '',
  'class PathTests(unittest.TestCase):',
  '    def test_join(self):',
  '        self.assertEqual(path.join("a", "b"), "a/b")',
  '',
].join('\n');

const HEAD = BASE.replace('import unittest\n', 'import unittest\nfrom os.path import basename\nfrom no_such_module import helper\n')
  .replace('LIMIT = 3', 'LIMIT = 4')
  .replace('        self.assertEqual("a".upper(), "A")\n', '        self.assertEqual("a".upper(), "A")\n        self.assertEqual("ß".upper(), "SS")\n')
  .replace(
    '\n\nclass PathTests',
    '\n    @unittest.skipIf(False, "never")\n    def test_title(self):\n        self.assertEqual("a b".title(), "A B")\n\n\nclass PathTests',
  )
  .replace('"a/b")\n', '"a/b")\n\n    def test_basename(self):\n        self.assertEqual(basename("a/b"), "b")\n');

describe('transplant_defs.py', () => {
  let repo: GitRepo | undefined;
  afterEach(async () => {
    await repo?.remove();
    repo = undefined;
  });

  it("lays the PR's changed methods, classes, constants and imports over an older commit's own module", async () => {
    repo = await gitRepo();
    const old = await repo.commit({ files: { 'tests/test_text.py': OLD }, message: 'old', date: '2024-01-01T00:00:00Z' });
    const base = await repo.commit({ files: { 'tests/test_text.py': BASE }, message: 'rewrite', date: '2024-01-02T00:00:00Z' });
    const head = await repo.commit({ files: { 'tests/test_text.py': HEAD }, message: 'fix', date: '2024-01-03T00:00:00Z' });
    // The precondition: git's own three-way apply conflicts at `old`.
    await repo.git(['checkout', '-qf', old]);
    const patch = await repo.git(['diff', base, head, '--', 'tests/test_text.py']);
    await expect(exec('sh', ['-c', `printf '%s' "$P" | git apply --3way`], { cwd: repo.dir, env: { ...process.env, P: patch } })).rejects.toThrow();

    const r = await transplant(repo, old, base, head, ['tests/test_text.py']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('replaced TextTests.test_upper');
    expect(r.stderr).toContain('added TextTests.test_title');
    expect(r.stderr).toContain('added PathTests');
    const merged = await readFile(join(repo.dir, 'tests/test_text.py'), 'utf8');
    // The commit's own method the PR did not touch stays as it was; the PR's version of test_upper replaces
    // the commit's; PathTests (which the commit lacks) comes whole; the missing module is no import error.
    expect(merged).toContain("        self.assertEqual(' a '.strip(), 'a')\n");
    expect(merged).not.toContain('test_strip_spaces');
    expect(merged).toContain('"ß".upper(), "SS"');
    expect(merged.match(/def test_upper/g)).toHaveLength(1);
    const methods = "sorted(n for n in vars(m.TextTests) if n.startswith('test_'))";
    expect(await evaluate(repo, 'tests/test_text.py', methods)).toBe("['test_strip', 'test_title', 'test_upper']");
    expect(await evaluate(repo, 'tests/test_text.py', "(m.LIMIT, m.basename('a/b'), 'helper' in vars(m), sorted(n for n in vars(m.PathTests) if n.startswith('test_')))")).toBe(
      "(4, 'b', False, ['test_basename', 'test_join'])",
    );
  });

  it('a file the commit lacks comes whole; a clean patch applies as it is; a deleted file is left alone', async () => {
    repo = await gitRepo();
    const old = await repo.commit({ files: { 'tests/a.py': 'x = 1\n', 'tests/gone.py': 'y = 1\n' }, message: 'old', date: '2024-01-01T00:00:00Z' });
    const base = await repo.commit({ files: { 'tests/b.py': 'z = 1\n' }, message: 'base', date: '2024-01-02T00:00:00Z' });
    const head = await repo.commit({ files: { 'tests/a.py': 'x = 1\n\n\ndef f():\n    return 2\n', 'tests/b.py': 'z = 2\n' }, delete: ['tests/gone.py'], message: 'fix', date: '2024-01-03T00:00:00Z' });
    const r = await transplant(repo, old, base, head, ['tests/a.py'], { FORESIGHT_OVERLAY_FILES: 'tests/b.py\ntests/gone.py\n' });
    expect(r.code, r.stderr).toBe(0);
    expect(await readFile(join(repo.dir, 'tests/a.py'), 'utf8')).toBe('x = 1\n\n\ndef f():\n    return 2\n');
    expect(await readFile(join(repo.dir, 'tests/b.py'), 'utf8')).toBe('z = 2\n');
    expect(await readFile(join(repo.dir, 'tests/gone.py'), 'utf8')).toBe('y = 1\n');
    expect(r.stderr).toMatch(/tests\/a\.py: patched/);
    expect(r.stderr).toMatch(/tests\/b\.py: the PR's whole file/);
  });

  it('fails with one line naming the file where the definitions cannot be laid over', async () => {
    repo = await gitRepo();
    const old = await repo.commit({ files: { 'tests/data.txt': 'a\nb\nc\n', 'tests/t.py': 'def f(:\n' }, message: 'old', date: '2024-01-01T00:00:00Z' });
    const base = await repo.commit({ files: { 'tests/data.txt': 'A\nB\nC\n', 'tests/t.py': 'def f():\n    return 1\n' }, message: 'base', date: '2024-01-02T00:00:00Z' });
    const head = await repo.commit({ files: { 'tests/data.txt': 'A\nB2\nC\n', 'tests/t.py': 'def f():\n    return 2\n' }, message: 'fix', date: '2024-01-03T00:00:00Z' });
    const text = await transplant(repo, old, base, head, ['tests/data.txt']);
    expect(text.code).toBe(1);
    expect(text.stderr.trim()).toBe('transplant: tests/data.txt: the PR\'s changes do not apply here and it is no Python module');
    // The failed three-way apply left no conflict behind.
    expect(await readFile(join(repo.dir, 'tests/data.txt'), 'utf8')).toBe('a\nb\nc\n');
    const py = await transplant(repo, old, base, head, ['tests/t.py']);
    expect(py.code).toBe(1);
    expect(py.stderr).toMatch(/^transplant: tests\/t\.py does not parse here \(.*line 1\)\n$/);
  });
});
