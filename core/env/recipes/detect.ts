/**
 * Recipes for a standard Python project, detected from the repository at a commit (read with
 * `git ls-tree` / `git show`, no checkout), as an ordered list of install candidates
 * (`detectCandidates`; core/env/image/choose-env.ts builds them in order until one installs):
 *
 *  - `tests/runtests.py` (Django's layout): runner django, `pip install -e .`.
 *  - otherwise runner pytest: `pip install -e .` when the commit has an installable project
 *    (setup.py, or pyproject.toml with [build-system] or [project]), with each declared
 *    `dev`/`test`/`tests`/`testing` extra, then without one; the first test/dev requirements file
 *    (requirements-test.txt, test-requirements.txt, requirements/test.txt, …); a top-level
 *    requirements.txt when there is no installable project; then pytest. Then the same without
 *    build isolation, the build backend installed unpinned first.
 *  - a Go module (go.mod, no Python project): detect-go.ts; package.json without a Python project, naming
 *    jest, vitest or mocha: detect-node.ts.
 */
import { parse, TomlError, type TomlTable } from 'smol-toml';
import { git } from '../../foundation/git.ts';
import type { LanguageHint } from '../../foundation/settings.ts';
import { DEFAULT_DEPENDENCY_FILES, RecipeSchema, type Recipe } from './schema.ts';
import { detectGoCandidates } from './detect-go.ts';
import { detectNodeCandidates, readNodeProject } from './detect-node.ts';

export interface DetectedRecipe {
  recipe: Recipe;
  /** What was found, one line each (for the log). */
  reasons: string[];
}

// dev first: it usually holds the test tools and more (plugins); a dev-only tool that cannot install moves on to test.
const EXTRA_NAMES = ['dev', 'test', 'tests', 'testing'] as const;

const TEST_REQUIREMENTS = [
  'requirements-test.txt',
  'requirements_test.txt',
  'requirements-tests.txt',
  'requirements_tests.txt',
  'test-requirements.txt',
  'test_requirements.txt',
  'tests-requirements.txt',
  'requirements/test.txt',
  'requirements/tests.txt',
  'requirements/testing.txt',
  'tests/requirements.txt',
  'requirements-dev.txt',
  'requirements_dev.txt',
  'dev-requirements.txt',
  'dev_requirements.txt',
  'requirements/dev.txt',
] as const;

/** Every path in the commit's tree. */
export async function listTree(clone: string, commit: string): Promise<string[]> {
  const out = await git(clone, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', '--end-of-options', commit]);
  return out.split('\0').filter(Boolean);
}

async function show(clone: string, commit: string, path: string): Promise<string> {
  return git(clone, ['show', '--end-of-options', `${commit}:${path}`]);
}

/**
 * A pyproject.toml's document. One that is not valid TOML reads as an empty document: pip cannot build
 * from it either, so it declares nothing here (no build system, extras, groups or Python constraint),
 * as a file without those sections does.
 */
export function readPyproject(text: string): TomlTable {
  try {
    return parse(text);
  } catch (err) {
    if (err instanceof TomlError) return {};
    throw err;
  }
}

/** `v` when it is a TOML table (not an array, a date or a scalar). */
export function tomlTable(v: unknown): TomlTable | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date) ? (v as TomlTable) : undefined;
}

