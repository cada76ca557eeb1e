/**
 * JavaScript and TypeScript modules in the demo's style (pipeline/demo/make-demo-repo.ts), one per runner,
 * each with one fix-chain planted:
 *
 *   #1 slugify -> #3 runs of whitespace gave empty segments ("Regression in #1")
 *   #2 clamp   (no fix)
 *
 * `jest`: CommonJS, tests in __tests__/; `vitest`: TypeScript ES modules, tests beside the code (src/*.test.ts);
 * `mocha`: CommonJS, tests in test/ with node:assert. The lockfile is made by the host's npm when the history
 * is built (`npm install --package-lock-only`, no install, no scripts), so the shas depend on the registry's
 * answer that day; the runner's version is pinned.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { DemoRepo, isolatedEnv, type Person } from '../../pipeline/demo/demo-git.ts';

const run = promisify(execFile);
const ALICE: Person = { name: 'Alice Maintainer', email: 'alice@example.com' };
const DAVE: Person = { name: 'Dave Kim', email: 'dave@example.com' };
const GRACE: Person = { name: 'Grace Liu', email: 'grace@example.com' };

export type JsRunnerKind = 'jest' | 'vitest' | 'mocha';

/** The pinned runner versions (Node 18+). */
export const JS_RUNNER_VERSIONS: Record<JsRunnerKind, string> = { jest: '29.7.0', vitest: '1.6.1', mocha: '10.8.2' };

interface Layout {
  src: string;
  test: string;
  module: 'commonjs' | 'module';
  code: (fns: string[]) => string;
  tests: (blocks: string[]) => string;
}

const fn = {
  normalizeSpace: { js: "function normalizeSpace(s) {\n  return s.split(/\\s+/).filter(Boolean).join(' ');\n}\n", ts: "export function normalizeSpace(s: string): string {\n  return s.split(/\\s+/).filter(Boolean).join(' ');\n}\n" },
  slugifyV1: { js: "function slugify(s) {\n  return s.trim().toLowerCase().split(' ').join('-');\n}\n", ts: "export function slugify(s: string): string {\n  return s.trim().toLowerCase().split(' ').join('-');\n}\n" },
  slugifyV2: { js: "function slugify(s) {\n  return s.toLowerCase().split(/\\s+/).filter(Boolean).join('-');\n}\n", ts: "export function slugify(s: string): string {\n  return s.toLowerCase().split(/\\s+/).filter(Boolean).join('-');\n}\n" },
  clamp: { js: 'function clamp(v, lo, hi) {\n  return Math.min(hi, Math.max(lo, v));\n}\n', ts: 'export function clamp(v: number, lo: number, hi: number): number {\n  return Math.min(hi, Math.max(lo, v));\n}\n' },
};

function layout(kind: JsRunnerKind): Layout {
  const cjs = (fns: string[]): string => `${fns.map((f) => fn[f as keyof typeof fn].js).join('\n')}\nmodule.exports = { ${fns.map((f) => f.replace(/V\d$/, '')).join(', ')} };\n`;
  const eq = kind === 'mocha' ? (a: string, b: string) => `assert.strictEqual(${a}, ${b})` : (a: string, b: string) => `expect(${a}).toBe(${b})`;
  const block = {
    normalizeSpace: `describe('normalizeSpace', () => {\n  it('collapses runs of whitespace', () => {\n    ${eq("normalizeSpace('  a \\t b  ')", "'a b'")};\n  });\n});\n`,
    slugifyBasic: `describe('slugify', () => {\n  it('joins words with hyphens', () => {\n    ${eq("slugify('Hello World')", "'hello-world'")};\n  });\n});\n`,
    slugifyWhitespace: `describe('slugify edge cases', () => {\n  it('collapses runs of whitespace', () => {\n    ${eq("slugify('a  b\\tc')", "'a-b-c'")};\n  });\n});\n`,
  };
  const pick = (blocks: string[]) => blocks.map((b) => block[b as keyof typeof block]).join('\n');
  switch (kind) {
    case 'jest':
      return { src: 'src/text.js', test: '__tests__/text.test.js', module: 'commonjs', code: cjs, tests: (b) => `const { normalizeSpace, slugify } = require('../src/text');\n\n${pick(b)}` };
    case 'mocha':
      return { src: 'lib/text.js', test: 'test/text.spec.js', module: 'commonjs', code: cjs, tests: (b) => `const assert = require('node:assert');\nconst { normalizeSpace, slugify } = require('../lib/text');\n\n${pick(b)}` };
    case 'vitest':
      return {
        src: 'src/text.ts',
        test: 'src/text.test.ts',
        module: 'module',
        code: (fns) => fns.map((f) => fn[f as keyof typeof fn].ts).join('\n'),
        tests: (b) => `import { describe, expect, it } from 'vitest';\nimport { normalizeSpace, slugify } from './text';\n\n${pick(b)}`,
      };
  }
}

function packageJson(kind: JsRunnerKind, module: 'commonjs' | 'module'): string {
  const test = { jest: 'jest', vitest: 'vitest run', mocha: 'mocha' }[kind];
  return `${JSON.stringify({ name: `demo-${kind}`, version: '1.0.0', private: true, type: module, scripts: { test }, engines: { node: '>=18' }, devDependencies: { [kind]: JS_RUNNER_VERSIONS[kind] } }, null, 2)}\n`;
}

/** Build the history in `dir` (created); resolves to the head sha. */
export async function makeJsDemoRepo(dir: string, kind: JsRunnerKind): Promise<{ head: string }> {
  const home = await mkdtemp(join(tmpdir(), 'js-demo-home-'));
  try {
    await mkdir(dir, { recursive: true });
    const repo = new DemoRepo(dir, isolatedEnv(home));
    await repo.git(['init', '--quiet', '-b', 'main', `--template=${home}`]);
    const l = layout(kind);
    const pkg = packageJson(kind, l.module);
    await writeFile(join(dir, 'package.json'), pkg);
    await run('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, maxBuffer: 64 * 1024 * 1024 });
    const lock = await readFile(join(dir, 'package-lock.json'), 'utf8');
    const clampFile = l.src.replace('text', 'num');
    await repo.commit({
      message: 'Initial commit',
      author: ALICE,
      files: { '.gitignore': 'node_modules/\n', 'package.json': pkg, 'package-lock.json': lock, [l.src]: l.code(['normalizeSpace']), [l.test]: l.tests(['normalizeSpace']) },
    });
    await repo.squashPr({
      author: DAVE,
      subject: 'Add slugify helper (#1)',
      body: 'slugify() lowercases a title and joins its words with hyphens, for use in URLs.',
      files: { [l.src]: l.code(['normalizeSpace', 'slugifyV1']), [l.test]: l.tests(['normalizeSpace', 'slugifyBasic']) },
    });
    await repo.squashPr({ author: GRACE, subject: 'Add clamp helper (#2)', body: 'clamp() limits a value to a closed range.', files: { [clampFile]: l.code(['clamp']) } });
    await repo.squashPr({
      author: GRACE,
      subject: 'Fix slugify producing empty segments (#3)',
      body: 'Regression in #1: "a  b" became "a--b".',
      files: { [l.src]: l.code(['normalizeSpace', 'slugifyV2']), [l.test]: l.tests(['normalizeSpace', 'slugifyBasic', 'slugifyWhitespace']) },
    });
    return { head: await repo.git(['rev-parse', 'HEAD']) };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
