/**
 * A row's `language`, from its runner: Go's runner is Go; a JavaScript runner's rows are TypeScript when
 * the chain's tests are TypeScript files (`.ts`, `.tsx`, `.mts`, `.cts`), else JavaScript; pytest's and
 * Django's are Python.
 */
const JS_RUNNERS: ReadonlySet<string> = new Set(['jest', 'vitest', 'mocha']);

export type RowLanguage = 'python' | 'javascript' | 'typescript' | 'go';

export function rowLanguage(runner: string, testFiles: readonly string[]): RowLanguage {
  if (runner === 'go') return 'go';
  if (JS_RUNNERS.has(runner)) return testFiles.some((f) => /\.[cm]?tsx?$/.test(f)) ? 'typescript' : 'javascript';
  return 'python';
}
