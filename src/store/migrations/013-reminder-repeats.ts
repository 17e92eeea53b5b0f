/**
 * Reminders that follow through (issue 25): a heads-up before the up is possible and reminders
 * posted again until someone ups, each server's choice (off by default). The server's reminder row
 * keeps how far its cycle went: how many reminders were posted since the up became possible, and
 * when the heads-up was, so neither is posted twice.
 */
import { type Kysely, type Migration, sql } from 'kysely';

export const reminderRepeats: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('guild_settings').addColumn('reminder_early_ms', 'bigint').execute();
    await db.schema.alterTable('guild_settings').addColumn('reminder_repeat_ms', 'bigint').execute();
    await db.schema.alterTable('guild_settings').addColumn('reminder_repeat_times', 'integer').execute();
    await db.schema
      .alterTable('reminders')
      .addColumn('step', 'integer', (c) => c.notNull().defaultTo(sql`0`))
      .execute();
    await db.schema.alterTable('reminders').addColumn('heads_up_at', 'bigint').execute();
  },
};
