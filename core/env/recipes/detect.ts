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
 */
import { git } from '../../git.ts';
import { DEFAULT_DEPENDENCY_FILES, RecipeSchema, type Recipe } from './schema.ts';

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

/** The sections and keys of a TOML document, enough to find tables and their keys (no values). */
function tomlTables(text: string): Map<string, Set<string>> {
  const tables = new Map<string, Set<string>>([['', new Set()]]);
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const header = /^\[\[?\s*([^\]]+?)\s*\]\]?/.exec(line);
    if (header) {
      current = header[1]!.replace(/\s*\.\s*/g, '.').replace(/"/g, '');
      if (!tables.has(current)) tables.set(current, new Set());
      continue;
    }
    const key = /^("?)([A-Za-z0-9_.-]+)\1\s*=/.exec(line);
    if (key) tables.get(current)!.add(key[2]!);
  }
  return tables;
}

/** Extras a project declares, from pyproject.toml, setup.cfg or setup.py (best effort). */
export function declaredExtras(files: { pyproject?: string; setupCfg?: string; setupPy?: string }): string[] {
  const extras = new Set<string>();
  if (files.pyproject !== undefined) {
    const tables = tomlTables(files.pyproject);
    for (const k of tables.get('project.optional-dependencies') ?? []) extras.add(k);
    for (const k of tables.get('tool.poetry.extras') ?? []) extras.add(k);
    // Inline form: optional-dependencies = { test = [...] } inside [project].
    const inline = /optional-dependencies\s*=\s*\{([^}]*)\}/.exec(files.pyproject);
    if (inline) for (const m of inline[1]!.matchAll(/([A-Za-z0-9_.-]+)\s*=/g)) extras.add(m[1]!);
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

/** The package names of `[build-system] requires` (versions dropped: an old pin is what fails offline). */
export function buildRequires(pyproject: string): string[] {
  const block = /^\s*\[\s*build-system\s*\]([\s\S]*?)(?=^\s*\[|(?![\s\S]))/m.exec(pyproject)?.[1] ?? '';
  const list = /^\s*requires\s*=\s*\[([\s\S]*?)\]/m.exec(block)?.[1] ?? '';
  const names: string[] = [];
  for (const m of list.matchAll(/["']\s*([A-Za-z0-9][A-Za-z0-9._-]*)/g)) {
    const name = m[1]!;
    if (!names.includes(name)) names.push(name);
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
export async function detectCandidates(clone: string, commit: string): Promise<DetectedCandidates> {
  const paths = await listTree(clone, commit);
  const has = new Set(paths);
  const reasons: string[] = [];
  const read = async (p: string): Promise<string | undefined> => (has.has(p) ? show(clone, commit, p) : undefined);
  const recipe = (runner: 'pytest' | 'django', install: string[]): Recipe =>
    RecipeSchema.parse({ runner, install, dependencyFiles: [...DEFAULT_DEPENDENCY_FILES] });

  const pyproject = await read('pyproject.toml');
  const setupPy = await read('setup.py');
  const setupCfg = await read('setup.cfg');
  const pyTables = pyproject !== undefined ? tomlTables(pyproject) : undefined;
  const installable =
    setupPy !== undefined || (pyTables !== undefined && (pyTables.has('build-system') || pyTables.has('project')));
  const declared = installable ? declaredExtras({ pyproject, setupCfg, setupPy }) : [];
  const extras = EXTRA_NAMES.filter((e) => declared.includes(e));
  const requires = pyproject !== undefined && pyTables?.has('build-system') ? buildRequires(pyproject) : [];

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
    install.push('pip install pytest');
    if (!testReq && !has.has('requirements.txt')) reasons.push('no project metadata: pytest only');
    const label = ['no project', ...(testReq ? [testReq] : []), ...(has.has('requirements.txt') ? ['requirements.txt'] : [])].join(' + ');
    return { candidates: [{ label, recipe: recipe('pytest', install), isolated: true }], reasons };
  }

  reasons.push(
    `${setupPy !== undefined ? 'setup.py' : 'pyproject.toml'}: pip install -e .${extras.length ? ` (declares ${extras.map((e) => `"${e}"`).join(', ')})` : ''}`,
  );
  if (testReq) reasons.push(`${testReq}: pip install -r`);
  // [target, with the test requirements file]: each extra, then the bare project, then the project and pytest alone.
  const targets: Array<[string, boolean]> = [...extras.map((e): [string, boolean] => [`.[${e}]`, true]), ['.', true]];
  if (testReq) targets.push(['.', false]);
  const candidates: RecipeCandidate[] = [];
  for (const isolated of [true, false]) {
    for (const [target, withReq] of targets) {
      const install = isolated ? [] : [backendInstall(requires)];
      install.push(`pip install${isolated ? '' : ' --no-build-isolation'} -e ${shQuote(target)}`);
      if (withReq && testReq) install.push(`pip install -r ${shQuote(testReq)}`);
      install.push('pip install pytest');
      const label = `${isolated ? '' : 'no-isolation '}${target}${withReq && testReq ? ` + ${testReq}` : ''}${!withReq ? ' + pytest' : ''}`;
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
