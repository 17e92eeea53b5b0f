/**
 * Reminders that follow through (issue 25): a server's reminder, once posted, keeps where it was
 * and its text (`recordPost`); the first up after it (through the bot's /up, or the directory's
 * bump webhook) takes it, in one transaction, and leaves a follow-up row: the message to edit with
 * who upped and how long after the reminder. An up long after (past the cooldown the reminder was
 * for: the server was upped elsewhere meanwhile, unseen) leaves none. Follow-ups are claimed and
 * done once like the other outboxes (claims.ts): across restarts, kill -9 and several hosts.
 */
import type { Selectable } from 'kysely';
import { claimRow, finishRow, type Lease, pendingColumns, type RowFilter, retryRowAt } from './claims.js';
import type { ReminderFollowupsTable } from './schema.js';
import type { Store } from './store.js';

/** The window a reminder is for when the directory's cooldown is not known: its 4 hours. */
export const DEFAULT_WINDOW_MS = 4 * 3_600_000;

export interface Followup {
  messageId: string;
  guildId: string;
  channelId: string;
  /** The reminder's text as it was posted. */
  text: string;
  postedAt: number;
  uppedBy: string;
  uppedAt: number;
  traceParent: string | null;
}

export interface FollowupClaim extends Lease {
  messageId: string;
}

const byId =
  (messageId: string): RowFilter =>
  (eb) =>
    eb('message_id', '=', messageId);

export class FollowupRepository {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /** The server's reminder was posted there, saying `text`: what its follow-up will edit. */
  async recordPost(
    guildId: string,
    post: { channelId: string; messageId: string; text: string; postedAt: number },
  ): Promise<void> {
    await this.#store.run((db) =>
      db
        .updateTable('reminders')
        .set({
          post_channel_id: post.channelId,
          post_message_id: post.messageId,
          post_text: post.text,
          posted_at: post.postedAt,
        })
        .where('guild_id', '=', guildId)
        .execute(),
    );
  }

  /**
   * The server was upped by `userId` at `at`: the reminder posted before it, within the window it
   * was for, gets its follow-up (once: the reminder's post is let go of in the same transaction).
   * When one was left, the time the reminder was posted (how fast the up came); else null.
   */
  take(guildId: string, up: { userId: string; at: number }): Promise<number | null> {
    return this.#store.transaction(async (trx) => {
      const row = await trx
        .selectFrom('reminders')
        .select(['post_channel_id', 'post_message_id', 'post_text', 'posted_at', 'cooldown_ms'])
        .where('guild_id', '=', guildId)
        .executeTakeFirst();
      const postedAt = row?.posted_at === null || row?.posted_at === undefined ? null : Number(row.posted_at);
      if (!row?.post_message_id || !row.post_channel_id || postedAt === null) return null;
      const window = row.cooldown_ms === null ? DEFAULT_WINDOW_MS : Number(row.cooldown_ms);
      if (up.at < postedAt || up.at >= postedAt + window) return null;
      const taken = await trx
        .updateTable('reminders')
        .set({ post_message_id: null })
        .where('guild_id', '=', guildId)
        .where('post_message_id', '=', row.post_message_id)
        .executeTakeFirst();
      if (taken.numUpdatedRows === 0n) return null;
      await trx
        .insertInto('reminder_followups')
        .values({
          message_id: row.post_message_id,
          guild_id: guildId,
          channel_id: row.post_channel_id,
          text: row.post_text ?? '',
          posted_at: postedAt,
          upped_by: up.userId,
          upped_at: up.at,
          ...pendingColumns(),
        })
        .onConflict((oc) => oc.column('message_id').doNothing())
        .execute();
      return postedAt;
    });
  }

  /** Follow-ups waiting (or claimed, whose claim may run out), oldest up first. */
  async due(limit: number): Promise<Followup[]> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('reminder_followups')
        .selectAll()
        .where('state', 'in', ['pending', 'claimed'])
        .orderBy('upped_at')
        .limit(limit)
        .execute(),
    );
    return rows.map(followupOf);
  }

  async get(messageId: string): Promise<(Followup & { state: string; failure: string | null }) | undefined> {
    const row = await this.#store.run((db) =>
      db.selectFrom('reminder_followups').selectAll().where('message_id', '=', messageId).executeTakeFirst(),
    );
    return row && { ...followupOf(row), state: row.state, failure: row.failure };
  }

  async claim(
    messageId: string,
    by: string,
    leaseMs: number,
    now: number,
  ): Promise<FollowupClaim | undefined> {
    const won = await this.#store.run((db) =>
      claimRow(db, 'reminder_followups', { where: byId(messageId), waiting: 'pending', by, leaseMs, now }),
    );
    return won && { messageId, ...won.lease };
  }

  finish(
    claim: FollowupClaim,
    state: 'done' | 'failed',
    failure: string | null,
    now: number,
  ): Promise<boolean> {
    return this.#store.run((db) =>
      finishRow(db, 'reminder_followups', byId(claim.messageId), claim, { state, failure, done_at: now }),
    );
  }

  retryAt(claim: FollowupClaim, at: number): Promise<boolean> {
    return this.#store.run((db) => retryRowAt(db, 'reminder_followups', byId(claim.messageId), claim, at));
  }
}

function followupOf(row: Selectable<ReminderFollowupsTable>): Followup {
  return {
    messageId: row.message_id,
    guildId: row.guild_id,
    channelId: row.channel_id,
    text: row.text,
    postedAt: Number(row.posted_at),
    uppedBy: row.upped_by,
    uppedAt: Number(row.upped_at),
    traceParent: row.trace_parent,
  };
}
