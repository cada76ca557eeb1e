/**
 * Django test descriptions and status words: `test_x (module.Class)` ids, the status tokens streamed
 * after them, and the runtests.py labels of test files. See parse-django.ts for the log format.
 */
import type { TestStatus } from '../types.ts';

const RANK: Record<TestStatus, number> = { pass: 0, skip: 1, error: 2, fail: 3 };
export const worse = (a: TestStatus | undefined, b: TestStatus): TestStatus => (a === undefined || RANK[b] > RANK[a] ? b : a);

const FAILED_TEST = 'unittest.loader._FailedTest';
const HOLDERS = new Set(['setUpClass', 'tearDownClass', 'setUpModule', 'tearDownModule']);

/** `name (dotted)` at the start of a text; name and dotted are unicode-safe (no spaces or parentheses). */
const DESC = /^([^\s()]+) \(([^\s()]+)\)/u;
/** A status word at the very end of a line (anything the test printed may precede it). */
const STATUS_END = /(ok|FAIL|ERROR|expected failure|unexpected success|skipped (?:'.*'|".*"))$/u;

export type Token = 'ok' | 'FAIL' | 'ERROR' | 'skip' | 'xfail' | 'xpass';

export function token(line: string): Token | null {
  const m = STATUS_END.exec(line);
  if (!m) return null;
  const w = m[1]!;
  if (w.startsWith('skipped')) return 'skip';
  if (w === 'expected failure') return 'xfail';
  if (w === 'unexpected success') return 'xpass';
  return w as Token;
}

export const TOKEN_STATUS: Record<Token, TestStatus> = { ok: 'pass', FAIL: 'fail', ERROR: 'error', skip: 'skip', xfail: 'skip', xpass: 'fail' };

/** The status word that counts among those streamed for one test (see the header comment of parse-django.ts). */
export function lastToken(tokens: readonly Token[], useFailError: boolean): Token | null {
  for (let i = tokens.length - 1; i >= 0; i--) {
    const t = tokens[i]!;
    if (useFailError || (t !== 'FAIL' && t !== 'ERROR')) return t;
  }
  return null;
}

export interface Desc {
  /** `test_x (module.Class)`; for a fixture holder `setUpClass (module.Class)`. */
  id: string;
  name: string;
  /** Dotted class path (module path for module fixtures), without the ≥ 3.11 `.test_x` suffix. */
  cls: string;
  /** Characters of the text the description used. */
  length: number;
}

/** Parse `test_x (module.Class[.test_x])` at the start of `text`. */
export function parseDesc(text: string): Desc | null {
  const m = DESC.exec(text);
  if (!m) return null;
  const name = m[1]!;
  let cls = m[2]!;
  if (cls.endsWith(`.${name}`)) cls = cls.slice(0, -(name.length + 1));
  return { id: `${name} (${cls})`, name, cls, length: m[0].length };
}

export const isFailedTest = (d: Desc): boolean => d.cls === FAILED_TEST;
export const isHolder = (d: Desc): boolean => HOLDERS.has(d.name) && !d.cls.startsWith('unittest.loader.');
/** A real test: a dotted class path (module.Class), not a load failure or a fixture holder. */
export const isTest = (d: Desc): boolean => !isFailedTest(d) && !isHolder(d) && d.cls.includes('.');

const IDENT_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$/;

/**
 * The runtests.py label of a test file, as run_state.sh derives it: `tests/foo/tests.py` → `foo.tests`,
 * `tests/foo/tests/test_x.py` → `foo.tests.test_x`; null for files that are not modules of a test app.
 */
export function djangoLabel(file: string): string | null {
  const f = file.replace(/\\/g, '/').replace(/^\.\//, '');
  if (!/^tests\/[^/]+\/.+\.py$/.test(f)) return null;
  const label = f.slice('tests/'.length, -'.py'.length).replace(/\//g, '.');
  return IDENT_PATH.test(label) ? label : null;
}

/** The requested test file a test id (`test_x (module.Class)`) belongs to, or null. */
export function djangoTestFile(id: string, testFiles: readonly string[]): string | null {
  const d = parseDesc(id);
  if (!d) return null;
  let best: { file: string; len: number } | null = null;
  for (const file of testFiles) {
    const label = djangoLabel(file);
    if (label && d.cls.startsWith(`${label}.`) && (!best || label.length > best.len)) best = { file, len: label.length };
  }
  return best?.file ?? null;
}
