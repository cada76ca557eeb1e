/**
 * Which of the base images' Pythons (3.9 bullseye, 3.11 bookworm, 3.13 trixie; 3.7 is bullseye's PyPy)
 * a commit is for, from
 * the project's own metadata at that commit (read with git, no checkout), best first:
 *  - the versions it names: classifiers `Programming Language :: Python :: 3.X`, tox.ini's envlist
 *    (`py39`, `py3{8,9}`), CI matrices (.github/workflows, .travis.yml);
 *  - its constraint: `requires-python` / `python_requires`;
 *  - the commit date, when it names no version (before Python 3.10, 2021-10-04: 3.9).
 * 3.11 is preferred whenever it fits (the offline wheels are mostly cp311); a project whose newest named
 * Python is older than 3.10 gets 3.9 first, as code of that era may not run on 3.11
 * (`from collections import Iterator`). Only Pythons the constraint allows are candidates (all of them
 * when it allows none of ours).
 * A project whose newest named Python 3 is 3.5 or older (Django <= 1.10, 2016) gets PyPy 3.7 first:
 * its metaclasses break on CPython 3.8+ (`__class__ not set defining 'AbstractBaseUser'`), and no
 * served Debian release has a CPython older than 3.9.
 */
import { git } from '../../foundation/git.ts';
import { readPyproject, tomlTable } from './detect.ts';

/** CPython eras, then '3.7': PyPy 3.7 (bullseye's pypy3 7.3.5), only for code older than Python 3.6. */
export const ERA_PYTHONS = ['3.9', '3.11', '3.13', '3.7'] as const;
export type EraPython = (typeof ERA_PYTHONS)[number];
/** The CPythons, ranked for every project; PyPy 3.7 only leads for the oldest code. */
const CPYTHONS: readonly EraPython[] = ['3.9', '3.11', '3.13'];
export const PYPY_PYTHON = '3.7' satisfies EraPython;

export interface PythonEra {
  /** The Pythons to try, best first (at least one). */
  order: [EraPython, ...EraPython[]];
  /** What decided it, one line each. */
  reasons: string[];
}

type Version = [number, number];

function parseVersion(s: string): Version | null {
  const m = /^(\d+)(?:\.(\d+|\*))?/.exec(s.trim());
  if (!m) return null;
  return [Number(m[1]), m[2] === undefined || m[2] === '*' ? 0 : Number(m[2])];
}

function cmp(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1];
}

/** Whether `v` (major.minor) satisfies a PEP 440 specifier set such as `>=3.8, !=3.9.*, <4` (unknown clauses allow). */
export function satisfies(spec: string, v: string): boolean {
  const ver = parseVersion(v)!;
  for (const clause of spec.split(',').map((c) => c.trim()).filter(Boolean)) {
    const m = /^(~=|==|!=|<=|>=|<|>)\s*([\d.*]+)/.exec(clause);
    if (!m) continue;
    const op = m[1]!;
    const raw = m[2]!;
    const target = parseVersion(raw);
    if (!target) continue;
    // A patch level (3.8.1) or wildcard compares at major.minor: `<3.12.0` excludes 3.12, `<=3.8.5` keeps 3.8.
    const parts = raw.split('.');
    const c = cmp(ver, target);
    const ok =
      op === '>=' ? c >= 0
      : op === '>' ? c > 0 || (c === 0 && parts.length > 2)
      : op === '<=' ? c <= 0
      : op === '<' ? c < 0
      : op === '==' ? (parts.length === 1 ? ver[0] === target[0] : c === 0)
      : op === '!=' ? (parts.length === 1 ? ver[0] !== target[0] : c !== 0)
      : /* ~= */ c >= 0 && (parts.length <= 2 ? ver[0] === target[0] : c === 0);
    if (!ok) return false;
  }
  return true;
}

