import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readJsonl } from '../../core/foundation/artifacts.ts';
import { codeClosure, packageName, type CodeClosure } from '../../core/foundation/code-closure.ts';
import { loadConfig } from '../../core/foundation/config.ts';
import { ForesightError } from '../../core/foundation/errors.ts';
import { fingerprint } from '../../core/foundation/fingerprint.ts';
import { silentLogger } from '../../core/foundation/log.ts';
import type { StageDef, StageName } from '../../core/foundation/stage.ts';
import { PROJECT_ROOT } from '../../core/foundation/version.ts';
import { STAGE_DEFS } from '../../pipeline/registry.ts';
import { runStage, stageOutputPath, type StageResult } from '../../pipeline/run-stage.ts';

/** Write files (path -> content) under a root, creating folders. */
async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, rel)), { recursive: true });
    await writeFile(join(root, rel), text);
  }
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

describe('the real stages: each closure contains what the stage runs', () => {
  // Computed once per stage, on first use: a stage that does not build fails its own tests only.
  const memo = new Map<StageName, Promise<CodeClosure>>();
  const closure = (stage: StageName): Promise<CodeClosure> => {
    if (!memo.has(stage)) memo.set(stage, codeClosure(STAGE_DEFS.get(stage)!.entry, PROJECT_ROOT));
    return memo.get(stage)!;
  };
  const files = async (stage: StageName) => (await closure(stage)).files;
  const all = async () => Promise.all([...STAGE_DEFS.keys()].map(async (name) => [name, await closure(name)] as const));

  it('every stage closure starts at its own index.ts', async () => {
    for (const name of STAGE_DEFS.keys()) expect(await files(name), name).toContain(`stages/${name}/index.ts`);
  });

  it('discover: the file classifier and the mainline history', async () => {
    expect(await files('discover')).toContain('core/foundation/files.ts');
    expect(await files('discover')).toContain('core/history/mainline.ts');
  });

  it('extract: the git helpers', async () => {
    expect(await files('extract')).toContain('core/foundation/git.ts');
  });

  it('judge: the judges it applies', async () => {
    expect(await files('judge')).toContain('judges/eligibility/index.ts');
  });

  it('validate: the runner scripts, the base image script and the recipes it reads at run time', async () => {
    const v = await closure('validate');
    for (const f of [
      'core/env/runners/pytest/run_state.sh',
      'core/env/runners/checkout.sh',
      'core/env/image/build-base-image.sh',
      'core/env/recipes/demo__minilib.json',
    ]) {
      expect(v.runtimeFiles, f).toContain(f);
      expect(v.files, f).toContain(f);
    }
  });

  it('the packages are named with their installed versions; node builtins are not packages', async () => {
    const zod = JSON.parse(readFileSync(join(PROJECT_ROOT, 'node_modules/zod/package.json'), 'utf8')) as { version: string };
    for (const [name, c] of await all()) {
      expect(c.packages, name).toContain(`zod@${zod.version}`);
      for (const p of c.packages) expect(p, name).toMatch(/^(@[^/@]+\/)?[^/@]+@\S+$/);
      expect(c.packages.some((p) => p.startsWith('node:')), name).toBe(false);
    }
  });

  it('no closure contains test or bench files', async () => {
    for (const [name, c] of await all()) {
      expect(c.files.filter((f) => f.startsWith('test/') || f.startsWith('bench/')), name).toEqual([]);
    }
  });
});

