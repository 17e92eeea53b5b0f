import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    // Two files at a time: most tests wait on child processes, sockets and timers, and one worker
    // left a core idle (npm test: 540 s with one on the 2-core CI machine, 314 s with two). The
    // tests that measure time allow for a busy machine.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Unhandled rejections fail the run: a test suite that tolerates them hides the bugs we promise not to have.
    dangerouslyIgnoreUnhandledErrors: false,
  },
});
