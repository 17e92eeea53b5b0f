/**
 * Whether this test run has PostgreSQL. The probe (postgres-probe.ts, Vitest's globalSetup) tries
 * it once per run and, when it is missing and the run is not CI, hands the reason to every test
 * file through the environment; the PostgreSQL suites and cases `skipIf(!HAS_POSTGRES)`, the
 * engines' lists (ENGINES in test/store/places.ts) keep SQLite only, and the probe prints the one
 * line that says what was skipped. Read at import, so a file decides what it declares from it.
 *
 * Outside Vitest (the benchmarks import the places too) nothing sets it: PostgreSQL is expected.
 */

/** The variable the probe sets to why PostgreSQL cannot be used; unset when it can. */
export const POSTGRES_MISSING_VARIABLE = 'TEST_POSTGRES_MISSING';

/** Where the tests find PostgreSQL: trust authentication, user `root`, database `test`. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';

/** Why this run has no PostgreSQL, or undefined when it has one. */
export const POSTGRES_MISSING: string | undefined = process.env[POSTGRES_MISSING_VARIABLE] || undefined;

export const HAS_POSTGRES = POSTGRES_MISSING === undefined;

/** What a test that needs PostgreSQL and was not marked to skip without it fails with. */
export function requirePostgres(what: string): void {
  if (HAS_POSTGRES) return;
  throw new Error(
    `${what} needs PostgreSQL, which this run has not (${POSTGRES_MISSING}): ` +
      'mark the test or suite skipIf(!HAS_POSTGRES) (test/support/postgres.ts)',
  );
}
