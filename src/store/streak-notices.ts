/**
 * Broken server streaks to announce (features/history/streak-watch.ts): the windows whose grace ran
 * out lately, read from the servers' reminders (a reminder's next-up time is its window; an up
 * through the bot or the directory's webhook moves it), and a notice per window, claimed and posted
 * once like the other outboxes (claims.ts).
 */
import type { Selectable } from 'kysely';
import { claimRow, finishRow, type Lease, pendingColumns, type RowFilter, retryRowAt } from './claims.js';
import type { StreakNoticesTable } from './schema.js';
import type { Store } from './store.js';

export interface StreakNotice {
  id: string;
  guildId: string;
  length: number;
  endedAt: number;
  traceParent: string | null;
}

export interface NoticeClaim extends Lease {
  id: string;
}

const byId =
  (id: string): RowFilter =>
  (eb) =>
    eb('id', '=', id);

export class StreakNoticeRepository {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * The servers with reminders on whose window (next-up time) plus `graceMs` falls in
   * (`since`, `until`]: no up came in it, or the reminder would have moved on.
   */
  async windowsEnded(
    since: number,
    until: number,
    graceMs: number,
    limit: number,
  ): Promise<Array<{ guildId: string; nextUpAt: number }>> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('reminders')
        .innerJoin('guild_settings', 'guild_settings.guild_id', 'reminders.guild_id')
        .select(['reminders.guild_id', 'reminders.next_up_at'])
        .where('guild_settings.reminder_channel_id', 'is not', null)
        .where('reminders.next_up_at', '>', since - graceMs)
        .where('reminders.next_up_at', '<=', until - graceMs)
        .orderBy('reminders.next_up_at')
        .limit(limit)
        .execute(),
    );
    return rows.map((r) => ({ guildId: r.guild_id, nextUpAt: Number(r.next_up_at) }));
  }

  /** The notice of a window's broken streak, once: false when it was written already. */
  async add(notice: {
    guildId: string;
    nextUpAt: number;
    length: number;
    endedAt: number;
  }): Promise<boolean> {
    const result = await this.#store.run((db) =>
      db
        .insertInto('streak_notices')
        .values({
          id: `${notice.guildId}:${notice.nextUpAt}`,
          guild_id: notice.guildId,
          length: notice.length,
          ended_at: notice.endedAt,
          ...pendingColumns(),
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .executeTakeFirst(),
    );
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  async due(limit: number): Promise<StreakNotice[]> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('streak_notices')
        .selectAll()
        .where('state', 'in', ['pending', 'claimed'])
        .orderBy('ended_at')
        .limit(limit)
        .execute(),
    );
    return rows.map(noticeOf);
  }

  async get(id: string): Promise<(StreakNotice & { state: string; failure: string | null }) | undefined> {
    const row = await this.#store.run((db) =>
      db.selectFrom('streak_notices').selectAll().where('id', '=', id).executeTakeFirst(),
    );
    return row && { ...noticeOf(row), state: row.state, failure: row.failure };
  }

  async claim(id: string, by: string, leaseMs: number, now: number): Promise<NoticeClaim | undefined> {
    const won = await this.#store.run((db) =>
      claimRow(db, 'streak_notices', { where: byId(id), waiting: 'pending', by, leaseMs, now }),
    );
    return won && { id, ...won.lease };
  }

  finish(
    claim: NoticeClaim,
    state: 'done' | 'failed',
    failure: string | null,
    now: number,
  ): Promise<boolean> {
    return this.#store.run((db) =>
      finishRow(db, 'streak_notices', byId(claim.id), claim, { state, failure, done_at: now }),
    );
  }

  retryAt(claim: NoticeClaim, at: number): Promise<boolean> {
    return this.#store.run((db) => retryRowAt(db, 'streak_notices', byId(claim.id), claim, at));
  }
}

function noticeOf(row: Selectable<StreakNoticesTable>): StreakNotice {
  return {
    id: row.id,
    guildId: row.guild_id,
    length: Number(row.length),
    endedAt: Number(row.ended_at),
    traceParent: row.trace_parent,
  };
}
