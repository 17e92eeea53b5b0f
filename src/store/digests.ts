/**
 * Period digests (issue 25): a row per server and period (`<guild id>:<period key>`), posted once
 * at the period's end in the server's time zone and kept as the record. Claimed and done like the
 * other outboxes (claims.ts): across restarts, kill -9 and several hosts. The next period's row is
 * written before a digest is posted, so a process killed at any moment leaves the cycle going.
 */
import type { Selectable } from 'kysely';
import { claimRow, finishRow, type Lease, pendingColumns, type RowFilter, retryRowAt } from './claims.js';
import type { DigestPeriod, DigestsTable } from './schema.js';
import type { Store } from './store.js';

export interface Digest {
  id: string;
  guildId: string;
  channelId: string;
  period: DigestPeriod;
  start: number;
  end: number;
  timeZone: string;
  dueAt: number;
  traceParent: string | null;
}

export interface DigestClaim extends Lease {
  id: string;
}

/** A digest to write: the server's, for the period [start, end) of `key`. */
export interface DigestPlan {
  guildId: string;
  channelId: string;
  period: DigestPeriod;
  key: string;
  start: number;
  end: number;
  timeZone: string;
  dueAt: number;
}

const byId =
  (id: string): RowFilter =>
  (eb) =>
    eb('id', '=', id);

export class DigestRepository {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * The server's digest of a period, waiting for its end: written once; one still waiting takes a
   * new channel. Digests already posted (or being posted) stay as they are.
   */
  async schedule(plan: DigestPlan): Promise<void> {
    const channel = { channel_id: plan.channelId };
    await this.#store.run((db) =>
      db
        .insertInto('digests')
        .values({
          id: `${plan.guildId}:${plan.key}`,
          guild_id: plan.guildId,
          channel_id: plan.channelId,
          period: plan.period,
          period_start: plan.start,
          period_end: plan.end,
          time_zone: plan.timeZone,
          due_at: plan.dueAt,
          ...pendingColumns(),
        })
        .onConflict((oc) => oc.column('id').doUpdateSet(channel).where('digests.state', '=', 'pending'))
        .execute(),
    );
  }

  /** The server's digests still to come go (digests turned off, or another period chosen). */
  async cancel(guildId: string, keep?: string): Promise<void> {
    await this.#store.run((db) => {
      let query = db.deleteFrom('digests').where('guild_id', '=', guildId).where('state', '=', 'pending');
      if (keep !== undefined) query = query.where('id', '<>', `${guildId}:${keep}`);
      return query.execute();
    });
  }

  /** Digests due by `until` (and claimed ones whose claim may have run out), earliest first. */
  async due(until: number, limit: number): Promise<Digest[]> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('digests')
        .selectAll()
        .where('state', 'in', ['pending', 'claimed'])
        .where('due_at', '<=', until)
        .orderBy('due_at')
        .limit(limit)
        .execute(),
    );
    return rows.map(digestOf);
  }

  /** When the server's next digest is due; undefined with none waiting. */
  async next(guildId: string): Promise<number | undefined> {
    const row = await this.#store.run((db) =>
      db
        .selectFrom('digests')
        .select('due_at')
        .where('guild_id', '=', guildId)
        .where('state', 'in', ['pending', 'claimed'])
        .orderBy('due_at')
        .executeTakeFirst(),
    );
    return row === undefined ? undefined : Number(row.due_at);
  }

  /** The server's digests, newest period first (for /settings show and the tests). */
  async list(guildId: string): Promise<Array<Digest & { state: string; failure: string | null }>> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('digests')
        .selectAll()
        .where('guild_id', '=', guildId)
        .orderBy('period_start', 'desc')
        .execute(),
    );
    return rows.map((row) => ({ ...digestOf(row), state: row.state, failure: row.failure }));
  }

  async claim(id: string, by: string, leaseMs: number, now: number): Promise<DigestClaim | undefined> {
    const due: RowFilter = (eb) => eb.and([eb('id', '=', id), eb('due_at', '<=', now)]);
    const won = await this.#store.run((db) =>
      claimRow(db, 'digests', { where: due, waiting: 'pending', by, leaseMs, now }),
    );
    return won && { id, ...won.lease };
  }

  finish(
    claim: DigestClaim,
    state: 'done' | 'failed',
    failure: string | null,
    now: number,
  ): Promise<boolean> {
    return this.#store.run((db) =>
      finishRow(db, 'digests', byId(claim.id), claim, { state, failure, done_at: now }),
    );
  }

  retryAt(claim: DigestClaim, at: number): Promise<boolean> {
    return this.#store.run((db) => retryRowAt(db, 'digests', byId(claim.id), claim, at));
  }
}

function digestOf(row: Selectable<DigestsTable>): Digest {
  return {
    id: row.id,
    guildId: row.guild_id,
    channelId: row.channel_id,
    period: row.period,
    start: Number(row.period_start),
    end: Number(row.period_end),
    timeZone: row.time_zone,
    dueAt: Number(row.due_at),
    traceParent: row.trace_parent,
  };
}
