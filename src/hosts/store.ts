/**
 * What the hosts of one bot share in PostgreSQL: which host runs each shard and its latest
 * numbers (shard_states), and leases with fencing tokens (leases: the statistics leader).
 * Every time is the database's clock, read in the statement that uses it; no host's clock
 * decides anything. PostgreSQL only: several hosts need a server they all reach.
 */
import { StoreError } from '../store/errors.js';
import { sql } from '../store/kysely.js';
import type { Store } from '../store/store.js';
import { boundIdle, turnLock } from '../store/turns.js';

/** The database's clock, in epoch milliseconds, when the statement runs. */
const NOW = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

export interface ShardNumbers {
  id: number;
  ready: boolean;
  guilds: number;
  members: number;
}

export interface StoredShard extends ShardNumbers {
  host: string;
  /** How long ago (ms, the database's clock) its host last wrote it. */
  ageMs: number;
}

/** Why a host may not run the shards it was given. */
export interface ShardConflict {
  shard: number;
  host: string;
  seenAgoMs: number;
  /** The other host's SHARD_COUNT, when it is not ours. */
  shardCount?: number;
}

export type LeaseState =
  | { held: true; token: number; expiresInMs: number }
  | { held: false; holder: string; expiresInMs: number };

export type TurnClaim = 'claimed' | 'not-holder' | { tooSoonByMs: number };

function requirePostgres(store: Store, what: string): void {
  if (store.engine !== 'postgres') {
    throw new StoreError(`${what} needs the store on PostgreSQL (DATABASE_URL): every host must reach it`);
  }
}

export class HostRepository {
  readonly #store: Store;

  constructor(store: Store) {
    requirePostgres(store, 'running shard ranges on several hosts');
    this.#store = store;
  }

