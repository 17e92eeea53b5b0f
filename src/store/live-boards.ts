/**
 * Live leaderboards (issue 25): each server's one message kept up to date (features/digests/
 * live.ts). A row waits (`pending`) for its due time: a minute after its last edit once an up
 * changed what it shows, or the next month's start (the board shows the calendar month) when
 * nothing did. It is claimed like the other outboxes (claims.ts), so one process edits it at a
 * time across restarts and hosts, and a new message is posted once (the claim's nonce).
 */
import type { Selectable } from 'kysely';
import { claimRow, type Lease, type RowFilter, retryRowAt } from './claims.js';
import type { LiveBoardsTable, OutboxState } from './schema.js';
import type { Store } from './store.js';

/** At most one edit a minute. */
export const LIVE_EDIT_EVERY_MS = 60_000;

export interface LiveBoard {
  guildId: string;
  channelId: string;
  messageId: string | null;
  contentHash: string | null;
  dueAt: number;
  changedAt: number | null;
  editedAt: number | null;
  traceParent: string | null;
}

export interface LiveBoardClaim extends Lease {
  guildId: string;
  /** The last change the claim saw: what the message will show once edited. */
  changedAt: number | null;
}

const byGuild =
  (guildId: string): RowFilter =>
  (eb) =>
    eb('guild_id', '=', guildId);

