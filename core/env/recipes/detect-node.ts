/**
 * Install candidates for a JavaScript/TypeScript project (package.json at the root, no Python project), read
 * from the commit alone: which test runner (jest, vitest, mocha) its `test` / `test:unit` scripts run
 * (following `npm run x`, `yarn x`, `run-s x`), then what its CI workflows and its Makefile's test targets run, then which of them its
 * dependencies install; which Node majors (node-era.ts); which package manager (its lockfile's). One
 * candidate per (Node major, runner), the preferred Node first and, on each, the runners in that order:
 * candidates of one Node differ only in the runner, so a wrong runner costs a probe run on an image much
 * like the one before. choose-env.ts builds and checks them in order.
 */
import { git } from '../../foundation/git.ts';
import type { DetectedCandidates, RecipeCandidate } from './detect.ts';
import { LOCKFILES, nodeEra, packageManagerFor, pickLockfile, readPackageJson, type LockfileName, type PackageJson } from './node-era.ts';
import { RecipeSchema, runnerNames } from './schema.ts';

/** What keys a Node image: package.json, the lockfiles and the clients' own configuration. */
export const NODE_DEPENDENCY_FILES = ['package.json', ...LOCKFILES, '.npmrc', '.yarnrc', '.yarnrc.yml', 'pnpm-workspace.yaml'] as const;

/** The JavaScript runners detection knows, by the package that provides each (and its command's name). */
const JS_TOOLS = ['jest', 'vitest', 'mocha'] as const;
type JsTool = (typeof JS_TOOLS)[number];

/** The Python of a Node image: the harness scripts' (bookworm's, the default base's). */
const NODE_IMAGE_PYTHON = '3.11';

/** Scripts that run a project's tests, in the order their runner is believed. */
const TEST_SCRIPTS = ['test', 'test:unit'] as const;

export interface NodeProject {
  packageJson: PackageJson;
  nvmrc?: string;
  nodeVersion?: string;
  lockfiles: Partial<Record<LockfileName, string>>;
  /** The texts of .github/workflows/*.yml. */
  workflows: string[];
  /** The text of the root Makefile (GNUmakefile, makefile, Makefile: the first make reads). */
  makefile?: string;
  /** The commit's date (ISO 8601). */
  commitDate: string;
}

/** The files of `commit` detection reads (no checkout). */
export async function readNodeProject(clone: string, commit: string, paths: readonly string[]): Promise<NodeProject> {
  const has = new Set(paths);
  const read = async (p: string): Promise<string | undefined> => (has.has(p) ? git(clone, ['show', '--end-of-options', `${commit}:${p}`]) : undefined);
  const lockfiles: Partial<Record<LockfileName, string>> = {};
  for (const f of LOCKFILES) {
    const text = await read(f);
    if (text !== undefined) lockfiles[f] = text;
  }
  const workflows: string[] = [];
  for (const p of paths.filter((x) => /^\.github\/workflows\/[^/]+\.ya?ml$/.test(x))) workflows.push((await read(p))!);
  return {
    packageJson: readPackageJson(await read('package.json')),
    nvmrc: await read('.nvmrc'),
    nodeVersion: await read('.node-version'),
    lockfiles,
    workflows,
    makefile: (await read('GNUmakefile')) ?? (await read('makefile')) ?? (await read('Makefile')),
    commitDate: (await git(clone, ['show', '-s', '--format=%cI', '--end-of-options', commit])).trim(),
  };
}

/** The runners a command names as its command word (`jest`, `npx vitest run`, `node_modules/.bin/mocha`, `cross-env X=1 jest`). */
export function toolsIn(command: string): JsTool[] {
  const out: JsTool[] = [];
  // Not a longer name: jest-cli, ts-mocha, @jest/core, mocha.opts files do not count.
  for (const m of command.matchAll(/(?:^|[^\w@.-])(jest|vitest|mocha)(?![\w-]|\.(?:opts|config|setup))/g)) {
    const t = m[1] as JsTool;
    if (!out.includes(t)) out.push(t);
  }
  return out;
}

