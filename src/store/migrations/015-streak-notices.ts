/**
 * A server's streak said when it breaks (issue 25): when a cooldown window's grace runs out with no
 * up, the streak it ends is announced in the server's reminder channel, once (an outbox row per
 * server and window).
 */
import type { Kysely, Migration } from 'kysely';
import { outboxColumns } from './columns.js';

export const streakNotices: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('streak_notices')
      .addColumn('id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('length', 'integer', (c) => c.notNull())
      .addColumn('ended_at', 'bigint', (c) => c.notNull())
      .$call(outboxColumns)
      .execute();
    await db.schema
      .createIndex('streak_notices_state_ended_at')
      .on('streak_notices')
      .columns(['state', 'ended_at'])
      .execute();
    await db.schema.createIndex('streak_notices_guild_id').on('streak_notices').column('guild_id').execute();
    // The look each minute: the windows whose grace just ran out, by next-up time.
    await db.schema.createIndex('reminders_next_up_at').on('reminders').column('next_up_at').execute();
  },
};