export class LiveBoardRepository {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * The server's board in `channelId`, shown at once. The message of another channel it had
   * before is returned, for the caller to delete; in the same channel the message is kept.
   */
  async set(guildId: string, channelId: string, now: number): Promise<LiveBoard | undefined> {
    return this.#store.transaction(async (trx) => {
      const before = await trx
        .selectFrom('live_boards')
        .selectAll()
        .where('guild_id', '=', guildId)
        .executeTakeFirst();
      const kept = before?.channel_id === channelId;
      const row = {
        channel_id: channelId,
        message_id: kept ? before.message_id : null,
        content_hash: null,
        due_at: now,
        changed_at: now,
        state: 'pending' as const,
        claimed_by: null,
        claim_expires_at: null,
        nonce: null,
        failure: null,
      };
      await trx
        .insertInto('live_boards')
        .values({
          guild_id: guildId,
          shown_at: null,
          edited_at: null,
          done_at: null,
          trace_parent: null,
          ...row,
        })
        .onConflict((oc) => oc.column('guild_id').doUpdateSet(row))
        .execute();
      return before && !kept ? boardOf(before) : undefined;
    });
  }

  /** The server's board goes; its message is returned for the caller to delete. */
  async remove(guildId: string): Promise<LiveBoard | undefined> {
    const row = await this.#store.run((db) =>
      db.deleteFrom('live_boards').where('guild_id', '=', guildId).returningAll().executeTakeFirst(),
    );
    return row && boardOf(row);
  }

  async get(guildId: string): Promise<(LiveBoard & { state: string; failure: string | null }) | undefined> {
    const row = await this.#store.run((db) =>
      db.selectFrom('live_boards').selectAll().where('guild_id', '=', guildId).executeTakeFirst(),
    );
    return row && { ...boardOf(row), state: row.state, failure: row.failure };
  }

  /**
   * An up changed what the server's board shows: it is due a minute after its last edit (now, if
   * that is past), unless it is due sooner. One statement; nothing for a server with no board.
   * The new due time, or undefined.
   */
  async touch(guildId: string, at: number): Promise<number | undefined> {
    const row = await this.#store.run((db) =>
      db
        .updateTable('live_boards')
        .set((eb) => {
          const afterEdit = eb(eb.fn.coalesce('edited_at', eb.val(0)), '+', eb.val(LIVE_EDIT_EVERY_MS));
          const soonest = eb.case().when(afterEdit, '>', at).then(afterEdit).else(eb.val(at)).end();
          return {
            changed_at: at,
            // Being edited: the claim's finish sees the change and makes it due again.
            due_at: eb
              .case()
              .when('state', '=', 'claimed')
              .then(eb.ref('due_at'))
              .when(eb.and([eb('state', '=', 'pending'), eb('due_at', '<', soonest)]))
              .then(eb.ref('due_at'))
              .else(soonest)
              .end(),
            state: eb
              .case()
              .when('state', '=', 'claimed')
              .then(eb.ref('state'))
              .else(eb.val('pending'))
              .end()
              .$castTo<OutboxState>(),
          };
        })
        .where('guild_id', '=', guildId)
        // A board that failed (its channel gone) waits for /settings, not for the next up.
        .where('state', '<>', 'failed')
        .returning('due_at')
        .executeTakeFirst(),
    );
    return row === undefined ? undefined : Number(row.due_at);
  }

  /** Boards due by `until` (and claimed ones whose claim may have run out), earliest first. */
  async due(until: number, limit: number): Promise<LiveBoard[]> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('live_boards')
        .selectAll()
        .where('state', 'in', ['pending', 'claimed'])
        .where('due_at', '<=', until)
        .orderBy('due_at')
        .limit(limit)
        .execute(),
    );
    return rows.map(boardOf);
  }

  async claim(
    guildId: string,
    by: string,
    leaseMs: number,
    now: number,
  ): Promise<LiveBoardClaim | undefined> {
    const due: RowFilter = (eb) => eb.and([eb('guild_id', '=', guildId), eb('due_at', '<=', now)]);
    const won = await this.#store.run((db) =>
      claimRow(db, 'live_boards', { where: due, waiting: 'pending', by, leaseMs, now }),
    );
    if (!won) return undefined;
    const changed = won.row.changed_at;
    return { guildId, ...won.lease, changedAt: changed === null ? null : Number(changed) };
  }

  /**
   * The board as now shown (its message, what it shows, when edited), while the claim holds; it
   * waits then for the next change, or until `restAt` (the next month's start) with none.
   */
  async shown(
    claim: LiveBoardClaim,
    shown: { messageId: string; contentHash: string; editedAt: number | null; restAt: number },
  ): Promise<boolean> {
    return this.#store.run((db) =>
      db
        .updateTable('live_boards')
        .set({
          message_id: shown.messageId,
          content_hash: shown.contentHash,
          shown_at: claim.changedAt,
          due_at: shown.restAt,
          ...(shown.editedAt === null ? {} : { edited_at: shown.editedAt }),
        })
        .where('guild_id', '=', claim.guildId)
        .where('state', '=', 'claimed')
        .where('claimed_by', '=', claim.by)
        .where('nonce', '=', claim.nonce)
        .executeTakeFirst()
        .then((r) => r.numUpdatedRows > 0n),
    );
  }

  /**
   * Done with the claim: waiting again (a change that came meanwhile makes it due a minute after
   * the edit), or failed (the channel is gone: recorded, until /settings sets the board again).
   */
  finish(
    claim: LiveBoardClaim,
    state: 'done' | 'failed',
    failure: string | null,
    now: number,
  ): Promise<boolean> {
    return this.#store.run((db) =>
      db
        .updateTable('live_boards')
        .set((eb) => ({
          state: state === 'done' ? 'pending' : 'failed',
          failure,
          nonce: null,
          claimed_by: null,
          claim_expires_at: null,
          done_at: now,
          due_at:
            state === 'done'
              ? eb
                  .case()
                  .when(eb.fn.coalesce('changed_at', eb.val(0)), '>', eb.fn.coalesce('shown_at', eb.val(0)))
                  .then(eb(eb.fn.coalesce('edited_at', eb.val(now)), '+', eb.val(LIVE_EDIT_EVERY_MS)))
                  .else(eb.ref('due_at'))
                  .end()
              : eb.ref('due_at'),
        }))
        .where(byGuild(claim.guildId))
        .where('state', '=', 'claimed')
        .where('claimed_by', '=', claim.by)
        .where('nonce', '=', claim.nonce)
        .executeTakeFirst()
        .then((r) => r.numUpdatedRows > 0n),
    );
  }

  retryAt(claim: LiveBoardClaim, at: number): Promise<boolean> {
    return this.#store.run((db) => retryRowAt(db, 'live_boards', byGuild(claim.guildId), claim, at));
  }
}

function boardOf(row: Selectable<LiveBoardsTable>): LiveBoard {
  return {
    guildId: row.guild_id,
    channelId: row.channel_id,
    messageId: row.message_id,
    contentHash: row.content_hash,
    dueAt: Number(row.due_at),
    changedAt: row.changed_at === null ? null : Number(row.changed_at),
    editedAt: row.edited_at === null ? null : Number(row.edited_at),
    traceParent: row.trace_parent,
  };
}
