/**
 * Streaks and reaction times (issue 25): each up keeps when it became possible (the cooldown's
 * end before it), and each server its time zone, whose calendar days a member's streak counts,
 * and its thank-you line for a successful /up (none by default).
 */
import type { Kysely, Migration } from 'kysely';

export const streaks: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('up_history').addColumn('possible_at', 'bigint').execute();
    await db.schema.alterTable('guild_settings').addColumn('time_zone', 'text').execute();
    await db.schema.alterTable('guild_settings').addColumn('thanks_template', 'text').execute();
  },
};
