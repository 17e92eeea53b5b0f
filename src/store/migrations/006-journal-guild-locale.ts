/**
 * An /up in flight keeps its server's locale (Discord's `guild_locale`), so that an up answered
 * after a restart, by this host or one that took its ups over, speaks the server's public
 * language as the live answer would have. An entry written before this migration has none: with
 * /settings language on `auto`, its public answer is in the default language.
 */
import type { Kysely, Migration } from 'kysely';

export const journalGuildLocale: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('pending_ups').addColumn('guild_locale', 'text').execute();
  },
};
