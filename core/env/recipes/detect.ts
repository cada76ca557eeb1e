/**
 * A recipe for a standard Python project, detected from the repository at a commit (read with
 * `git ls-tree` / `git show`, no checkout):
 *
 *  - `tests/runtests.py` (Django's layout): runner django, `pip install -e .`.
 *  - otherwise runner pytest: `pip install -e .` when the commit has an installable project
 *    (setup.py, or pyproject.toml with [build-system] or [project]), with its `test`/`tests`/
 *    `testing`/`dev` extra when it declares one; the first test/dev requirements file found
 *    (requirements-test.txt, test-requirements.txt, requirements/test.txt, …); a top-level
 *    requirements.txt when there is no installable project; then pytest.
 */
import { git } from '../../git.ts';
import { DEFAULT_DEPENDENCY_FILES, RecipeSchema, type Recipe } from './schema.ts';

export interface DetectedRecipe {
  recipe: Recipe;
  /** What was found, one line each (for the log). */
  reasons: string[];
}

const EXTRA_NAMES = ['test', 'tests', 'testing', 'dev'] as const;

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

export async function detectRecipe(clone: string, commit: string): Promise<DetectedRecipe> {
  const paths = await listTree(clone, commit);
  const has = new Set(paths);
  const reasons: string[] = [];
  const read = async (p: string): Promise<string | undefined> => (has.has(p) ? show(clone, commit, p) : undefined);

  const pyproject = await read('pyproject.toml');
  const setupPy = await read('setup.py');
  const setupCfg = await read('setup.cfg');
  const pyTables = pyproject !== undefined ? tomlTables(pyproject) : undefined;
  const installable =
    setupPy !== undefined || (pyTables !== undefined && (pyTables.has('build-system') || pyTables.has('project')));
  const extras = installable ? declaredExtras({ pyproject, setupCfg, setupPy }) : [];
  const extra = EXTRA_NAMES.find((e) => extras.includes(e));

  if (has.has('tests/runtests.py')) {
    reasons.push('tests/runtests.py: Django-style suite, runner django');
    const install = installable ? ['pip install -e .'] : [];
    if (installable) reasons.push('installable project: pip install -e .');
    return {
      recipe: RecipeSchema.parse({
        runner: 'django',
        install,
        dependencyFiles: [...DEFAULT_DEPENDENCY_FILES],
      }),
      reasons,
    };
  }

  const install: string[] = [];
  if (installable) {
    const target = extra ? `.[${extra}]` : '.';
    install.push(`pip install -e ${shQuote(target)}`);
    reasons.push(
      `${setupPy !== undefined ? 'setup.py' : 'pyproject.toml'}: pip install -e ${target}${extra ? ` (declares the "${extra}" extra)` : ''}`,
    );
  }
  const testReq = TEST_REQUIREMENTS.find((p) => has.has(p));
  if (testReq) {
    install.push(`pip install -r ${shQuote(testReq)}`);
    reasons.push(`${testReq}: pip install -r`);
  }
  if (!installable && has.has('requirements.txt')) {
    install.push('pip install -r requirements.txt');
    reasons.push('requirements.txt without an installable project: pip install -r');
  }
  install.push('pip install pytest');
  if (!installable && !testReq && !has.has('requirements.txt')) reasons.push('no project metadata: pytest only');
  return {
    recipe: RecipeSchema.parse({ runner: 'pytest', install, dependencyFiles: [...DEFAULT_DEPENDENCY_FILES] }),
    reasons,
  };
}
