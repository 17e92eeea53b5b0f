/**
 * The IDENTIFY turns of the whole bot, on PostgreSQL (identify_turns): Discord lets one shard
 * per `max_concurrency` bucket (shard id % max_concurrency) identify every 5 s, counted for the
 * bot's token, not per process. A turn is one transaction under a transaction-scoped advisory
 * lock, on the database's clock.
 */
import { StoreError } from '../store/errors.js';
import { sql } from '../store/kysely.js';
import type { Store } from '../store/store.js';
import { turnLock } from '../store/turns.js';

const NOW = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/** A turn given (`at`: when, on the database's clock), or how long until the bucket's next. */
export type IdentifyTurn = { granted: true; at: number } | { granted: false; waitMs: number };

export class PostgresIdentifyLedger {
  readonly #store: Store;

  constructor(store: Store) {
    if (store.engine !== 'postgres') {
      throw new StoreError(
        'IDENTIFY turns shared by several hosts need the store on PostgreSQL (DATABASE_URL)',
      );
    }
    this.#store = store;
  }

  /** The bucket's turn now (the next one `spacingMs` later), or how long until it comes. */
  take(bucket: number, spacingMs: number): Promise<IdentifyTurn> {
    return this.#store.transaction(async (trx) => {
      await turnLock('identify-turns').execute(trx);
      const read = await sql<{ now: number; next_at: number | null }>`
        select ${NOW} as now, (select next_at from identify_turns where bucket = ${bucket}) as next_at`.execute(
        trx,
      );
      const now = Number(read.rows[0]?.now);
      const nextAt = read.rows[0]?.next_at;
      if (nextAt !== null && nextAt !== undefined && Number(nextAt) > now) {
        return { granted: false, waitMs: Number(nextAt) - now };
      }
      await trx
        .insertInto('identify_turns')
        .values({ bucket, next_at: now + spacingMs })
        .onConflict((oc) => oc.column('bucket').doUpdateSet({ next_at: now + spacingMs }))
        .execute();
      return { granted: true, at: now };
    });
  }
}
