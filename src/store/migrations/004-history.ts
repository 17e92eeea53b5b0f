/**
 * Every successful up (issue 16): who raised which server when, the directory's up count after
 * it, and where it came from. Kept UP_HISTORY_DAYS (store/history.ts), deleted with a server's
 * settings when the bot leaves it. `id` makes recording idempotent: `bot:<interaction id>` for an
 * /up through this bot (a recovery after a restart records the same up under the same id).
 */
import type { Kysely, Migration } from 'kysely';

export const history: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('up_history')
      .addColumn('id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('up_count', 'bigint')
      .addColumn('source', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('up_history_guild_at').on('up_history').columns(['guild_id', 'at']).execute();
    await db.schema.createIndex('up_history_at').on('up_history').column('at').execute();
  },
};
