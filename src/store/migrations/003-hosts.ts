/**
 * What several hosts of one bot share (issue 15): each shard's numbers and which host runs it,
 * leases (the statistics leader) with their fencing tokens, and the IDENTIFY turns of each
 * max_concurrency bucket. Times are on the database's clock (epoch ms).
 */
import type { Kysely, Migration } from 'kysely';

export const hosts: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('shard_states')
      .addColumn('shard_id', 'bigint', (c) => c.notNull().primaryKey())
      .addColumn('host', 'text', (c) => c.notNull())
      .addColumn('shard_count', 'bigint', (c) => c.notNull())
      .addColumn('ready', 'bigint', (c) => c.notNull())
      .addColumn('guilds', 'bigint', (c) => c.notNull())
      .addColumn('members', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('leases')
      .addColumn('name', 'text', (c) => c.notNull().primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('token', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('last_done_at', 'bigint')
      .execute();

    await db.schema
      .createTable('identify_turns')
      .addColumn('bucket', 'bigint', (c) => c.notNull().primaryKey())
      .addColumn('next_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
