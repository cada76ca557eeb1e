/**
 * pytest JUnit XML (junit_family=xunit1) → pytest node ids and statuses.
 *
 * pytest derives `classname`/`name` from the node id (`_pytest/junitxml.py: mangle_test_address`):
 * the file part of the id with `/` → `.` and `.py` dropped, then the class chain, all joined by `.`;
 * `name` is the function name with its parameter id kept whole. So the node id is recovered as
 * `<file>::<Class>::<Nested>::<name>` by stripping the file's dotted path from `classname`.
 * The `file` attribute is NOT reliable for that: it is where the function is defined
 * (an inherited test method reports its base class's file), so `classname` is matched first.
 *
 * Statuses: no child → pass; `<failure>` → fail; `<error>` → error; `<skipped>` → skip
 * (xfail is reported as skipped and stays skip; a non-strict xpass is a plain pass).
 * A test that fails and then errors in teardown is reported as two testcases with one id:
 * they merge with precedence fail > error > skip > pass.
 * A module that cannot be collected is a testcase with classname="" and
 * `<error message="collection failure">`: it yields a collection error, not a test.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { ForesightError } from '../../../foundation/errors.ts';
import type { ParsedRun, TestStatus } from '../types.ts';

const RANK: Record<TestStatus, number> = { pass: 0, skip: 1, error: 2, fail: 3 };

const ARRAY_TAGS = new Set(['testsuites', 'testsuite', 'testcase', 'failure', 'error', 'skipped']);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  parseTagValue: false,
  parseAttributeValue: false,
  isArray: (tagName) => ARRAY_TAGS.has(tagName),
});

interface XmlNode {
  [key: string]: unknown;
}

interface TestCase {
  classname: string;
  name: string;
  file: string | null;
  status: TestStatus;
  collectionFailure: boolean;
  /** The exception type a failure or error ended with, from pytest's report (`path:line: AssertionError`). */
  kind: string | null;
}

/** Parse pytest's JUnit XML. Throws ForesightError when the XML is malformed (e.g. truncated). */
export function parseJunit(junitXml: string, testFiles: readonly string[]): ParsedRun {
  const valid = XMLValidator.validate(junitXml);
  if (valid !== true) {
    throw new ForesightError(
      `pytest JUnit XML is malformed (line ${valid.err.line}: ${valid.err.msg})`,
      { remedy: 'the run was probably killed while writing it: rerun the state, or raise runTimeoutSec' },
    );
  }
  const doc = parser.parse(junitXml) as XmlNode;
  const cases: TestCase[] = [];
  collectTestCases(doc, cases);

  const tests: Record<string, TestStatus> = {};
  const failureKinds: Record<string, string> = {};
  const collectionErrors = new Set<string>();
  for (const tc of cases) {
    if (tc.classname === '') {
      // A module-level report (collection failure, or a module-level skip): never a test.
      if (tc.collectionFailure) {
        for (const f of moduleReportFiles(tc, testFiles)) collectionErrors.add(f);
      }
      continue;
    }
    const id = nodeId(tc.classname, tc.name, tc.file, testFiles);
    const prev = tests[id];
    if (prev === undefined || RANK[tc.status] > RANK[prev]) tests[id] = tc.status;
    if (tc.kind !== null) failureKinds[id] ??= tc.kind;
  }
  const out: ParsedRun = { tests, collectionErrors: [...collectionErrors].sort() };
  if (Object.keys(failureKinds).length) out.failureKinds = failureKinds;
  return out;
}

/** Fallback for a missing/broken JUnit file: "ERROR collecting <path>" headers in pytest's output. */
export function collectionErrorsFromOutput(output: string, testFiles: readonly string[]): string[] {
  const found = new Set<string>();
  for (const m of output.matchAll(/^_* ?ERROR collecting (.+?)(?: _+)?\s*$/gm)) {
    const reported = m[1]?.trim();
    if (reported) for (const f of filesForReportedPath(reported, testFiles)) found.add(f);
  }
  return [...found].sort();
}

function collectTestCases(node: unknown, out: TestCase[]): void {
  if (Array.isArray(node)) {
    for (const n of node) collectTestCases(n, out);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node as XmlNode)) {
    if (key === 'testcase') {
      for (const tc of value as XmlNode[]) out.push(toTestCase(tc));
    } else if (key === 'testsuites' || key === 'testsuite') {
      collectTestCases(value, out);
    }
  }
}

function toTestCase(tc: XmlNode): TestCase {
  const attr = (k: string): string | null => {
    const v = tc[`@_${k}`];
    return typeof v === 'string' ? decodeCharRefs(v) : null;
  };
  const has = (k: string): boolean => Array.isArray(tc[k]) && (tc[k] as unknown[]).length > 0;
  let status: TestStatus = 'pass';
  if (has('failure')) status = 'fail';
  else if (has('error')) status = 'error';
  else if (has('skipped')) status = 'skip';
  const errors = has('error') ? (tc['error'] as unknown[]) : [];
  const collectionFailure = errors.some(
    (e) => e !== null && typeof e === 'object' && (e as XmlNode)['@_message'] === 'collection failure',
  );
  const failed = has('failure') ? (tc['failure'] as unknown[]) : errors;
  return {
    classname: attr('classname') ?? '',
    name: attr('name') ?? '',
    file: attr('file'),
    status,
    collectionFailure,
    kind: failed.map(kindOf).find((k) => k !== null) ?? null,
  };
}

