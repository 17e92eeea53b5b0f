/**
 * The ledger of the directory's rate limits that every process of the bot shares, on
 * PostgreSQL (the directory client's SharedRateLimiter decides; this keeps). Why PostgreSQL and
 * not Redis: every process that needs it already has the store open on PostgreSQL, a turn costs
 * about a millisecond there (bench), and one engine fewer to run and to lose.
 *
 * A turn is one transaction under a transaction-scoped advisory lock, so turns of every process
 * take place one at a time; the lock goes with the transaction, also when the connection dies
 * or when its process freezes in the middle of a turn (turns.ts: the server ends a transaction
 * left idle for 5 s), and works behind a pooler in transaction mode. Times come from the database's clock
 * (clock_timestamp(), read after the lock is held), never a host's. Old rows are deleted by the
 * turns themselves, when they see any: grants once they count in no window, waiters whose
 * process stopped taking turns, holds that ended.
 */
import type { LedgerDecision, LedgerState, Priority, RateLimitLedger } from '../directory/index.js';
import { sql } from './kysely.js';
import type { Store } from './store.js';
import { turnLock } from './turns.js';

/** Rows as the turn's read gives them (json_build_array): compact, and one round trip. */
type GrantRow = [buckets: string, grantedAt: number, settledAt: number | null, keptUntil: number];
type WaiterRow = [id: string, priority: Priority, buckets: string, enqueuedAt: number, expiresAt: number];
type HoldRow = [bucket: string, untilAt: number];

/** The database's clock, in epoch milliseconds, when the statement runs. */
const NOW = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export class PostgresRateLimitLedger implements RateLimitLedger {
  readonly #store: Store;

  constructor(store: Store) {
    if (store.engine !== 'postgres') {
      throw new Error('the shared rate limits need the store on PostgreSQL (DATABASE_URL)');
    }
    this.#store = store;
  }

  /**
   * Four statements: the lock; one read of the clock and the whole state (a few rows: grants of
   * the last window, waiters, holds); one write with whatever the decision and the clean-up need;
   * the commit. The read is a statement of its own after the lock, so that its snapshot holds
   * everything the previous turn committed.
   */
  turn(
    waiter: { id: string; priority: Priority; buckets: readonly string[]; expiresInMs: number },
    keepMs: number,
    decide: (state: LedgerState) => LedgerDecision,
  ): Promise<LedgerDecision> {
    return this.#store.transaction(async (trx) => {
      await turnLock('directory-limits').execute(trx);
      const read = await sql<{ now: number; grants: GrantRow[]; waiters: WaiterRow[]; holds: HoldRow[] }>`
        select ${NOW} as now,
          (select coalesce(json_agg(json_build_array(buckets, granted_at, settled_at, kept_until)), '[]')
             from directory_grants) as grants,
          (select coalesce(json_agg(json_build_array(id, priority, buckets, enqueued_at, expires_at)), '[]')
             from directory_waiters) as waiters,
          (select coalesce(json_agg(json_build_array(bucket, until_at)), '[]')
             from directory_holds) as holds`.execute(trx);
      const row = read.rows[0];
      if (!row) throw new Error('the ledger read returned no row');
      const now = Number(row.now);
      const grants = row.grants.filter((g) => g[3] >= now);
      const waiters = row.waiters.filter((w) => w[4] >= now);
      const holds = row.holds.filter((h) => h[1] > now);
      const garbage =
        grants.length < row.grants.length ||
        waiters.length < row.waiters.length ||
        holds.length < row.holds.length;
      const mine = waiters.find((w) => w[0] === waiter.id);
      const enqueuedAt = mine ? mine[3] : now;
      const state: LedgerState = {
        now,
        grants: grants.map(([buckets, grantedAt, settledAt]) => ({
          buckets: buckets.split(','),
          grantedAt,
          settledAt,
        })),
        waiters: [
          ...waiters
            .filter((w) => w[0] !== waiter.id)
            .map(([id, priority, buckets, at]) => ({
              id,
              priority,
              buckets: buckets.split(','),
              enqueuedAt: at,
            })),
          { id: waiter.id, priority: waiter.priority, buckets: waiter.buckets, enqueuedAt },
        ],
        holds: new Map(holds),
      };
      const decision = decide(state);
      // Rows that count in no window any more go with the write that happens anyway.
      const cleanUp = garbage
        ? sql`, gone_grants as (delete from directory_grants where kept_until < ${now}),
              gone_waiters as (delete from directory_waiters where expires_at < ${now}),
              gone_holds as (delete from directory_holds where until_at <= ${now})`
        : sql``;
      if (decision.kind === 'stay') {
        await sql`with keep as (select 1)${cleanUp}
          insert into directory_waiters (id, priority, buckets, enqueued_at, expires_at)
          values (${waiter.id}, ${waiter.priority}, ${waiter.buckets.join(',')}, ${enqueuedAt}, ${now + waiter.expiresInMs})
          on conflict (id) do update set expires_at = excluded.expires_at`.execute(trx);
      } else if (decision.kind === 'grant') {
        await sql`with gone as (delete from directory_waiters where id = ${waiter.id})${cleanUp}
          insert into directory_grants (id, buckets, granted_at, settled_at, kept_until)
          values (${decision.grant.id}, ${decision.grant.buckets.join(',')}, ${now}, null, ${now + keepMs})`.execute(
          trx,
        );
      } else if (mine || garbage) {
        await sql`with gone as (delete from directory_waiters where id = ${waiter.id})${cleanUp}
          select 1`.execute(trx);
      }
      return decision;
    });
  }

  async settle(grantId: string): Promise<void> {
    await this.#store.run((db) =>
      db
        .updateTable('directory_grants')
        .set({ settled_at: NOW })
        .where('id', '=', grantId)
        .where('settled_at', 'is', null)
        .execute(),
    );
  }

  async hold(bucket: string, forMs: number): Promise<void> {
    const until = sql<number>`${NOW} + ${Math.max(0, Math.round(forMs))}`;
    await this.#store.run((db) =>
      db
        .insertInto('directory_holds')
        .values({ bucket, until_at: until })
        .onConflict((oc) =>
          oc.column('bucket').doUpdateSet({
            until_at: sql<number>`greatest(directory_holds.until_at, excluded.until_at)`,
          }),
        )
        .execute(),
    );
  }

  async leave(waiterId: string): Promise<void> {
    await this.#store.run((db) => db.deleteFrom('directory_waiters').where('id', '=', waiterId).execute());
  }
}