describe('codeClosure on a throw-away project', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'foresight-closure-'));
    await writeTree(root, {
      'a/index.ts': [
        "import { mid } from '../lib/mid.ts';",
        "import type { Shape } from '../lib/types.ts';",
        "import { readFileSync } from 'node:fs';",
        "import { join } from 'path';",
        "import { thing } from 'fakepkg/sub/path';",
        "import { other } from '@scope/pkg/deep';",
        "const DATA = new URL('./data/', import.meta.url);",
        'const SCRIPT = new URL("../scripts/run.sh", import.meta.url);',
        'const tpl = (n: string) => new URL(`../templates/${n}.txt`, import.meta.url);',
        "const OUT = new URL('./generated.json', import.meta.url); // written later, not read",
        'export const shape: Shape = { v: mid };',
        'export const all = [DATA, SCRIPT, tpl, OUT, readFileSync, join, thing, other];',
        '',
      ].join('\n'),
      'lib/mid.ts': "import { deep } from './deep.ts';\nexport const mid = deep * 10;\n",
      'lib/deep.ts': 'export const deep = 1;\n',
      'lib/types.ts': 'export interface Shape { v: number }\n',
      'a/data/one.json': '{"x": 1}\n',
      'a/data/nested/two.txt': 'two\n',
      'a/data/.swap': 'editor junk\n',
      'scripts/run.sh': 'echo run\n',
      'scripts/unread.sh': 'echo nobody reads me\n',
      'templates/x.txt': 'x\n',
      'other.ts': 'export const other = 1;\n',
      'node_modules/fakepkg/package.json': '{"name": "fakepkg", "version": "2.0.0"}\n',
      'node_modules/@scope/pkg/package.json': '{"name": "@scope/pkg", "version": "1.0.0"}\n',
    });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const closureOfA = () => codeClosure(pathToFileURL(join(root, 'a/index.ts')).href, root);

  it('lists runtime imports, the files they read and the packages, and leaves out type-only imports', async () => {
    const c = await closureOfA();
    expect(c.modules).toEqual(['a/index.ts', 'lib/deep.ts', 'lib/mid.ts']);
    expect(c.runtimeFiles).toEqual(['a/data/nested/two.txt', 'a/data/one.json', 'scripts/run.sh', 'templates/x.txt']);
    expect(c.files).toEqual([...c.modules, ...c.runtimeFiles].sort());
    expect(c.packages).toEqual(['@scope/pkg@1.0.0', 'fakepkg@2.0.0']);
  });

  it('a change deep in the closure, in a file it reads, or in a package version changes the fingerprint', async () => {
    const base = (await closureOfA()).fingerprint;
    await writeFile(join(root, 'lib/deep.ts'), 'export const deep = 2;\n');
    const afterDeep = (await closureOfA()).fingerprint;
    expect(afterDeep).not.toBe(base);
    await writeFile(join(root, 'a/data/nested/two.txt'), 'TWO\n');
    const afterData = (await closureOfA()).fingerprint;
    expect(afterData).not.toBe(afterDeep);
    await writeFile(join(root, 'node_modules/@scope/pkg/package.json'), '{"name": "@scope/pkg", "version": "1.0.1"}\n');
    expect((await closureOfA()).fingerprint).not.toBe(afterData);
  });

  it('a change outside the closure (an unrelated module, a type-only import, an unread file) leaves the fingerprint alone', async () => {
    const base = await closureOfA();
    await writeFile(join(root, 'other.ts'), 'export const other = 2;\n');
    await writeFile(join(root, 'lib/types.ts'), 'export interface Shape { v: number; w?: string }\n');
    await writeFile(join(root, 'scripts/unread.sh'), 'echo changed\n');
    await writeFile(join(root, 'a/data/.swap'), 'more junk\n');
    expect((await closureOfA()).fingerprint).toBe(base.fingerprint);
  });

  it('an import that does not resolve is a ForesightError naming it', async () => {
    await writeFile(join(root, 'lib/mid.ts'), "import { deep } from './gone.ts';\nexport const mid = deep;\n");
    const err = await caught(closureOfA());
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toContain('./gone.ts');
    expect((err as ForesightError).message).toContain('lib/mid.ts');
  });

  it('a package that is not installed is a ForesightError naming the package and the importer', async () => {
    await rm(join(root, 'node_modules/fakepkg'), { recursive: true });
    const err = await caught(closureOfA());
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toBe('package fakepkg, imported by a/index.ts, is not installed');
  });

  it('a runtime file outside the project is a ForesightError (it could not be fingerprinted with the project)', async () => {
    await writeFile(join(root, 'other.ts'), "export const up = new URL('../../', import.meta.url);\n");
    const err = await caught(codeClosure(join(root, 'other.ts'), root));
    expect(err).toBeInstanceOf(ForesightError);
    expect((err as ForesightError).message).toContain('other.ts reads');
  });

  it('packageName keeps the scope and drops the subpath', () => {
    expect(packageName('zod')).toBe('zod');
    expect(packageName('zod/v4')).toBe('zod');
    expect(packageName('@scope/x')).toBe('@scope/x');
    expect(packageName('@scope/x/sub/deep')).toBe('@scope/x');
  });
});

