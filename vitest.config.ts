import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/support/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    // Two files at a time: most tests wait on child processes, sockets and timers, and one worker
    // left a core idle (npm test: 540 s with one on the 2-core CI machine, 314 s with two). The
    // tests that measure time allow for a busy machine.
    maxWorkers: 2,
    // The longest files first (test/durations.json), so that none starts last on its own.
    sequence: { sequencer: LongestFirst },
    testTimeout: 20_000,
    // A hook that starts the real bot waits for its readiness up to START_BOUND_MS (60 s,
    // test/support/wait.ts) on a busy machine: the hook's own bound must not cut it first.
    hookTimeout: 90_000,
    // Unhandled rejections fail the run: a test suite that tolerates them hides the bugs we promise not to have.
    dangerouslyIgnoreUnhandledErrors: false,
  },
});