  /**
   * Takes `ids` for `host`, unless another host wrote any of them within `liveMs`, or a live
   * host counts the shards differently. All or nothing, one claim at a time (advisory lock).
   */
  claim(host: string, ids: readonly number[], shardCount: number, liveMs: number): Promise<ShardConflict[]> {
    return this.#store.transaction(async (trx) => {
      await turnLock('shard-states').execute(trx);
      const now = Number((await sql<{ now: number }>`select ${NOW} as now`.execute(trx)).rows[0]?.now);
      const live = await trx
        .selectFrom('shard_states')
        .select(['shard_id', 'host', 'shard_count', 'updated_at'])
        .where('host', '!=', host)
        .where('updated_at', '>', now - liveMs)
        .execute();
      const mine = new Set(ids);
      const conflicts: ShardConflict[] = [];
      for (const row of live) {
        const seenAgoMs = Math.max(0, now - row.updated_at);
        if (row.shard_count !== shardCount) {
          conflicts.push({ shard: row.shard_id, host: row.host, seenAgoMs, shardCount: row.shard_count });
        } else if (mine.has(row.shard_id)) {
          conflicts.push({ shard: row.shard_id, host: row.host, seenAgoMs });
        }
      }
      if (conflicts.length > 0) return conflicts.sort((x, y) => x.shard - y.shard);
      await trx
        .insertInto('shard_states')
        .values(
          ids.map((id) => ({
            shard_id: id,
            host,
            shard_count: shardCount,
            ready: 0,
            guilds: 0,
            members: 0,
            updated_at: now,
          })),
        )
        .onConflict((oc) =>
          oc.column('shard_id').doUpdateSet((eb) => ({
            host: eb.ref('excluded.host'),
            shard_count: eb.ref('excluded.shard_count'),
            ready: 0,
            guilds: 0,
            members: 0,
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute();
      return [];
    });
  }

  /** Writes this host's shards' numbers; returns the ids it no longer holds (another host took them). */
  async write(host: string, shardCount: number, shards: readonly ShardNumbers[]): Promise<number[]> {
    if (shards.length === 0) return [];
    const written = await this.#store.run((db) =>
      db
        .insertInto('shard_states')
        .values(
          shards.map((s) => ({
            shard_id: s.id,
            host,
            shard_count: shardCount,
            ready: s.ready ? 1 : 0,
            guilds: s.guilds,
            members: s.members,
            updated_at: NOW,
          })),
        )
        .onConflict((oc) =>
          oc
            .column('shard_id')
            .doUpdateSet((eb) => ({
              ready: eb.ref('excluded.ready'),
              guilds: eb.ref('excluded.guilds'),
              members: eb.ref('excluded.members'),
              updated_at: eb.ref('excluded.updated_at'),
            }))
            .where('shard_states.host', '=', host),
        )
        .returning('shard_id')
        .execute(),
    );
    const kept = new Set(written.map((r) => r.shard_id));
    return shards.filter((s) => !kept.has(s.id)).map((s) => s.id);
  }

  /** Every shard's latest numbers, with their age on the database's clock. */
  async read(): Promise<StoredShard[]> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('shard_states')
        .select([
          'shard_id',
          'host',
          'ready',
          'guilds',
          'members',
          sql<number>`${NOW} - updated_at`.as('age'),
        ])
        .orderBy('shard_id')
        .execute(),
    );
    return rows.map((r) => ({
      id: r.shard_id,
      host: r.host,
      ready: r.ready === 1,
      guilds: r.guilds,
      members: r.members,
      ageMs: Number(r.age),
    }));
  }

  /**
   * Hosts other than `host` that have written none of their shards for `silentMs` (gone), and
   * those shards.
   */
  async silent(host: string, silentMs: number): Promise<{ hosts: string[]; shards: number[] }> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('shard_states')
        .select(['host', 'shard_id', sql<number>`${NOW} - updated_at`.as('age')])
        .where('host', '!=', host)
        .execute(),
    );
    const newest = new Map<string, number>();
    for (const row of rows) newest.set(row.host, Math.min(newest.get(row.host) ?? Infinity, Number(row.age)));
    const gone = new Set([...newest].filter(([, age]) => age >= silentMs).map(([h]) => h));
    return {
      hosts: [...gone],
      shards: rows.filter((r) => gone.has(r.host)).map((r) => r.shard_id),
    };
  }

  /** At shutdown: the shards are free for another host at once, and count as stale. */
  async release(host: string, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#store.run((db) =>
      db
        .updateTable('shard_states')
        .set({ updated_at: 0, ready: 0 })
        .where('host', '=', host)
        .where('shard_id', 'in', [...ids])
        .execute(),
    );
  }
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

  /** Takes the lease, or renews it for `holder`, for `ttlMs`; else says who holds it. */
  acquire(name: string, holder: string, ttlMs: number): Promise<LeaseState> {
    return this.#store.transaction(async (trx) => {
      await boundIdle().execute(trx);
      await trx
        .insertInto('leases')
        .values({ name, holder, token: 0, expires_at: 0, last_done_at: null })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      const taken = await sql<{ token: number; expires_in: number }>`
        update leases
           set token = case when holder = ${holder} and expires_at > ${NOW} then token else token + 1 end,
               holder = ${holder},
               expires_at = ${NOW} + ${ttlMs}
         where name = ${name} and (holder = ${holder} or expires_at <= ${NOW})
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
    holder: string,
    token: number,
    spacingMs: number,
    startedAgoMs: number,
  ): Promise<TurnClaim> {
    return this.#store.transaction(async (trx) => {
      await boundIdle().execute(trx);
      const found = await sql<{
        holder: string;
        token: number;
        live: boolean;
        last_done_at: number | null;
        now: number;
      }>`
        select holder, token, expires_at > ${NOW} as live, last_done_at, ${NOW} as now
          from leases where name = ${name} for update`.execute(trx);
      const row = found.rows[0];
      if (!row || row.holder !== holder || Number(row.token) !== token || !row.live) return 'not-holder';
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
  async markDone(name: string, holder: string, token: number, agoMs: number): Promise<void> {
    const at = sql<number>`(${NOW} - ${Math.max(0, Math.round(agoMs))})`;
    await this.#store.run((db) =>
      sql`update leases set last_done_at = ${at}
            where name = ${name} and holder = ${holder} and token = ${token}
              and (last_done_at is null or last_done_at < ${at})`.execute(db),
    );
  }

  /** Whether `holder` still holds the lease with `token` (a check right before acting on it). */
  async holds(name: string, holder: string, token: number): Promise<boolean> {
    const found = await this.#store.run((db) =>
      sql<{ ok: boolean }>`
        select (holder = ${holder} and token = ${token} and expires_at > ${NOW}) as ok
          from leases where name = ${name}`.execute(db),
    );
    return found.rows[0]?.ok === true;
  }

  /** Gives the lease up (shutdown), so that another host takes it at its next try. */
  async release(name: string, holder: string, token: number): Promise<void> {
    await this.#store.run((db) =>
      db
        .updateTable('leases')
        .set({ expires_at: 0 })
        .where('name', '=', name)
        .where('holder', '=', holder)
        .where('token', '=', token)
        .execute(),
    );
  }
}
