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

  async add(watch: UpWatch): Promise<void> {
    await this.#store.run((db) =>
      db
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
        .execute(),
    );
  }

  /**
   * The server's answers still editable at `now` that an up at `at` answers (asked before it, or
   * within a minute after: the two clocks differ), deleted as they are returned; the expired ones
   * deleted too.
   */
  async take(guildId: string, at: number, now: number): Promise<UpWatch[]> {
    return this.#store.transaction(async (trx) => {
      await trx.deleteFrom('up_watches').where('expires_at', '<=', now).execute();
      const rows = await trx
        .deleteFrom('up_watches')
        .where('guild_id', '=', guildId)
        .where('asked_at', '<=', at + 60_000)
        .returningAll()
        .execute();
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
    });
  }
}
