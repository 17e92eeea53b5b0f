/**
 * Ups people care about (issue 25), the rest: each server's period digest (an outbox row per
 * server and period, posted once at the period's end in the server's time zone), its live
 * leaderboard (one message kept up to date, edited at most once a minute), and its reward roles
 * (the roles, and every grant and removal: an outbox row each, done once).
 */
import type { Kysely, Migration } from 'kysely';
import { outboxColumns } from './columns.js';

export const digestsRewards: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('guild_settings').addColumn('digest_channel_id', 'text').execute();
    await db.schema.alterTable('guild_settings').addColumn('digest_period', 'text').execute();
    await db.schema.alterTable('guild_settings').addColumn('live_channel_id', 'text').execute();

    await db.schema
      .createTable('digests')
      .addColumn('id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('period_start', 'bigint', (c) => c.notNull())
      .addColumn('period_end', 'bigint', (c) => c.notNull())
      .addColumn('time_zone', 'text', (c) => c.notNull())
      .addColumn('due_at', 'bigint', (c) => c.notNull())
      .$call(outboxColumns)
      .execute();
    await db.schema.createIndex('digests_state_due_at').on('digests').columns(['state', 'due_at']).execute();
    await db.schema.createIndex('digests_guild_id').on('digests').column('guild_id').execute();

    await db.schema
      .createTable('live_boards')
      .addColumn('guild_id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('message_id', 'text')
      .addColumn('content_hash', 'text')
      .addColumn('due_at', 'bigint', (c) => c.notNull())
      .addColumn('changed_at', 'bigint')
      .addColumn('shown_at', 'bigint')
      .addColumn('edited_at', 'bigint')
      .$call(outboxColumns)
      .execute();
    await db.schema
      .createIndex('live_boards_state_due_at')
      .on('live_boards')
      .columns(['state', 'due_at'])
      .execute();

    await db.schema
      .createTable('reward_roles')
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('role_id', 'text', (c) => c.notNull())
      .addColumn('ups', 'integer')
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('reward_roles_pkey', ['guild_id', 'role_id'])
      .execute();

    await db.schema
      .createTable('reward_grants')
      .addColumn('id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('role_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('period_key', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('due_at', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .$call(outboxColumns)
      .execute();
    await db.schema
      .createIndex('reward_grants_state_due_at')
      .on('reward_grants')
      .columns(['state', 'due_at'])
      .execute();
    await db.schema
      .createIndex('reward_grants_guild_role')
      .on('reward_grants')
      .columns(['guild_id', 'role_id', 'action'])
      .execute();
  },
};
