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
    // Two files per core, at most six: most tests wait on child processes, sockets and timers, so
    // two per core keep the cores busy (2 cores, a fresh clone: 336 s with three files at a time
    // and 39% of the CPU idle, 299 s with four and 15% idle; two took 759 s before the hostile
    // volumes moved to unit tests). Six at most keeps the bots' PostgreSQL pools (10 each, three
    // hosts in the longest files) under the server's 100 connections. The tests that measure
    // time allow for a busy machine.
    maxWorkers: Math.min(6, 2 * availableParallelism()),
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
