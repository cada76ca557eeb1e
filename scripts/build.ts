/**
 * `npm run build`: the installable CLI in dist/.
 *  1. tsc compiles core/, judges/, stages/ and pipeline/ (tsconfig.build.json; `.ts` specifiers become `.js`);
 *  2. the files modules read at run time through `new URL('…', import.meta.url)` (runner scripts,
 *     checkout.sh, recipes, prompt templates, the base-image script) are copied beside the compiled
 *     modules, found the way stage fingerprints find them (core/foundation/code-closure.ts): a new runtime file
 *     ships without a list to keep;
 *  3. dist/pipeline/bin.js gets a `node` shebang (the source keeps its tsx one, for runs from the repository).
 * The compiled closure is then checked to read every copied file, so a package never ships half its files.
 */
import { spawnSync } from 'node:child_process';
import { chmod, copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { codeClosure } from '../core/foundation/code-closure.ts';
import { ForesightError, errorMessage } from '../core/foundation/errors.ts';
import { PROJECT_ROOT } from '../core/foundation/version.ts';

const DIST = 'dist';
const ENTRY = 'pipeline/bin.ts';

interface BuildResult {
  /** Compiled modules in the CLI's closure (project-relative, under dist/). */
  modules: number;
  /** Runtime files copied (project-relative, under dist/). */
  runtimeFiles: string[];
}

async function buildDist(root = PROJECT_ROOT): Promise<BuildResult> {
  const out = path.join(root, DIST);
  // A module deleted from the sources must not live on in the package.
  await rm(out, { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const res = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
  if (res.status !== 0) {
    throw new ForesightError(`tsc -p tsconfig.build.json failed (exit ${res.status ?? res.signal})`, { remedy: 'fix the type errors printed above, then rerun npm run build' });
  }

  // Compiled modules replace the .ts files a runtime folder (runners/, recipes/) also holds.
  const source = await codeClosure(path.join(root, ENTRY), root);
  const runtime = source.runtimeFiles.filter((f) => !f.endsWith('.ts'));
  for (const rel of runtime) {
    await mkdir(path.dirname(path.join(out, rel)), { recursive: true });
    // copyFile keeps the mode: run_state.sh stays executable.
    await copyFile(path.join(root, rel), path.join(out, rel));
  }

  const bin = path.join(out, ENTRY.replace(/\.ts$/, '.js'));
  const text = await readFile(bin, 'utf8');
  await writeFile(bin, `#!/usr/bin/env node\n${text.startsWith('#!') ? text.slice(text.indexOf('\n') + 1) : text}`);
  await chmod(bin, 0o755);

  const compiled = await codeClosure(bin, root);
  const expected = runtime.map((f) => `${DIST}/${f}`);
  const read = new Set(compiled.runtimeFiles);
  const missing = expected.filter((f) => !read.has(f));
  if (missing.length) {
    throw new ForesightError(`the compiled CLI does not read ${missing.join(', ')}, which the sources read at run time`, {
      remedy: 'keep runtime reads as new URL(<literal>, import.meta.url) beside the module, so the build copies them',
    });
  }
  return { modules: compiled.modules.length, runtimeFiles: expected };
}

try {
  const r = await buildDist();
  process.stdout.write(`built ${DIST}/: ${r.modules} modules in the CLI's closure, ${r.runtimeFiles.length} runtime files beside them\n`);
} catch (err) {
  process.stderr.write(`build: ${errorMessage(err)}\n`);
  process.exitCode = 1;
}