/** pytest's report of a failure ends `path:line: ExceptionType` (the class name without its module). */
function kindOf(node: unknown): string | null {
  const text = typeof node === 'string' ? node : node !== null && typeof node === 'object' ? (node as XmlNode)['#text'] : null;
  if (typeof text !== 'string') return null;
  const m = /:\d+: ([A-Za-z_][\w.]*)\s*$/.exec(decodeCharRefs(text));
  return m ? m[1]!.split('.').pop()! : null;
}

/** fast-xml-parser decodes the named entities only; pytest never emits numeric ones, but be safe. */
function decodeCharRefs(s: string): string {
  return s.replace(/&#(x[0-9a-fA-F]+|[0-9]+);/g, (_, ref: string) =>
    String.fromCodePoint(ref.startsWith('x') ? parseInt(ref.slice(1), 16) : parseInt(ref, 10)),
  );
}

const normalise = (p: string): string => p.replace(/\\/g, '/').replace(/^\.\//, '');
const dotted = (p: string): string => normalise(p).replace(/\.py$/, '').replace(/\//g, '.');

/** Every trailing part of a path (`a/b/c.py`, `b/c.py`, `c.py`): pytest ids are rootdir-relative. */
function pathSuffixes(p: string): string[] {
  const parts = normalise(p).split('/');
  return parts.map((_, i) => parts.slice(i).join('/'));
}

function nodeId(classname: string, name: string, fileAttr: string | null, testFiles: readonly string[]): string {
  const { file, chain } = splitClassname(classname, fileAttr, testFiles);
  // A file a conftest hook collects as one item named "" (golden-file suites): the id is the file itself.
  return [file, ...chain, ...(name === '' ? [] : [name])].join('::');
}

/** Split `tests.pkg.test_y.TestA.TestB` into the test file and the class chain. */
function splitClassname(
  classname: string,
  fileAttr: string | null,
  testFiles: readonly string[],
): { file: string; chain: string[] } {
  const chainAfter = (d: string): string[] | null => {
    if (classname === d) return [];
    if (classname.startsWith(`${d}.`)) return classname.slice(d.length + 1).split('.');
    return null;
  };
  // 1. A requested test file whose full dotted path prefixes classname (longest wins);
  // 2. one whose trailing part does (pytest's rootdir was a subdirectory);
  // 3. the same with the `file` attribute.
  for (const candidates of [testFiles, fileAttr ? [fileAttr] : []]) {
    let best: { file: string; chain: string[]; score: number } | null = null;
    for (const f of candidates) {
      for (const [i, suffix] of pathSuffixes(f).entries()) {
        const chain = chainAfter(dotted(suffix));
        if (chain === null) continue;
        const score = (i === 0 ? 1_000_000 : 0) + suffix.length;
        if (!best || score > best.score) best = { file: normalise(f), chain, score };
      }
    }
    if (best) return best;
  }
  // 4. Heuristic: trailing capitalised segments are classes (pytest collects `Test*` classes).
  const segs = classname.split('.');
  let i = segs.length;
  while (i > 1 && /^[A-Z]/.test(segs[i - 1] ?? '')) i--;
  return { file: `${segs.slice(0, i).join('/')}.py`, chain: segs.slice(i) };
}

/** The requested test files a module-level collection failure stands for. */
function moduleReportFiles(tc: TestCase, testFiles: readonly string[]): string[] {
  if (tc.file) {
    const viaFile = matchReportedPath(tc.file, testFiles);
    if (viaFile.length > 0) return viaFile;
  }
  // `name` is the module's dotted path (tests.pkg.test_y).
  const byName = testFiles.filter((f) => pathSuffixes(f).some((s) => dotted(s) === tc.name));
  if (byName.length > 0) return byName.map(normalise);
  return [tc.file ? normalise(tc.file) : `${tc.name.replace(/\./g, '/')}.py`];
}

function filesForReportedPath(reported: string, testFiles: readonly string[]): string[] {
  const matched = matchReportedPath(reported, testFiles);
  return matched.length > 0 ? matched : [normalise(reported).replace(/\/$/, '')];
}

/**
 * Map a path pytest reported (rootdir-relative) to requested test files: the file itself, or,
 * for a package `__init__.py`/`conftest.py`/directory, every requested file below that directory.
 */
function matchReportedPath(reported: string, testFiles: readonly string[]): string[] {
  const r = normalise(reported).replace(/\/$/, '');
  const exact = testFiles.filter((f) => normalise(f) === r || normalise(f).endsWith(`/${r}`));
  if (exact.length > 0) return exact.map(normalise);
  const dir = /(^|\/)(__init__|conftest)\.py$/.test(r) ? r.replace(/\/?[^/]+$/, '') : r.endsWith('.py') ? null : r;
  if (dir === null) return [];
  return testFiles
    .map(normalise)
    .filter((n) => dir === '' || n.startsWith(`${dir}/`) || n.includes(`/${dir}/`));
}
