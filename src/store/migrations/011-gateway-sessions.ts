/**
 * Gateway sessions that outlive the process: each shard's Discord gateway session (its id, last
 * sequence and resume address, with what READY said of the bot) and a snapshot of its guilds
 * (a JSON packet each), so that the next process resumes the session and restores the guilds
 * instead of identifying again (store/gateway-sessions.ts).
 */
import type { Kysely, Migration } from 'kysely';

export const gatewaySessions: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('gateway_sessions')
      .addColumn('shard_id', 'integer', (c) => c.notNull().primaryKey())
      .addColumn('shard_count', 'integer', (c) => c.notNull())
      .addColumn('session_id', 'text', (c) => c.notNull())
      .addColumn('sequence', 'bigint', (c) => c.notNull())
      .addColumn('resume_url', 'text', (c) => c.notNull())
      .addColumn('identity', 'text', (c) => c.notNull())
      .addColumn('saved_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('gateway_guilds')
      .addColumn('guild_id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('shard_id', 'integer', (c) => c.notNull())
      .addColumn('packet', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('gateway_guilds_shard').on('gateway_guilds').column('shard_id').execute();
  },
};
