import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A directory shared by every test file of one run (test/helpers/demo.ts keeps the mined demo there). */
    sharedDir: string;
  }
}

/**
 * One scratch directory for the whole run, removed at its end (kept, and named, with
 * FORESIGHT_KEEP_TEST_TMP=1). It is also the run's TMPDIR: the temp dirs of tests, of the CLIs they
 * spawn and of the tools those run land in it, so a run leaves nothing in the machine's /tmp, even
 * when a test fails before its own cleanup.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'foresight-test-shared-'));
  const tmp = join(dir, 'tmp');
  await mkdir(tmp);
  const before = process.env.TMPDIR;
  // Set before any test worker starts: workers, and every process they spawn, inherit it.
  process.env.TMPDIR = tmp;
  project.provide('sharedDir', dir);
  return async () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    if (process.env.FORESIGHT_KEEP_TEST_TMP === '1') process.stderr.write(`test scratch kept: ${dir}\n`);
    else await rm(dir, { recursive: true, force: true });
  };
}