/** The Python 3 minor versions a text names: classifiers, tox envs, CI matrices. */
export function namedVersions(texts: { metadata?: string[]; tox?: string; ci?: string[] }): string[] {
  const found = new Set<string>();
  for (const t of texts.metadata ?? []) for (const m of t.matchAll(/Programming Language :: Python :: (3\.\d+)\b/g)) found.add(m[1]!);
  if (texts.tox) {
    const envlist = /^\s*envlist\s*=\s*((?:.*\n?)(?:[ \t]+.*\n?)*)/m.exec(texts.tox)?.[1] ?? '';
    for (const m of envlist.matchAll(/py3(\d{1,2})\b/g)) found.add(`3.${m[1]}`);
    for (const m of envlist.matchAll(/py3\{([\d,\s]+)\}/g)) for (const d of m[1]!.split(',')) if (d.trim()) found.add(`3.${d.trim()}`);
  }
  for (const t of texts.ci ?? []) {
    for (const m of t.matchAll(/^\s*(?:-\s*)?(?:python-version|python|python_version)\s*:\s*(.+)$/gm)) {
      for (const v of m[1]!.matchAll(/["']?\b(3\.\d{1,2})\b/g)) found.add(v[1]!);
    }
    // A matrix list spread over lines: `- "3.9"` items.
    for (const m of t.matchAll(/^\s*-\s*["']?(3\.\d{1,2})["']?\s*$/gm)) found.add(m[1]!);
  }
  return [...found].sort((a, b) => cmp(parseVersion(a)!, parseVersion(b)!));
}

/** The `requires-python` / `python_requires` constraint, when the project states one. */
export function requiresPython(texts: { pyproject?: string; setupCfg?: string; setupPy?: string }): string | null {
  const declared = texts.pyproject !== undefined ? tomlTable(readPyproject(texts.pyproject).project)?.['requires-python'] : undefined;
  if (typeof declared === 'string' && declared.trim()) return declared.trim();
  const pats: Array<[string | undefined, RegExp]> = [
    [texts.setupCfg, /^\s*python_requires\s*=\s*(.+)$/m],
    [texts.setupPy, /python_requires\s*=\s*["']([^"']+)["']/],
  ];
  for (const [text, re] of pats) {
    const m = text !== undefined ? re.exec(text) : null;
    if (m) return m[1]!.trim();
  }
  return null;
}

const PY310_RELEASE = '2021-10-04';

/** The Python order from what was read (pure: see `pythonEra` for the reading). */
export function rankPythons(input: { named: string[]; constraint: string | null; date: string }): PythonEra {
  const reasons: string[] = [];
  let allowed: EraPython[] = CPYTHONS.filter((p) => input.constraint === null || satisfies(input.constraint, p));
  if (input.constraint !== null) reasons.push(`requires-python ${input.constraint}: ${allowed.length ? allowed.join(', ') : `none of ${CPYTHONS.join(', ')}`}`);
  if (allowed.length === 0) allowed = [...CPYTHONS];
  const named = input.named.filter((v) => v.startsWith('3.'));
  let wanted: EraPython;
  if (named.length) {
    const newest = parseVersion(named.at(-1)!)!;
    // 3.10 code runs on 3.11 far more often than on 3.9, whose packages (Debian bullseye's, 2021) are too
    // old for it and for which most local wheels do not exist (they need 3.10+).
    wanted = cmp(newest, [3, 10]) >= 0 ? '3.11' : '3.9';
    reasons.push(`names Python ${named.join(', ')}: ${wanted} first`);
  } else {
    wanted = input.date.slice(0, 10) < PY310_RELEASE ? '3.9' : '3.11';
    reasons.push(`names no Python version; committed ${input.date.slice(0, 10)}: ${wanted} first`);
  }
  const idx = (p: EraPython): number => CPYTHONS.indexOf(p);
  // The closest allowed Python to the wanted one; ties go to the older (code of a project's era runs there more often).
  const order = [...allowed].sort((a, b) => Math.abs(idx(a) - idx(wanted)) - Math.abs(idx(b) - idx(wanted)) || idx(a) - idx(b));
  const newest = named.length ? parseVersion(named.at(-1)!)! : null;
  if (newest !== null && cmp(newest, [3, 5]) <= 0 && (input.constraint === null || satisfies(input.constraint, PYPY_PYTHON))) {
    reasons.push(`newest named Python ${named.at(-1)} predates 3.6: PyPy ${PYPY_PYTHON} first (CPython 3.8+ breaks code of that era)`);
    order.unshift(PYPY_PYTHON);
  }
  return { order: order as [EraPython, ...EraPython[]], reasons };
}

/** Every string of a TOML value, depth first. */
function tomlStrings(v: unknown): string[] {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.flatMap(tomlStrings);
  const t = tomlTable(v);
  return t ? Object.values(t).flatMap(tomlStrings) : [];
}

/** The Pythons to try for `commit`, best first, from the project's metadata at that commit. */
export async function pythonEra(clone: string, commit: string, paths: readonly string[]): Promise<PythonEra> {
  const has = new Set(paths);
  const read = async (p: string): Promise<string | undefined> => (has.has(p) ? git(clone, ['show', '--end-of-options', `${commit}:${p}`]) : undefined);
  const pyproject = await read('pyproject.toml');
  const setupCfg = await read('setup.cfg');
  const setupPy = await read('setup.py');
  const tox = await read('tox.ini');
  const ciPaths = paths.filter((p) => /^\.github\/workflows\/[^/]+\.ya?ml$/.test(p) || p === '.travis.yml').slice(0, 20);
  const ci = (await Promise.all(ciPaths.map(read))).filter((t): t is string => t !== undefined);
  // The pyproject's strings, wherever its tables keep the classifiers ([project], [tool.poetry], flit's metadata), comments left out.
  const pyStrings = pyproject !== undefined ? tomlStrings(readPyproject(pyproject)).join('\n') : undefined;
  const named = namedVersions({ metadata: [pyStrings, setupCfg, setupPy].filter((t): t is string => t !== undefined), tox, ci });
  const constraint = requiresPython({ pyproject, setupCfg, setupPy });
  const date = (await git(clone, ['show', '-s', '--format=%cI', '--end-of-options', commit])).trim();
  return rankPythons({ named, constraint, date });
}
