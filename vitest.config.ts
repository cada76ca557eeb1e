import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { defineConfig } from 'vitest/config';

const ROOT = import.meta.dirname;

/**
 * A file that talks to the Docker daemon or a redis-server it starts, or reads the run's shared demo (mined
 * through Docker). Every such file calls one of these: Docker tests skip through isDockerReachable.
 */
const USES_SERVICES = /\b(isDockerReachable|startRedis|minedDemoCopy)\b/;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return testFiles(path);
    return e.name.endsWith('.test.ts') ? [relative(ROOT, path)] : [];
  });
}

/** The files that need neither: they run side by side. */
const unit = testFiles(join(ROOT, 'test')).filter((f) => !USES_SERVICES.test(readFileSync(join(ROOT, f), 'utf8')));

const common = {
  testTimeout: 60_000,
  hookTimeout: 600_000,
  // The suite builds more env images than a run keeps (30): one run's end-of-run pruning would remove the
  // images of the shared demo and of other files' runs, which then rebuild with new ids (and new eval keys).
  env: { FORESIGHT_ENV_KEEP: '500' },
};

export default defineConfig({
  test: {
    // Once for both projects: one scratch directory and one shared demo per run.
    globalSetup: ['test/global-setup.ts'],
    projects: [
      // Runs first, two files at a time (most of their time is child processes: git, tsx, python).
      { test: { ...common, name: 'unit', include: unit, fileParallelism: true, maxWorkers: 2 } },
      // Then the rest one file at a time: they share one daemon on a 2-core machine, and time their runs.
      { test: { ...common, name: 'docker', include: ['test/**/*.test.ts'], exclude: unit, fileParallelism: false } },
    ],
  },
});
