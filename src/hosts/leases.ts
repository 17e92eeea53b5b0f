/**
 * The leases the hosts of one bot share in PostgreSQL (the statistics leader): on the database's
 * clock, held by one process (its HOST_ID and its instance), with a fencing token.
 */
import { sql } from '../store/kysely.js';
import type { Store } from '../store/store.js';
import { boundIdle } from '../store/turns.js';
import { type HostProcess, NOW, requirePostgres } from './store.js';

export type LeaseState =
  | { held: true; token: number; expiresInMs: number }
  | { held: false; holder: string; expiresInMs: number };

export type TurnClaim = 'claimed' | 'not-holder' | { tooSoonByMs: number };

/** The lease's row is held by this process (its name and its instance). */
function isHolder(holder: HostProcess) {
  return sql<boolean>`(holder = ${holder.host} and holder_instance = ${holder.instance})`;
}

/**
 * Leases on the database's clock with a fencing token: the token grows by one each time the
 * lease changes hands, and the work a lease guards is claimed in a transaction that checks it.
 * Not an advisory lock, which survives a connection that died silently for as long as the
 * server takes to notice, and does not work behind a pooler in transaction mode.
 */
export class LeaseRepository {
  readonly #store: Store;

  constructor(store: Store) {
    requirePostgres(store, 'a lease shared by several hosts');
    this.#store = store;
  }

  /**
   * Takes the lease, or renews it for `holder`, for `ttlMs`; else says who holds it. The holder
   * is a process: another process of the same name does not renew it.
   */
  acquire(name: string, holder: HostProcess, ttlMs: number): Promise<LeaseState> {
    const { host, instance } = holder;
    return this.#store.transaction(async (trx) => {
      await boundIdle().execute(trx);
      await trx
        .insertInto('leases')
        .values({
          name,
          holder: host,
          holder_instance: instance,
          token: 0,
          expires_at: 0,
          last_done_at: null,
        })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      const taken = await sql<{ token: number; expires_in: number }>`
        update leases
           set token = case when ${isHolder(holder)} and expires_at > ${NOW} then token else token + 1 end,
               holder = ${host},
               holder_instance = ${instance},
               expires_at = ${NOW} + ${ttlMs}
         where name = ${name} and (${isHolder(holder)} or expires_at <= ${NOW})
        returning token, expires_at - ${NOW} as expires_in`.execute(trx);
      const row = taken.rows[0];
      if (row) return { held: true, token: Number(row.token), expiresInMs: Number(row.expires_in) };
      const other = await sql<{ holder: string; expires_in: number }>`
        select holder, expires_at - ${NOW} as expires_in from leases where name = ${name}`.execute(trx);
      const current = other.rows[0];
      return { held: false, holder: current?.holder ?? '', expiresInMs: Number(current?.expires_in ?? 0) };
    });
  }

  /**
   * Claims one turn of the guarded work for the holder of `token`: refused when the lease has
   * moved on (fencing), or when the last turn started less than `spacingMs` before this one
   * (which started `startedAgoMs` ago): a turn is never done twice, whoever holds the lease.
   */
  claimTurn(
    name: string,
    holder: HostProcess,
    token: number,
    spacingMs: number,
    startedAgoMs: number,
  ): Promise<TurnClaim> {
    return this.#store.transaction(async (trx) => {
      await boundIdle().execute(trx);
      const found = await sql<{
        holder: string;
        holder_instance: string;
        token: number;
        live: boolean;
        last_done_at: number | null;
        now: number;
      }>`
        select holder, holder_instance, token, expires_at > ${NOW} as live, last_done_at, ${NOW} as now
          from leases where name = ${name} for update`.execute(trx);
      const row = found.rows[0];
      if (
        !row ||
        row.holder !== holder.host ||
        row.holder_instance !== holder.instance ||
        Number(row.token) !== token ||
        !row.live
      ) {
        return 'not-holder';
      }
      const startedAt = Number(row.now) - Math.max(0, startedAgoMs);
      if (row.last_done_at !== null) {
        const since = startedAt - Number(row.last_done_at);
        if (since < spacingMs) return { tooSoonByMs: spacingMs - since };
      }
      await trx.updateTable('leases').set({ last_done_at: startedAt }).where('name', '=', name).execute();
      return 'claimed';
    });
  }

  /**
   * The guarded work of the holder of `token` was done `agoMs` ago (database clock): the next
   * turn's spacing counts from then, when that is later than when the turn began (a stats post
   * that waited for the directory's limits). Only ever moves later.
   */
  async markDone(name: string, holder: HostProcess, token: number, agoMs: number): Promise<void> {
    const at = sql<number>`(${NOW} - ${Math.max(0, Math.round(agoMs))})`;
    await this.#store.run((db) =>
      sql`update leases set last_done_at = ${at}
            where name = ${name} and ${isHolder(holder)} and token = ${token}
              and (last_done_at is null or last_done_at < ${at})`.execute(db),
    );
  }

  /** Whether `holder` still holds the lease with `token` (a check right before acting on it). */
  async holds(name: string, holder: HostProcess, token: number): Promise<boolean> {
    const found = await this.#store.run((db) =>
      sql<{ ok: boolean }>`
        select (${isHolder(holder)} and token = ${token} and expires_at > ${NOW}) as ok
          from leases where name = ${name}`.execute(db),
    );
    return found.rows[0]?.ok === true;
  }

  /** Gives the lease up (shutdown), so that another host takes it at its next try. */
  async release(name: string, holder: HostProcess, token: number): Promise<void> {
    await this.#store.run((db) =>
      db
        .updateTable('leases')
        .set({ expires_at: 0 })
        .where('name', '=', name)
        .where('holder', '=', holder.host)
        .where('holder_instance', '=', holder.instance)
        .where('token', '=', token)
        .execute(),
    );
  }
}
