/**
 * The layering of the tree, checked on every import (type-only ones included: a type import is still
 * a dependency a reader has to follow):
 *   core/      the shared library: imports nothing above it (stages/, judges/, pipeline/, scripts/, bench/),
 *              and is built in floors (CORE_FLOORS): a folder imports only its own floor's files and the floors below
 *   stages/X/  public only through stages/X/index.ts: no stage reaches into another's internals
 *   judges/    plug-ins: no stages/, no pipeline/
 *   pipeline/  composes the stages through their index.ts only; so do scripts/ and bench/
 *   no source file imports test/
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../core/foundation/version.ts';

const SOURCE_DIRS = ['core', 'stages', 'judges', 'pipeline', 'scripts', 'bench'];

/**
 * core/'s floors, bottom first. The foundation (errors, files, fingerprint, log, model, config and its
 * values) imports no feature; each feature imports the foundation and the features listed before it.
 */
export const CORE_FLOORS = ['foundation', 'history', 'http', 'sources', 'extract', 'env', 'queue', 'attribution'] as const;

/** The floor of a core/ file (its folder under core/), or null for a file outside core/ or a folder not listed. */
function floorOf(p: string): number | null {
  const parts = p.split('/');
  if (parts[0] !== 'core' || parts.length < 3) return null;
  const i = (CORE_FLOORS as readonly string[]).indexOf(parts[1]!);
  return i < 0 ? null : i;
}

/** Static imports and re-exports (`import ... from`, `export ... from`, `import '...'`) and `import('...')`. */
const PATTERNS = [
  /(?:^|[\n;])\s*(?:import|export)\s+(?:type\s+)?[^'"`;]*?\bfrom\s*(['"])([^'"\n]+)\1/g,
  /(?:^|[\n;])\s*import\s*(['"])([^'"\n]+)\1/g,
  /\bimport\s*\(\s*(['"`])([^'"`\n]+)\1\s*\)/g,
];

/** The module specifiers a file's text imports. Comments are blanked first, so a commented-out import does not count. */
function importSpecifiers(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/[^\n]*/g, '$1');
  const out: string[] = [];
  for (const re of PATTERNS) for (const m of code.matchAll(re)) out.push(m[2]!);
  return [...new Set(out)];
}

interface Violation {
  file: string;
  specifier: string;
  rule: string;
}

/** The layering rules broken by one import of `file` (both project-relative, posix separators). */
function ruleBroken(file: string, target: string): string | null {
  const top = (p: string) => p.split('/')[0]!;
  const stageOf = (p: string) => (p.startsWith('stages/') ? p.split('/')[1]! : null);
  const isStageIndex = (p: string) => /^stages\/[^/]+\/index\.ts$/.test(p);
  const from = top(file);
  const to = top(target);
  if (SOURCE_DIRS.includes(from) && to === 'test') return 'source code imports test/';
  if (from === 'core' && ['stages', 'judges', 'pipeline', 'scripts', 'bench'].includes(to)) return `core/ imports ${to}/`;
  if (from === 'core' && to === 'core') {
    const [a, b] = [file.split('/')[1]!, target.split('/')[1]!];
    if (floorOf(file) === null && file.split('/').length > 2) return `core/${a}/ is on no floor (add it to CORE_FLOORS)`;
    if (file.split('/').length === 2) return 'core/ holds no loose files: each belongs to a floor (core/foundation/ for the shared basics)';
    const fa = floorOf(file)!;
    const fb = floorOf(target);
    if (a !== b && (fb === null || fb > fa)) return `core/${a}/ imports core/${b}/, a floor above it (CORE_FLOORS: ${CORE_FLOORS.join(' < ')})`;
  }
  if (from === 'stages' && to === 'stages' && stageOf(file) !== stageOf(target) && !isStageIndex(target)) {
    return `stages/${stageOf(file)} reaches into stages/${stageOf(target)} (only its index.ts is public)`;
  }
  if (from === 'judges' && (to === 'stages' || to === 'pipeline')) return `judges/ imports ${to}/`;
  // The test environments have one surface: nothing outside core/env reaches into its parts.
  if (target.startsWith('core/env/') && target !== 'core/env/index.ts' && !file.startsWith('core/env/')) return 'core/env is used only through core/env/index.ts';
  if (['pipeline', 'scripts', 'bench'].includes(from) && to === 'stages' && !isStageIndex(target)) return `${from}/ reaches into stages/${stageOf(target)} (only its index.ts is public)`;
  return null;
}

/** Every import in `files` (project-relative path -> text) that breaks the layering. Bare packages are not checked. */
function violations(files: ReadonlyMap<string, string>): Violation[] {
  const out: Violation[] = [];
  for (const [file, text] of files) {
    for (const specifier of importSpecifiers(text)) {
      if (!specifier.startsWith('.')) continue;
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier));
      const rule = ruleBroken(file, target);
      if (rule) out.push({ file, specifier, rule });
    }
  }
  return out;
}

function sourceFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (rel: string): void => {
    for (const e of readdirSync(path.join(PROJECT_ROOT, rel), { withFileTypes: true })) {
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const child = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(child);
      else if (e.isFile() && e.name.endsWith('.ts')) files.set(child, readFileSync(path.join(PROJECT_ROOT, child), 'utf8'));
    }
  };
  for (const dir of SOURCE_DIRS) walk(dir);
  return files;
}

