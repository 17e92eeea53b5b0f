/**
 * The directory's webhooks (issue 16): each server's webhook set-up (the key kept only as a salted
 * hash), the events received (an outbox: stored before the directory is answered, announced
 * after), and the cooldown the directory's last answer implied, for a `new_server_bump` to move
 * the server's reminder by.
 */
import type { Kysely, Migration } from 'kysely';

export const webhooks: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('directory_webhooks')
      .addColumn('guild_id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('channel_id', 'text', (c) => c.notNull())
      .addColumn('key_salt', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull())
      .addColumn('problem', 'text')
      .addColumn('last_event_at', 'bigint')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('webhook_events')
      .addColumn('id', 'text', (c) => c.notNull().primaryKey())
      .addColumn('guild_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('received_at', 'bigint', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('claimed_by', 'text')
      .addColumn('claim_expires_at', 'bigint')
      .addColumn('nonce', 'text')
      .addColumn('done_at', 'bigint')
      .addColumn('failure', 'text')
      .execute();
    await db.schema
      .createIndex('webhook_events_state_received_at')
      .on('webhook_events')
      .columns(['state', 'received_at'])
      .execute();
    await db.schema.createIndex('webhook_events_guild_id').on('webhook_events').column('guild_id').execute();
    await db.schema.alterTable('reminders').addColumn('cooldown_ms', 'bigint').execute();
  },
};
