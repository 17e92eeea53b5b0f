/**
 * Vitest's globalSetup: tries PostgreSQL once per run, before any test file loads. Without one
 * (and not in CI) the files skip what needs it (test/support/postgres.ts) and the run ends with
 * one line naming what was skipped and how to start one; with CI=true a missing PostgreSQL fails
 * the run at once, saying why, rather than skipping half of it unnoticed.
 */
import pg from 'pg';
import { POSTGRES_MISSING_VARIABLE, TEST_DATABASE_URL } from './postgres.js';

/** Long enough for a server on this machine under load, short enough not to be felt. */
const PROBE_TIMEOUT_MS = 2_000;

/** Why PostgreSQL at `url` cannot be used, or undefined when a query goes through. */
async function probe(url: string): Promise<string | undefined> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: PROBE_TIMEOUT_MS,
    query_timeout: PROBE_TIMEOUT_MS,
  });
  // A server that drops the connection later must not take the runner down with it.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (err) {
    return err instanceof Error && err.message !== '' ? err.message : String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** CI services set CI=true (some CI=1); `CI=false` or `CI=0` is a developer's machine. */
function inCi(): boolean {
  const ci = (process.env.CI ?? '').trim().toLowerCase();
  return ci !== '' && ci !== 'false' && ci !== '0';
}

/** The URL without a password, as it may be printed. */
function shown(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(TEST_DATABASE_URL is not a URL)';
  }
}

/** A docker command that starts a server the tests can use at `url` (its port, user and database). */
function startCommand(url: string): string {
  let port = '5432';
  let user = 'root';
  let database = 'test';
  try {
    const parsed = new URL(url);
    port = parsed.port || port;
    user = decodeURIComponent(parsed.username) || user;
    database = decodeURIComponent(parsed.pathname.slice(1)) || database;
  } catch {
    // The defaults: the command for the URL the tests use unless told otherwise.
  }
  return (
    `docker run -d -p ${port}:5432 -e POSTGRES_HOST_AUTH_METHOD=trust ` +
    `-e POSTGRES_USER=${user} -e POSTGRES_DB=${database} postgres:15`
  );
}

export default async function setup(): Promise<(() => void) | undefined> {
  const url = TEST_DATABASE_URL;
  const missing = await probe(url);
  if (missing === undefined) return undefined;
  if (inCi()) {
    throw new Error(
      `CI=true needs PostgreSQL for the tests, and ${shown(url)} cannot be used: ${missing}. ` +
        `Start one: ${startCommand(url)}`,
    );
  }
  // Test files run in child processes, which inherit the environment as it is now.
  process.env[POSTGRES_MISSING_VARIABLE] = missing;
  // Printed once the run is over, beside the summary, where it is read.
  return () => {
    console.log(
      `PostgreSQL: skipped the tests on PostgreSQL (the store's and the bot's on PostgreSQL, several hosts, ` +
        `sharded mode, the REST proxy, their fault rows): ${shown(url)} cannot be used (${missing}); ` +
        `start one with \`${startCommand(url)}\` (or set TEST_DATABASE_URL) to run them; with CI=true they are required.`,
    );
  };
}
