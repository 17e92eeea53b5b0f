import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/support/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Tries PostgreSQL once per run: without one, its tests are skipped and one line says so
    // (CI=true requires it).
    globalSetup: ['./test/support/postgres-probe.ts'],
    pool: 'forks',
    // One file per core by default: most tests wait on child processes, sockets and timers, but
    // the longest files start bots of their own by the dozen (the fault suite's rows, three hosts,
    // kill -9 runs), and two of them at once per core overran their bounds on a slower machine
    // (2 cores, 2026-11-29: four at a time took 780 s with 6 to 13 files failing on time bounds,
    // the code before this change too; two at a time, 816 s and green but for one bound since
    // widened). On a faster machine four at a time took 392 s: TEST_WORKERS=4 says so. Six at most
    // keeps the bots' PostgreSQL pools under the server's 100 connections.
    maxWorkers: Math.min(6, Number(process.env.TEST_WORKERS) || availableParallelism()),
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
