/**
 * The ledger of the directory's rate limits that several processes share (rate-limit-ledger.ts).
 * Created on both engines, as every table is (one schema); only PostgreSQL uses it, SQLite
 * serving a single process.
 */
import type { Kysely, Migration } from 'kysely';

export const directoryLimits: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('directory_grants')
      .addColumn('id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('buckets', 'text', (c) => c.notNull())
      .addColumn('granted_at', 'bigint', (c) => c.notNull())
      .addColumn('settled_at', 'bigint')
      .addColumn('kept_until', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('directory_grants_kept_until')
      .on('directory_grants')
      .column('kept_until')
      .execute();

    await db.schema
      .createTable('directory_waiters')
      .addColumn('id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('priority', 'text', (c) => c.notNull())
      .addColumn('buckets', 'text', (c) => c.notNull())
      .addColumn('enqueued_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('directory_holds')
      .addColumn('bucket', 'text', (c) => c.notNull().primaryKey())
      .addColumn('until_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
