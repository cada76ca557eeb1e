/**
 * The fingerprint of what a module runs, so a stage's cache key follows its code without a hand-kept
 * list of paths (hand lists missed files, and results went stale silently).
 *
 * The closure is the module's transitive runtime imports as esbuild's bundler resolves them
 * (type-only imports drop out: they do not change what runs), plus
 *  - the runtime files those modules read, found as `new URL('<literal>', import.meta.url)` in their
 *    text (a file, or a directory whose files are all included: runner scripts, recipes, shell
 *    primitives), and
 *  - `name@version` of every npm package they import (node: builtins excluded).
 * It takes tens of milliseconds, so it is computed per run and never cached.
 */
import { createHash } from 'node:crypto';
import { readFile, readdir, stat } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { ForesightError } from './errors.ts';
import type { Fingerprint } from './fingerprint.ts';

export interface CodeClosure {
  fingerprint: Fingerprint;
  /** Project-relative paths (posix separators, sorted) of the modules esbuild resolved, the entry included. */
  modules: string[];
  /** Project-relative paths (sorted) of the files the modules read at run time. */
  runtimeFiles: string[];
  /** Every hashed file: `modules` and `runtimeFiles`, sorted. */
  files: string[];
  /** `name@version` of each npm package imported (sorted). */
  packages: string[];
}

/**
 * `new URL('<literal>', import.meta.url)`, the literal in single, double or back quotes. A template
 * with `${...}` keeps only its static head: `../runners/${name}/` stands for the folder `../runners/`.
 */
const RUNTIME_URL = /new\s+URL\(\s*(?:'([^'\n]*)'|"([^"\n]*)"|`([^`]*)`)\s*,\s*import\.meta\.url\s*\)/g;

/** The closure of `entry` (a file: URL or an absolute path), paths relative to `root` (the project). */
export async function codeClosure(entry: string, root: string): Promise<CodeClosure> {
  const entryPath = entry.startsWith('file:') ? fileURLToPath(entry) : path.resolve(entry);
  const absRoot = path.resolve(root);
  const metafile = await bundleInputs(entryPath, absRoot);

  const modules = new Set<string>();
  const runtime = new Set<string>();
  const packages = new Set<string>();
  for (const [input, info] of Object.entries(metafile.inputs)) {
    const abs = path.resolve(absRoot, input);
    modules.add(relativeTo(absRoot, abs));
    const text = await readFile(abs, 'utf8');
    for (const rel of await runtimeReads(abs, text, absRoot)) runtime.add(rel);
    for (const imp of info.imports) {
      if (!imp.external || isBuiltin(imp.path) || imp.path.startsWith('.') || path.isAbsolute(imp.path)) continue;
      packages.add(await packageVersion(packageName(imp.path), abs, input));
    }
  }

  const files = [...new Set([...modules, ...runtime])].sort();
  const pkgs = [...packages].sort();
  // Bytes, not text: a runtime file need not be UTF-8.
  const h = createHash('sha256');
  for (const f of files) h.update(`file\0${f}\0`).update(await readFile(path.join(absRoot, f))).update('\0');
  for (const p of pkgs) h.update(`package\0${p}\0`);
  return {
    fingerprint: h.digest('hex') as Fingerprint,
    modules: [...modules].sort(),
    runtimeFiles: [...runtime].sort(),
    files,
    packages: pkgs,
  };
}

async function bundleInputs(entryPath: string, absRoot: string): Promise<Metafile> {
  try {
    const result = await build({
      entryPoints: [entryPath],
      absWorkingDir: absRoot,
      bundle: true,
      write: false,
      metafile: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'silent',
    });
    return result.metafile;
  } catch (err) {
    const first = (err as { errors?: { text: string; location?: { file: string; line: number } | null }[] }).errors?.[0];
    const where = first?.location ? ` (${first.location.file}:${first.location.line})` : '';
    throw new ForesightError(`cannot compute the code closure of ${entryPath}: ${first?.text ?? (err as Error).message}${where}`, {
      remedy: 'fix the import named above (the module must load for the stage to run at all)',
      cause: err,
    });
  }
}

/** The project-relative files a module reads through `new URL(..., import.meta.url)`. */
async function runtimeReads(modulePath: string, text: string, absRoot: string): Promise<string[]> {
  const out: string[] = [];
  for (const m of text.matchAll(RUNTIME_URL)) {
    let literal = m[1] ?? m[2] ?? m[3] ?? '';
    // Only a back-quoted template has holes (`${` in quotes is text, e.g. this module's own error message).
    const dynamic = m[3] === undefined ? -1 : literal.indexOf('${');
    // Only the static head of a template is known: its folder stands for every file the template can name.
    if (dynamic >= 0) literal = literal.slice(0, literal.slice(0, dynamic).lastIndexOf('/') + 1) || './';
    const target = fileURLToPath(new URL(literal, pathToFileURL(modulePath)));
    const rel = relativeTo(absRoot, target);
    if (rel.startsWith('../') || path.isAbsolute(rel)) {
      throw new ForesightError(`${relativeTo(absRoot, modulePath)} reads ${target} (new URL('${m[1] ?? m[2] ?? m[3]}', import.meta.url)), outside the project ${absRoot}`, {
        remedy: 'keep the files a module reads at run time inside the project, so they are part of its code fingerprint',
      });
    }
    const info = await stat(target).catch(() => null);
    // A file the module will create (or never touch) has no content yet: nothing to hash.
    if (!info) continue;
    if (info.isDirectory()) out.push(...(await filesUnder(target)).map((f) => relativeTo(absRoot, f)));
    else if (info.isFile()) out.push(rel);
  }
  return out;
}

/** Every file under a directory, skipping node_modules and dot-files (caches, editors' swap files). */
async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const full = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(full)));
    else if (e.isFile()) out.push(full);
  }
  return out;
}

/** `zod/v4` -> `zod`, `@scope/x/sub` -> `@scope/x`. */
export function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** `name@version` of the package as Node resolves it from the importing module (nearest node_modules up). */
async function packageVersion(name: string, importer: string, importerRel: string): Promise<string> {
  for (let dir = path.dirname(importer); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'node_modules', name, 'package.json');
    const text = await readFile(manifest, 'utf8').catch(() => null);
    if (text !== null) {
      const version = (JSON.parse(text) as { version?: unknown }).version;
      return `${name}@${typeof version === 'string' ? version : 'unversioned'}`;
    }
    if (path.dirname(dir) === dir) break;
  }
  throw new ForesightError(`package ${name}, imported by ${importerRel}, is not installed`, {
    remedy: 'install the dependencies (npm ci), or add the package to package.json',
  });
}

function relativeTo(root: string, file: string): string {
  return path.relative(root, file).split(path.sep).join('/');
}
