/**
 * A server's webhook events counted on each delivery (issue 23: store/webhooks.ts refuses one
 * past WEBHOOK_SERVER_PENDING waiting or WEBHOOK_SERVER_RATE stored): by server and state, and
 * by server and time, so that each count reads that server's few rows, not its 14 days of done
 * events. They begin with the server, as the index on the server alone did, which goes.
 */
import type { Kysely, Migration } from 'kysely';

export const webhookIntake: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createIndex('webhook_events_guild_state')
      .on('webhook_events')
      .columns(['guild_id', 'state'])
      .execute();
    await db.schema
      .createIndex('webhook_events_guild_received_at')
      .on('webhook_events')
      .columns(['guild_id', 'received_at'])
      .execute();
    await db.schema.dropIndex('webhook_events_guild_id').execute();
  },
};
