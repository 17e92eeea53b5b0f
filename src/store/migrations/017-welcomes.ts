/**
 * The message posted on joining a server (features/setup/welcome.ts), once per server: a row is
 * written before it is posted, and a server that has one is not welcomed again, whichever process
 * hears the join and however often the bot is removed and invited back.
 */
import type { Kysely, Migration } from 'kysely';

export const welcomes: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('welcomes')
      .addColumn('guild_id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('claimed_at', 'bigint', (c) => c.notNull())
      .addColumn('channel_id', 'text')
      .addColumn('message_id', 'text')
      .execute();
  },
};
