import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 600_000,
    // Docker-backed tests share one daemon and a 2-core machine: run files one at a time.
    fileParallelism: false,
    // The suite builds more env images than a run keeps (30): one run's end-of-run pruning would remove the
    // images of the shared demo and of other files' runs, which then rebuild with new ids (and new eval keys).
    env: { FORESIGHT_ENV_KEEP: '500' },
  },
});
