import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A directory shared by every test file of one run (test/helpers/demo.ts keeps the mined demo there). */
    sharedDir: string;
  }
}

/** One scratch directory for the whole run, removed at its end. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'foresight-test-shared-'));
  project.provide('sharedDir', dir);
  return () => rm(dir, { recursive: true, force: true });
}