describe('runStage follows the code closure (a throw-away project, the real runner)', () => {
  const REPO = 'acme/closure';
  const Rec = z.object({ id: z.string(), value: z.number() });
  type Rec = z.infer<typeof Rec>;
  let code: string;
  let data: string;
  let runs: string[];

  /**
   * Load a module and everything it imports fresh, so a stage's output follows the code's current text:
   * each tsImport loads into a namespace of its own (vitest's own loader would reuse the imported modules).
   */
  const load = async <T,>(rel: string): Promise<T> => (await tsImport(pathToFileURL(join(code, rel)).href, import.meta.url)) as T;

  // The first two stage names: the runner chains a stage to the one before it in STAGES.
  const aStage = (): StageDef<never, Rec> => ({
    name: 'discover',
    entry: pathToFileURL(join(code, 'a/index.ts')).href,
    config: () => null,
    input: null,
    output: Rec,
    source: async () => fingerprint('the repository, unchanged'),
    async run() {
      runs.push('a');
      const { produce } = await load<{ produce: () => Rec[] }>('a/index.ts');
      return { items: produce(), stats: {} };
    },
  });
  const bStage = (): StageDef<Rec, Rec> => ({
    name: 'szz',
    entry: pathToFileURL(join(code, 'b/index.ts')).href,
    config: () => null,
    input: Rec,
    output: Rec,
    async run(items, ctx) {
      runs.push('b');
      const { scale } = await load<{ scale: number }>('b/index.ts');
      const out = await ctx.forEach(items, { id: (i) => i.id, label: 'scaling' }, async (i) => ({ id: i.id, value: i.value * scale }));
      return { items: out, stats: {} };
    },
  });

  const opts = () => ({ dataRoot: data, repo: { name: REPO, clone: code }, config: loadConfig({}), log: silentLogger, codeRoot: code });
  const runBoth = async (): Promise<[StageResult['outcome'], StageResult['outcome']]> => [
    (await runStage(aStage(), opts())).outcome,
    (await runStage(bStage(), opts())).outcome,
  ];

  beforeEach(async () => {
    code = await mkdtemp(join(tmpdir(), 'foresight-closure-code-'));
    data = await mkdtemp(join(tmpdir(), 'foresight-closure-data-'));
    runs = [];
    await writeTree(code, {
      // ESM, as this project is: tsx would otherwise load the modules as CommonJS, cached for the process.
      'package.json': '{"type": "module"}\n',
      'a/index.ts': "import { mid } from '../lib/mid.ts';\nexport const produce = () => [{ id: 'x', value: mid }, { id: 'y', value: mid + 1 }];\n",
      'lib/mid.ts': "import { deep } from './deep.ts';\nexport const mid = deep * 10;\n",
      'lib/deep.ts': 'export const deep = 1;\n',
      'b/index.ts': 'export const scale = 2;\n',
      'other.ts': 'export const other = 1;\n',
    });
    expect(await runBoth()).toEqual(['ran', 'ran']);
    runs = [];
  });
  afterEach(async () => {
    await rm(code, { recursive: true, force: true });
    await rm(data, { recursive: true, force: true });
  });

  const bOutput = () => readJsonl(stageOutputPath(data, REPO, 'szz'), Rec);

  it('an unchanged rerun does no work', async () => {
    expect(await runBoth()).toEqual(['up-to-date', 'up-to-date']);
    expect(runs).toEqual([]);
  });

  it('a change deep in a stage closure reruns that stage, then the next one (its upstream output changed)', async () => {
    expect(await bOutput()).toEqual([{ id: 'x', value: 20 }, { id: 'y', value: 22 }]);
    await writeFile(join(code, 'lib/deep.ts'), 'export const deep = 3;\n');
    expect(await runBoth()).toEqual(['ran', 'ran']);
    expect(runs).toEqual(['a', 'b']);
    expect(await bOutput()).toEqual([{ id: 'x', value: 60 }, { id: 'y', value: 62 }]);
  });

  it("a change to the second stage's own module reruns only it", async () => {
    await writeFile(join(code, 'b/index.ts'), 'export const scale = 5;\n');
    expect(await runBoth()).toEqual(['up-to-date', 'ran']);
    expect(await bOutput()).toEqual([{ id: 'x', value: 50 }, { id: 'y', value: 55 }]);
  });

  it('a change to a module no stage imports reruns nothing', async () => {
    await writeFile(join(code, 'other.ts'), 'export const other = 2;\n');
    expect(await runBoth()).toEqual(['up-to-date', 'up-to-date']);
    expect(runs).toEqual([]);
  });
});
