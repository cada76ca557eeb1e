import type { Runner } from './types.ts';

/** The requested test file a test id belongs to: the runner's rule, else (no rule, no runner) pytest's `<file>::...`. */
export function testFileOf(runner: Pick<Runner, 'testFileOf'> | null | undefined, id: string, testFiles: readonly string[]): string | null {
  return runner?.testFileOf?.(id, testFiles) ?? id.split('::')[0] ?? null;
}
