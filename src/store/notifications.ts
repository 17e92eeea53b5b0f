/**
 * What the directory's v3 notifications leave in the store besides the events themselves (which
 * are webhook events: store/webhooks.ts, one outbox for every way an event comes):
 *
 * - `CommentPostRepository`: where each member's review of a server was announced. v3 keeps one
 *   review per member and resource (its edit and removal name no review id), so the announcement
 *   of `comment_added` is the message that `comment_edited` edits and `comment_removed` marks.
 * - `UpWatchRepository`: the `/up` answers given on v3 ("up it on the directory's page"), kept with
 *   their interaction's token until it expires (15 minutes), so that the notification of the up
 *   edits the answer ("upped by …"). `take` deletes and returns them in one statement: of several
 *   processes handling the same up, one edits each answer.
 */
import { pendingColumns } from './claims.js';
import { SAME_UP_MS } from './history.js';
import { restartForUp } from './reminders.js';
import type { Store } from './store.js';

/** An interaction's token edits its answer for 15 minutes (Discord). */
export const WATCH_MS = 15 * 60_000;

export interface CommentPost {
  channelId: string;
  messageId: string;
  postedAt: number;
}

export class CommentPostRepository {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  async get(guildId: string, userId: string): Promise<CommentPost | undefined> {
    const row = await this.#store.run((db) =>
      db
        .selectFrom('comment_posts')
        .select(['channel_id', 'message_id', 'posted_at'])
        .where('guild_id', '=', guildId)
        .where('user_id', '=', userId)
        .executeTakeFirst(),
    );
    return row && { channelId: row.channel_id, messageId: row.message_id, postedAt: Number(row.posted_at) };
  }

  /** The member's review of the server is announced there now (a new review replaces the old post). */
  async put(guildId: string, userId: string, post: CommentPost): Promise<void> {
    const columns = { channel_id: post.channelId, message_id: post.messageId, posted_at: post.postedAt };
    await this.#store.run((db) =>
      db
        .insertInto('comment_posts')
        .values({ guild_id: guildId, user_id: userId, ...columns })
        .onConflict((oc) => oc.columns(['guild_id', 'user_id']).doUpdateSet(columns))
        .execute(),
    );
  }
}

export interface UpWatch {
  interactionId: string;
  guildId: string;
  userId: string;
  applicationId: string;
  token: string;
  locale: string;
  askedAt: number;
  expiresAt: number;
}

export class UpWatchRepository {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /** Keeps an answer to follow up (the expired ones go at the same time: adds are one per /up). */
  async add(watch: UpWatch): Promise<void> {
    await this.#store.transaction(async (trx) => {
      await trx.deleteFrom('up_watches').where('expires_at', '<=', watch.askedAt).execute();
      await trx
        .insertInto('up_watches')
        .values({
          interaction_id: watch.interactionId,
          guild_id: watch.guildId,
          user_id: watch.userId,
          application_id: watch.applicationId,
          token: watch.token,
          locale: watch.locale,
          asked_at: watch.askedAt,
          expires_at: watch.expiresAt,
        })
        .onConflict((oc) => oc.column('interaction_id').doNothing())
        .execute();
    });
  }

  /** Deletes the answers whose token expired before `before`; how many went. */
  async prune(before: number): Promise<number> {
    const result = await this.#store.run((db) =>
      db.deleteFrom('up_watches').where('expires_at', '<=', before).executeTakeFirst(),
    );
    return Number(result.numDeletedRows);
  }

  /**
   * The server's answers still editable at `now` that an up at `at` answers (asked before it, or
   * within a minute after: the two clocks differ), deleted as they are returned, in one statement
   * (of several processes, one takes each). Expired ones are left to `add` and `prune`.
   */
  async take(guildId: string, at: number, now: number): Promise<UpWatch[]> {
    const rows = await this.#store.run((db) =>
      db
        .deleteFrom('up_watches')
        .where('guild_id', '=', guildId)
        .where('asked_at', '<=', at + 60_000)
        .where('expires_at', '>', now)
        .returningAll()
        .execute(),
    );
    return rows.map((r) => ({
      interactionId: r.interaction_id,
      guildId: r.guild_id,
      userId: r.user_id,
      applicationId: r.application_id,
      token: r.token,
      locale: r.locale,
      askedAt: Number(r.asked_at),
      expiresAt: Number(r.expires_at),
    }));
  }
}

/** An event of the directory's notifications to store (store/webhooks.ts's row). */
export interface InboxEvent {
  id: string;
  guildId: string;
  type: string;
  /** The checked event (features/webhooks/events.ts DirectoryEvent), stored as JSON. */
  event: { kind: string; [field: string]: unknown };
  /**
   * An up: its time and the directory's cadence. Its server's reminder restarts in the same
   * transaction (restartForUp), and the event keeps when the up became possible before it (its
   * reaction time and streak: `possibleAt`), read before the reminder moved.
   */
  up?: { at: number; cadenceMs: number };
}

/**
 * The notifications' intake: a batch of events stored in one transaction (an outbox row each,
 * store/webhooks.ts), and the reminder of each up first stored restarted with it, so that a burst
 * is a few commits, not one per event, and an up's reminder is scheduled as soon as the up is
 * stored. What else follows the up (the history, rewards, the thank-you line) is the announcer's.
 */
export class NotificationInbox {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /** Each event's outcome, in order: stored, or a duplicate (stored already). */
  async storeAll(
    events: readonly InboxEvent[],
    receivedAt: number,
  ): Promise<Array<{ outcome: 'stored' | 'duplicate'; restarted?: { nextUpAt: number; dueAt: number } }>> {
    return this.#store.transaction(async (trx) => {
      const outcomes: Array<{
        outcome: 'stored' | 'duplicate';
        restarted?: { nextUpAt: number; dueAt: number };
      }> = [];
      for (const item of events) {
        const known = await trx
          .selectFrom('webhook_events')
          .select('id')
          .where('id', '=', item.id)
          .executeTakeFirst();
        if (known) {
          outcomes.push({ outcome: 'duplicate' });
          continue;
        }
        let event = item.event;
        if (item.up) {
          const reminder = await trx
            .selectFrom('reminders')
            .select('next_up_at')
            .where('guild_id', '=', item.guildId)
            .executeTakeFirst();
          const possibleAt = reminder === undefined ? null : Number(reminder.next_up_at);
          event = {
            ...event,
            possibleAt: possibleAt !== null && possibleAt <= item.up.at ? possibleAt : null,
          };
        }
        await trx
          .insertInto('webhook_events')
          .values({
            id: item.id,
            guild_id: item.guildId,
            type: item.type,
            payload: JSON.stringify(event),
            received_at: receivedAt,
            ...pendingColumns(),
          })
          .execute();
        const restarted = item.up
          ? await restartForUp(
              trx,
              item.guildId,
              { at: item.up.at, fallbackCooldownMs: item.up.cadenceMs, toleranceMs: SAME_UP_MS },
              receivedAt,
            )
          : undefined;
        outcomes.push(restarted ? { outcome: 'stored', restarted } : { outcome: 'stored' });
      }
      return outcomes;
    });
  }
}