describe('architecture', () => {
  it('the tree keeps its layering (core at the bottom, stages public only through index.ts, no test/ imports)', () => {
    const files = sourceFiles();
    expect(files.size).toBeGreaterThan(50);
    // The scan reads the real files: the composition's imports of the stages are seen.
    expect(importSpecifiers(files.get('pipeline/registry.ts')!)).toContain('../stages/discover/index.ts');
    expect(violations(files).map((v) => `${v.file}: '${v.specifier}' — ${v.rule}`)).toEqual([]);
  });

  it('configuration has one owner: nothing but core/foundation/config.ts reads process.env', () => {
    // bench/ is a harness: it hands the environment to the processes it measures.
    const readers = [...sourceFiles()].filter(([file, text]) => file !== 'core/foundation/config.ts' && !file.startsWith('bench/') && /\bprocess\.env\b/.test(text.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, ''))).map(([f]) => f);
    expect(readers).toEqual([]);
  });

  it('the scanner sees every import form, type-only and dynamic ones included', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from '../b.ts';",
      'import {',
      '  c,',
      '  type D,',
      "} from './c.ts';",
      "import './side-effect.ts';",
      "export { e } from './e.ts';",
      "export * from './f.ts';",
      "export type { G } from './g.ts';",
      "const h = await import('./h.ts');",
      'type I = import("./i.ts").I;',
      "import * as ns from 'zod';",
      "// import { old } from './commented.ts';",
      "/* import { older } from './block-commented.ts'; */",
      "const url = 'http://example.com/x'; const s = 'import nothing from here';",
    ].join('\n');
    expect(importSpecifiers(text).sort()).toEqual(
      ['./a.ts', '../b.ts', './c.ts', './side-effect.ts', './e.ts', './f.ts', './g.ts', './h.ts', './i.ts', 'zod'].sort(),
    );
  });

  it('each rule catches its violation, naming file and specifier', () => {
    const files = new Map<string, string>([
      ['core/foundation/git.ts', "import { x } from '../../stages/szz/index.ts';\nimport type { Y } from '../../bench/y.ts';"],
      ['core/foundation/model/chain.ts', "import { helper } from '../../../test/helpers/git-repo.ts';\nimport { decide } from '../../attribution/decide.ts';"],
      ['core/foundation/config.ts', "import { BISECT_DEFAULTS } from '../attribution/defaults.ts';\nimport { ForesightError } from './errors.ts';"],
      ['core/history/mainline.ts', "import { runGit } from '../foundation/git.ts';\nimport type { Source } from '../sources/types.ts';"],
      ['core/env/era.ts', "import { extractChain } from '../extract/chain.ts';\nimport { openQueue } from '../queue/index.ts';"],
      ['core/widgets/a.ts', "import { ForesightError } from '../foundation/errors.ts';"],
      ['core/loose.ts', "import { ForesightError } from './foundation/errors.ts';"],
      ['bench/szz.ts', "import { attributeFix } from '../stages/szz/attribute.ts';\nimport { szzStage } from '../stages/szz/index.ts';"],
      ['stages/szz/index.ts', "import { sources } from '../discover/sources.ts';\nimport { discoverStage } from '../discover/index.ts';\nimport { pick } from './pick.ts';"],
      ['stages/extract/context.ts', "const m = await import('../validate/run-chain.ts');"],
      ['judges/fairness/index.ts', "import type { Chain } from '../../stages/szz/pick.ts';\nimport { runStage } from '../../pipeline/run-stage.ts';"],
      ['pipeline/bin.ts', "export { attributeFix } from '../stages/szz/attribute.ts';\nimport { szzStage } from '../stages/szz/index.ts';"],
      ['scripts/x.ts', "import { fakeGithub } from '../test/helpers/fake-github.ts';"],
      ['core/foundation/ok.ts', "import { ForesightError } from './errors.ts';\nimport { z } from 'zod';"],
      ['stages/validate/index.ts', "import { openChainEnv } from '../../core/env/container/chain-env.ts';\nimport { EnvImages } from '../../core/env/index.ts';"],
    ]);
    const found = violations(files).map((v) => `${v.file} ${v.specifier}`);
    expect(found.sort()).toEqual(
      [
        'core/foundation/git.ts ../../stages/szz/index.ts',
        'core/foundation/git.ts ../../bench/y.ts',
        'core/foundation/model/chain.ts ../../../test/helpers/git-repo.ts',
        'core/foundation/model/chain.ts ../../attribution/decide.ts',
        'core/foundation/config.ts ../attribution/defaults.ts',
        'core/history/mainline.ts ../sources/types.ts',
        'core/env/era.ts ../queue/index.ts',
        'core/widgets/a.ts ../foundation/errors.ts',
        'core/loose.ts ./foundation/errors.ts',
        'bench/szz.ts ../stages/szz/attribute.ts',
        'stages/szz/index.ts ../discover/sources.ts',
        'stages/extract/context.ts ../validate/run-chain.ts',
        'judges/fairness/index.ts ../../stages/szz/pick.ts',
        'judges/fairness/index.ts ../../pipeline/run-stage.ts',
        'pipeline/bin.ts ../stages/szz/attribute.ts',
        'scripts/x.ts ../test/helpers/fake-github.ts',
        'stages/validate/index.ts ../../core/env/container/chain-env.ts',
      ].sort(),
    );
  });
});
