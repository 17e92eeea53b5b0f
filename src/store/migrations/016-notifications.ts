/**
 * The directory's v3 notifications (issue 37): where a review was announced (`comment_posts`: its
 * edit edits that message, its removal marks it removed), and the `/up` answers on v3 waiting for
 * the notification of the up they sent the member to give on the directory's page (`up_watches`:
 * the interaction's token, kept until the token's 15 minutes are over).
 */
import type { Kysely, Migration } from 'kysely';

export const notifications: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('comment_posts')
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('message_id', 'text', (c) => c.notNull())
      .addColumn('posted_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('comment_posts_pk', ['guild_id', 'user_id'])
      .execute();
    await db.schema
      .createTable('up_watches')
      .addColumn('interaction_id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('application_id', 'text', (c) => c.notNull())
      .addColumn('token', 'text', (c) => c.notNull())
      .addColumn('locale', 'text', (c) => c.notNull())
      .addColumn('asked_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('up_watches_guild_id').on('up_watches').column('guild_id').execute();
  },
};
