/**
 * Brings a database's schema up to date with Kysely's Migrator and the in-code migration list.
 * PostgreSQL runs each migration in a transaction under an advisory lock (Kysely does both);
 * SQLite's caller wraps the whole run in one write transaction (see sqlite.ts).
 */
import type { Kysely } from 'kysely';
import { reason } from './errors.js';
import { Migrator } from './kysely.js';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

/** Throws an Error whose message says which migration failed and why. */
export async function migrateToLatest(db: Kysely<Database>, migrationTableSchema?: string): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    ...(migrationTableSchema === undefined ? {} : { migrationTableSchema }),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error === undefined) return;
  const failed = results?.find((r) => r.status === 'Error')?.migrationName;
  const unknown = /previously executed migration (\S+) is missing/.exec(reason(error))?.[1];
  const message = failed
    ? `migration ${failed} failed: ${reason(error)}`
    : unknown
      ? `the database has migration ${unknown}, which this version does not know (was it written by a newer one?)`
      : reason(error);
  throw new Error(message, { cause: error });
}