/** Extras a project declares, from pyproject.toml, setup.cfg or setup.py (best effort). */
export function declaredExtras(files: { pyproject?: string; setupCfg?: string; setupPy?: string }): string[] {
  const extras = new Set<string>();
  if (files.pyproject !== undefined) {
    const doc = readPyproject(files.pyproject);
    // [project.optional-dependencies], dotted keys inside [project] (pytest's form) and the inline table are one table once parsed.
    for (const k of Object.keys(tomlTable(tomlTable(doc.project)?.['optional-dependencies']) ?? {})) extras.add(k);
    for (const k of Object.keys(tomlTable(tomlTable(tomlTable(doc.tool)?.poetry)?.extras) ?? {})) extras.add(k);
  }
  if (files.setupCfg !== undefined) {
    let inSection = false;
    for (const raw of files.setupCfg.split('\n')) {
      const header = /^\s*\[([^\]]+)\]/.exec(raw);
      if (header) {
        inSection = header[1]!.trim() === 'options.extras_require';
        continue;
      }
      const key = /^([A-Za-z0-9_.-]+)\s*[=:]/.exec(raw); // keys start at column 0, values are indented
      if (inSection && key) extras.add(key[1]!);
    }
  }
  if (files.setupPy !== undefined) {
    const block = /extras_require\s*=\s*(?:dict\s*\(([^)]*)\)|\{([\s\S]*?)\}\s*[,)])/.exec(files.setupPy);
    const body = block?.[1] ?? block?.[2] ?? '';
    for (const m of body.matchAll(/["']([A-Za-z0-9_.-]+)["']\s*:/g)) extras.add(m[1]!);
    for (const m of (block?.[1] ?? '').matchAll(/\b([A-Za-z_][A-Za-z0-9_]*)\s*=/g)) extras.add(m[1]!);
    if (!block && /extras_require/.test(files.setupPy)) {
      // extras_require=EXTRAS with the dict defined elsewhere: look for the usual names as keys.
      for (const m of files.setupPy.matchAll(/["'](test|tests|testing|dev)["']\s*:/g)) extras.add(m[1]!);
      // ... or set by subscript: EXTRAS["tests"] = ... (attrs' 2021 setup.py).
      for (const m of files.setupPy.matchAll(/\[\s*["'](test|tests|testing|dev)["']\s*\]\s*=[^=]/g)) extras.add(m[1]!);
    }
  }
  return [...extras];
}

/** Quote one word for sh (single quotes). */
export function shQuote(word: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** One install the detection proposes; tried in order until one builds (core/env/image/choose-env.ts). */
export interface RecipeCandidate {
  /** Short and stable, e.g. `.[test]`, `. + requirements-test.txt`, `no-isolation .`: names it in logs and the choice file. */
  label: string;
  recipe: Recipe;
  /** False when it installs the build backend itself and builds with `--no-build-isolation`. */
  isolated: boolean;
}

export interface DetectedCandidates {
  candidates: [RecipeCandidate, ...RecipeCandidate[]];
  /** What was found, one line each (for the log). */
  reasons: string[];
}

/**
 * Python lines that loop over the distributions installed from /tmp/testbed (the project, editable or not):
 * the loop's body follows them, indented by four spaces. Needs `json` and `importlib.metadata as m`.
 */
export const TESTBED_DISTS_PY = [
  'for d in m.distributions():',
  '    try:',
  '        url = json.loads(d.read_text("direct_url.json") or "{}").get("url", "")',
  '    except Exception:',
  '        url = ""',
  '    if url.rstrip("/") != "file:///tmp/testbed" and not str(d.locate_file("")).startswith("/tmp/testbed"):',
  '        continue',
];

/**
 * Prints the requirements an extra adds to the project installed from /tmp/testbed (read from its installed
 * metadata, so setup.py's computed extras count too), one per line without the marker.
 */
const EXTRA_REQS_PY = [
  'import importlib.metadata as m, json, sys',
  'from pip._vendor.packaging.requirements import Requirement',
  ...TESTBED_DISTS_PY,
  '    for r in d.requires or []:',
  '        q = Requirement(r)',
  '        if q.marker is not None and q.marker.evaluate({"extra": sys.argv[1]}) and not q.marker.evaluate({"extra": ""}):',
  '            q.marker = None',
  '            print(q)',
  '    break',
].join('\n');

/**
 * A shell function installing one requirement, else the same without its version pin (the offline wheels
 * hold other versions than an old `==` pin), else skipping it with a line in the build log.
 */
const TRY_REQ = `try_req() { pip install "$@" || { n=$(printf '%s' "$*" | sed -E 's/[[:space:]]*(;|[<>=!~]).*//'); [ "$n" != "$*" ] && pip install "$n"; } || echo "foresight: skipped $*"; }`;

/**
 * Installs what an extra adds one requirement at a time, skipping those the offline wheels lack (a dev-only
 * tool such as autoflake or pandas-stubs), after the project itself.
 */
export function bestEffortExtra(extra: string): string {
  return `${TRY_REQ}; python -c ${shQuote(EXTRA_REQS_PY)} ${shQuote(extra)} > /tmp/foresight-extra.txt && while read -r r; do try_req "$r"; done < /tmp/foresight-extra.txt`;
}

/** Installs each line of a requirements file alone (options such as `-e .[full]` or `-r x.txt` kept), comments dropped. */
export function bestEffortFile(file: string): string {
  return `${TRY_REQ}; sed -e 's/^#.*//' -e 's/[[:space:]]#.*//' ${shQuote(file)} | while read -r r; do if [ -n "$r" ]; then try_req $r; fi; done`;
}

/** Installs each requirement alone, skipping those the offline wheels lack. */
export function bestEffortEach(reqs: readonly string[]): string {
  return `${TRY_REQ}; for r in ${reqs.map(shQuote).join(' ')}; do try_req "$r"; done`;
}

/**
 * PEP 735 `[dependency-groups]` of a pyproject.toml: each group's requirement strings, `{ include-group = "x" }`
 * entries resolved (cycles cut). Entries of another shape are skipped.
 */
export function dependencyGroups(pyproject: string): Map<string, string[]> {
  const raw = new Map<string, Array<string | { include: string }>>();
  for (const [name, list] of Object.entries(tomlTable(readPyproject(pyproject)['dependency-groups']) ?? {})) {
    if (!Array.isArray(list)) continue;
    const items: Array<string | { include: string }> = [];
    for (const it of list) {
      const include = tomlTable(it)?.['include-group'];
      if (typeof it === 'string') items.push(it);
      else if (typeof include === 'string') items.push({ include });
    }
    raw.set(name, items);
  }
  const resolve = (name: string, path: string[]): string[] => {
    if (path.includes(name)) return [];
    const out: string[] = [];
    for (const it of raw.get(name) ?? []) {
      for (const r of typeof it === 'string' ? [it] : resolve(it.include, [...path, name])) if (!out.includes(r)) out.push(r);
    }
    return out;
  };
  return new Map([...raw.keys()].map((k) => [k, resolve(k, [])]));
}

/** pytest 9 (2025-11-08) dropped what older suites use (py.path `path` arguments of hooks): before it, pytest 8. */
const PYTEST_9_RELEASED = '2025-11-08';

/** The pytest install of a commit's era (pip keeps a pytest the project's own requirements already installed, if it fits). */
export function pytestFor(commitDate: string): string {
  return commitDate.slice(0, 10) < PYTEST_9_RELEASED ? "pip install 'pytest<9'" : 'pip install pytest';
}

/** The package names of `[build-system] requires`, extras and versions dropped (an old pin is what fails offline). */
export function buildRequires(pyproject: string): string[] {
  const requires = tomlTable(readPyproject(pyproject)['build-system'])?.requires;
  const names: string[] = [];
  for (const req of Array.isArray(requires) ? requires : []) {
    // A PEP 508 requirement starts with its name: `setuptools_scm[toml]>=6.2`, `flit_core >=3.2,<4`.
    const name = typeof req === 'string' ? /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)/.exec(req)?.[1] : undefined;
    if (name !== undefined && !names.includes(name)) names.push(name);
  }
  return names;
}

/** The backend install of a no-isolation candidate: the backend unpinned, editables for hatchling's editable installs. */
function backendInstall(requires: readonly string[]): string {
  const pkgs = [...requires];
  if (pkgs.some((p) => p.toLowerCase() === 'hatchling') && !pkgs.includes('editables')) pkgs.push('editables');
  for (const p of ['setuptools', 'wheel']) if (!pkgs.some((x) => x.toLowerCase() === p)) pkgs.push(p);
  return `pip install ${pkgs.map(shQuote).join(' ')}`;
}

/**
 * The installs to try for a repository without a recipe file, best first: the project with each declared
 * test/dev extra (plus the test requirements file), then the bare project with the requirements file, then
 * the bare project with pytest only; then the same again built without isolation (the build backend
 * installed unpinned first), for pins the offline wheels lack (e.g. `flit_core<4`). A Django-style suite or
 * a project with nothing to install has one candidate.
 */
/** The candidates with the hint that chose their ecosystem named first among the reasons. */
function withHint(d: DetectedCandidates, prefer: LanguageHint): DetectedCandidates {
  return prefer === 'auto' ? d : { ...d, reasons: [`language hint ${prefer}`, ...d.reasons] };
}

export async function detectCandidates(clone: string, commit: string, prefer: LanguageHint = 'auto'): Promise<DetectedCandidates> {
  const paths = await listTree(clone, commit);
  const has = new Set(paths);
  const reasons: string[] = [];
  const read = async (p: string): Promise<string | undefined> => (has.has(p) ? show(clone, commit, p) : undefined);
  const recipe = (runner: 'pytest' | 'django', install: string[]): Recipe =>
    RecipeSchema.parse({ runner, install, dependencyFiles: [...DEFAULT_DEPENDENCY_FILES] });

  const commitDate = (await git(clone, ['show', '-s', '--format=%cI', '--end-of-options', commit])).trim();
  const pytestInstall = pytestFor(commitDate);
  const pyproject = await read('pyproject.toml');
  const setupPy = await read('setup.py');
  const setupCfg = await read('setup.cfg');
  const doc = pyproject !== undefined ? readPyproject(pyproject) : undefined;
  const hasBuildSystem = tomlTable(doc?.['build-system']) !== undefined;
  const installable = setupPy !== undefined || hasBuildSystem || tomlTable(doc?.project) !== undefined;
  const declared = installable ? declaredExtras({ pyproject, setupCfg, setupPy }) : [];
  const extras = EXTRA_NAMES.filter((e) => declared.includes(e));
  const requires = pyproject !== undefined ? buildRequires(pyproject) : [];

  // A Go module that is not also a Python project: its tests are Go's. The language hint settles a commit that is both.
  const goFirst = prefer === 'go' || (prefer === 'auto' && !installable && !has.has('tests/runtests.py'));
  if (has.has('go.mod') && goFirst) {
    const goMod = await read('go.mod');
    if (goMod !== undefined) return withHint(detectGoCandidates(goMod, has, await read('go.sum'), commitDate), prefer);
  }

  // A JavaScript/TypeScript project that is not also a Python one, when it names a runner of its own.
  const pythonFiles = installable || has.has('tests/runtests.py') || has.has('requirements.txt') || TEST_REQUIREMENTS.some((p) => has.has(p));
  const nodeFirst = prefer === 'javascript' || prefer === 'typescript' || (prefer === 'auto' && !pythonFiles);
  if (has.has('package.json') && nodeFirst) {
    const node = detectNodeCandidates(await readNodeProject(clone, commit, paths));
    if (node !== null) return withHint(node, prefer);
  }
  if (prefer !== 'auto') reasons.push(`language hint ${prefer}: ${prefer === 'python' ? 'Python detection' : `no ${prefer === 'go' ? 'go.mod' : 'package.json naming a runner'} here, Python detection`}`);

  if (has.has('tests/runtests.py')) {
    reasons.push('tests/runtests.py: Django-style suite, runner django');
    if (installable) reasons.push('installable project: pip install -e .');
    const first: RecipeCandidate = { label: installable ? '.' : 'no install', recipe: recipe('django', installable ? ['pip install -e .'] : []), isolated: true };
    const rest: RecipeCandidate[] = installable
      ? [{ label: 'no-isolation .', recipe: recipe('django', [backendInstall(requires), 'pip install --no-build-isolation -e .']), isolated: false }]
      : [];
    return { candidates: [first, ...rest], reasons };
  }

  const testReq = TEST_REQUIREMENTS.find((p) => has.has(p));
  if (!installable) {
    const install: string[] = [];
    if (testReq) {
      install.push(`pip install -r ${shQuote(testReq)}`);
      reasons.push(`${testReq}: pip install -r`);
    }
    if (has.has('requirements.txt')) {
      install.push('pip install -r requirements.txt');
      reasons.push('requirements.txt without an installable project: pip install -r');
    }
    install.push(pytestInstall);
    if (!testReq && !has.has('requirements.txt')) reasons.push('no project metadata: pytest only');
    const label = ['no project', ...(testReq ? [testReq] : []), ...(has.has('requirements.txt') ? ['requirements.txt'] : [])].join(' + ');
    return { candidates: [{ label, recipe: recipe('pytest', install), isolated: true }], reasons };
  }

  reasons.push(
    `${setupPy !== undefined ? 'setup.py' : 'pyproject.toml'}: pip install -e .${extras.length ? ` (declares ${extras.map((e) => `"${e}"`).join(', ')})` : ''}`,
  );
  if (testReq) reasons.push(`${testReq}: pip install -r`);
  // [target, with the test requirements file, extra installed one requirement at a time]: each extra, then
  // each extra's installable requirements (when the whole extra fails on one the offline wheels lack), then
  // the bare project, then the project and pytest alone.
  // Then each PEP 735 dependency group's requirements, one at a time (any pip; the same skips).
  const groups = pyproject !== undefined ? dependencyGroups(pyproject) : new Map<string, string[]>();
  const seen = new Set<string>();
  const groupNames = EXTRA_NAMES.filter((g) => {
    const reqs = groups.get(g);
    if (!reqs?.length || seen.has(reqs.join('\n'))) return false;
    seen.add(reqs.join('\n'));
    return true;
  });
  if (groupNames.length) reasons.push(`dependency groups ${groupNames.map((g) => `"${g}"`).join(', ')}: installed one requirement at a time`);
  // A requirements file naming the test tools: the test one, else a top-level requirements.txt (often the
  // project's dev setup, with exact pins), installed line by line after the whole-file candidates.
  const reqFile = testReq ?? (has.has('requirements.txt') ? 'requirements.txt' : undefined);
  type Target = { target: string; withReq: boolean; partial: { extra: string } | { group: string } | { file: string } | null };
  const targets: Target[] = [
    ...extras.map((e): Target => ({ target: `.[${e}]`, withReq: true, partial: null })),
    ...extras.map((e): Target => ({ target: '.', withReq: true, partial: { extra: e } })),
    ...groupNames.map((g): Target => ({ target: '.', withReq: true, partial: { group: g } })),
    { target: '.', withReq: true, partial: null },
  ];
  if (reqFile) targets.push({ target: '.', withReq: false, partial: { file: reqFile } });
  if (testReq) targets.push({ target: '.', withReq: false, partial: null });
  const candidates: RecipeCandidate[] = [];
  for (const isolated of [true, false]) {
    for (const { target, withReq, partial } of targets) {
      const install = isolated ? [] : [backendInstall(requires)];
      install.push(`pip install${isolated ? '' : ' --no-build-isolation'} -e ${shQuote(target)}`);
      if (partial !== null) install.push('extra' in partial ? bestEffortExtra(partial.extra) : 'group' in partial ? bestEffortEach(groups.get(partial.group)!) : bestEffortFile(partial.file));
      if (withReq && testReq) install.push(`pip install -r ${shQuote(testReq)}`);
      install.push(pytestInstall);
      const what = partial === null ? target : 'extra' in partial ? `. + installable [${partial.extra}]` : 'group' in partial ? `. + installable group ${partial.group}` : `. + installable ${partial.file}`;
      const label = `${isolated ? '' : 'no-isolation '}${what}${withReq && testReq ? ` + ${testReq}` : ''}${!withReq && partial === null ? ' + pytest' : ''}`;
      candidates.push({ label, recipe: recipe('pytest', install), isolated });
    }
  }
  reasons.push(`${candidates.length} install candidates: ${candidates.map((c) => c.label).join(' -> ')}`);
  return { candidates: candidates as [RecipeCandidate, ...RecipeCandidate[]], reasons };
}

/** The first detected candidate (the install tried first). */
export async function detectRecipe(clone: string, commit: string): Promise<DetectedRecipe> {
  const { candidates, reasons } = await detectCandidates(clone, commit);
  return { recipe: candidates[0].recipe, reasons };
}
