/**
 * The message posted on joining a server (features/setup/welcome.ts), at most once per server: the
 * row is written first (whoever writes it posts), then completed with where it went. A process
 * killed in between leaves the server without one rather than with two. The row outlives a leave
 * (it holds the server's id and a time, nothing of its members): a bot removed and invited back
 * does not greet the server again.
 */
import type { Store } from './store.js';

export class WelcomeRepository {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /** True for the one caller that may post the server's welcome; false once any has. */
  async claim(guildId: string, at: number): Promise<boolean> {
    const result = await this.#store.run((db) =>
      db
        .insertInto('welcomes')
        .values({ guild_id: guildId, claimed_at: at, channel_id: null, message_id: null })
        .onConflict((oc) => oc.column('guild_id').doNothing())
        .executeTakeFirst(),
    );
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  /** Where the welcome went. */
  async posted(guildId: string, channelId: string, messageId: string): Promise<void> {
    await this.#store.run((db) =>
      db
        .updateTable('welcomes')
        .set({ channel_id: channelId, message_id: messageId })
        .where('guild_id', '=', guildId)
        .execute(),
    );
  }

  async get(
    guildId: string,
  ): Promise<{ claimedAt: number; channelId: string | null; messageId: string | null } | undefined> {
    const row = await this.#store.run((db) =>
      db.selectFrom('welcomes').selectAll().where('guild_id', '=', guildId).executeTakeFirst(),
    );
    return row
      ? { claimedAt: Number(row.claimed_at), channelId: row.channel_id, messageId: row.message_id }
      : undefined;
  }
}
