/**
 * A server's reminder follows through (issue 25): the reminder keeps where it was posted and its
 * text, and an up given after it (through the bot, or the directory's bump webhook) leaves a
 * follow-up to edit it with who upped and how long after: a row each, claimed and done once like
 * the other outboxes (store/claims.ts).
 */
import type { Kysely, Migration } from 'kysely';

export const reminderFollowups: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema.alterTable('reminders').addColumn('post_channel_id', 'text').execute();
    await db.schema.alterTable('reminders').addColumn('post_message_id', 'text').execute();
    await db.schema.alterTable('reminders').addColumn('post_text', 'text').execute();
    await db.schema.alterTable('reminders').addColumn('posted_at', 'bigint').execute();
    await db.schema
      .createTable('reminder_followups')
      .addColumn('message_id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('text', 'text', (c) => c.notNull())
      .addColumn('posted_at', 'bigint', (c) => c.notNull())
      .addColumn('upped_by', 'text', (c) => c.notNull())
      .addColumn('upped_at', 'bigint', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('claimed_by', 'text')
      .addColumn('claim_expires_at', 'bigint')
      .addColumn('nonce', 'text')
      .addColumn('done_at', 'bigint')
      .addColumn('failure', 'text')
      .addColumn('trace_parent', 'text')
      .execute();
    await db.schema
      .createIndex('reminder_followups_state_upped_at')
      .on('reminder_followups')
      .columns(['state', 'upped_at'])
      .execute();
  },
};