/** The scripts a command runs (`npm test`, `npm run x`, `yarn x`, `pnpm run x`, `run-s x y`, `npm-run-all x:*`). */
function scriptsRun(command: string, scripts: Record<string, unknown>): string[] {
  const names: string[] = [];
  const add = (n: string): void => {
    const pattern = n.endsWith('*') ? n.slice(0, -1) : null;
    for (const s of Object.keys(scripts)) if ((pattern !== null ? s.startsWith(pattern) : s === n) && !names.includes(s)) names.push(s);
  };
  for (const m of command.matchAll(/\b(?:npm|pnpm|yarn)(?:\s+(?:run|run-script))?\s+([\w:.*-]+)/g)) add(m[1] === 't' ? 'test' : m[1]!);
  for (const m of command.matchAll(/\b(?:run-s|run-p|npm-run-all)\s+([^&|;]+)/g)) {
    for (const w of m[1]!.split(/\s+/)) if (w && !w.startsWith('-')) add(w.replace(/^['"]|['"]$/g, ''));
  }
  return names;
}

/** The runners a script runs, itself or through the scripts it calls (a few levels down). */
function toolsOfScript(name: string, scripts: Record<string, unknown>, seen: Set<string> = new Set()): JsTool[] {
  const cmd = scripts[name];
  if (typeof cmd !== 'string' || seen.has(name) || seen.size > 8) return [];
  seen.add(name);
  const out = toolsIn(cmd);
  for (const s of scriptsRun(cmd, scripts)) for (const t of toolsOfScript(s, scripts, seen)) if (!out.includes(t)) out.push(t);
  return out;
}

/** The commands of a workflow's `run:` steps (one line each; block scalars' lines too). */
function workflowCommands(text: string): string[] {
  const out: string[] = [];
  let block = -1;
  for (const line of text.split('\n')) {
    const indent = line.length - line.trimStart().length;
    if (block >= 0 && (line.trim() === '' || indent > block)) {
      if (line.trim() !== '') out.push(line.trim());
      continue;
    }
    block = -1;
    const m = /^(\s*)(?:-\s+)?run:\s*(.*)$/.exec(line);
    if (!m) continue;
    if (/^[|>][-+]?\s*$/.test(m[2]!)) block = m[1]!.length;
    else out.push(m[2]!.replace(/^['"]|['"]$/g, ''));
  }
  return out;
}

/** Make targets that run a project's tests. */
const MAKE_TEST_TARGETS = ['test', 'tests', 'check', 'test-unit', 'unit'] as const;

/**
 * The commands of a Makefile's test targets, with those of the targets they depend on (a few levels):
 * recipe lines (a tab first) under `target: prerequisites`, `@`/`-` prefixes dropped.
 */
export function makeTestCommands(text: string): Array<{ target: string; command: string }> {
  const rules = new Map<string, { deps: string[]; commands: string[] }>();
  let current: Array<{ deps: string[]; commands: string[] }> = [];
  for (const line of text.replace(/\\\n\s*/g, ' ').split('\n')) {
    if (line.startsWith('\t')) {
      const cmd = line.trim().replace(/^[@+-]+/, '').replace(/\s+/g, ' ').trim();
      if (cmd) for (const r of current) r.commands.push(cmd);
      continue;
    }
    if (/^\s*(#|$)/.test(line)) continue;
    const m = /^([A-Za-z0-9_.\/ -]+?)\s*::?(?!=)\s*([^=;#]*)(?:;([^#]*))?(?:#.*)?$/.exec(line);
    current = [];
    if (!m) continue;
    for (const t of m[1]!.trim().split(/\s+/)) {
      const r = rules.get(t) ?? { deps: [], commands: [] };
      r.deps.push(...m[2]!.trim().split(/\s+/).filter(Boolean));
      if (m[3]?.trim()) r.commands.push(m[3].trim());
      rules.set(t, r);
      current.push(r);
    }
  }
  const out: Array<{ target: string; command: string }> = [];
  const seen = new Set<string>();
  const visit = (target: string, depth: number): void => {
    const r = rules.get(target);
    if (!r || seen.has(target) || depth > 4) return;
    seen.add(target);
    for (const command of r.commands) out.push({ target, command });
    for (const d of r.deps) visit(d, depth + 1);
  };
  for (const t of MAKE_TEST_TARGETS) visit(t, 0);
  return out;
}

/** Each runner the project may use, best first, with why. */
export function detectRunners(p: Pick<NodeProject, 'packageJson' | 'workflows' | 'makefile'>): Array<{ tool: JsTool; why: string }> {
  const scripts = (typeof p.packageJson.scripts === 'object' && p.packageJson.scripts !== null ? p.packageJson.scripts : {}) as Record<string, unknown>;
  const found: Array<{ tool: JsTool; why: string }> = [];
  const add = (tools: readonly JsTool[], why: string): void => {
    for (const tool of tools) if (!found.some((f) => f.tool === tool)) found.push({ tool, why });
  };
  for (const s of TEST_SCRIPTS) add(toolsOfScript(s, scripts), `package.json scripts.${s}`);
  for (const cmd of p.workflows.flatMap(workflowCommands)) {
    add(toolsIn(cmd), `CI workflow: ${cmd}`);
    for (const s of scriptsRun(cmd, scripts)) add(toolsOfScript(s, scripts), `CI workflow: ${cmd}`);
  }
  for (const { target, command } of makeTestCommands(p.makefile ?? '')) {
    add(toolsIn(command), `Makefile ${target}: ${command}`);
    for (const s of scriptsRun(command, scripts)) add(toolsOfScript(s, scripts), `Makefile ${target}: ${command}`);
  }
  const deps = { ...(p.packageJson.dependencies ?? {}), ...(p.packageJson.devDependencies ?? {}) };
  add(JS_TOOLS.filter((t) => t in deps), 'package.json devDependencies');
  const registered = new Set<string>(runnerNames());
  return found.filter((f) => registered.has(f.tool));
}

/** The candidates of a Node project, or null when it names none of the runners (then it is not taken for one). */
export function detectNodeCandidates(p: NodeProject): DetectedCandidates | null {
  const runners = detectRunners(p);
  if (runners.length === 0) return null;
  const reasons = runners.map((r) => `${r.why}: runner ${r.tool}`);
  const era = nodeEra({ nvmrc: p.nvmrc, nodeVersion: p.nodeVersion, packageJson: p.packageJson, commitDate: p.commitDate });
  reasons.push(...era.reasons.map((r) => `node: ${r}`));
  const lock = pickLockfile(p.lockfiles, p.packageJson.packageManager);
  const candidates: RecipeCandidate[] = [];
  for (const node of era.order) {
    const pm = packageManagerFor(lock, p.packageJson.packageManager, node);
    if (node === era.order[0]) reasons.push(`package manager: ${pm.reason}`);
    for (const { tool } of runners) {
      candidates.push({
        label: `node${node} ${pm.spec} ${tool}`,
        recipe: RecipeSchema.parse({ runner: tool, python: NODE_IMAGE_PYTHON, node: String(node), packageManager: pm.spec, dependencyFiles: [...NODE_DEPENDENCY_FILES] }),
        isolated: true,
      });
    }
  }
  reasons.push(`${candidates.length} install candidates: ${candidates.map((c) => c.label).join(' -> ')}`);
  return { candidates: candidates as [RecipeCandidate, ...RecipeCandidate[]], reasons };
}
