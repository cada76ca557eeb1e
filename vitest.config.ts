import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 600_000,
    // Docker-backed tests share one daemon and a 2-core machine: run files one at a time.
    fileParallelism: false,
  },
});
