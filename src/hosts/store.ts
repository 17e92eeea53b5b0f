/**
 * What the hosts of one bot share in PostgreSQL: which host runs each shard and its latest
 * numbers (shard_states), and leases with fencing tokens (leases: the statistics leader).
 * Every time is the database's clock, read in the statement that uses it; no host's clock
 * decides anything. PostgreSQL only: several hosts need a server they all reach. The leases are
 * leases.ts's.
 */
import { StoreError } from '../store/errors.js';
import { sql } from '../store/kysely.js';
import type { Store } from '../store/store.js';
import { turnLock } from '../store/turns.js';

/** The database's clock, in epoch milliseconds, when the statement runs. */
export const NOW = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`;

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

/**
 * One process of a host: its HOST_ID, and a random id of its own, so that two processes with one
 * name (cloned machines) are told apart.
 */
export interface HostProcess {
  host: string;
  instance: string;
}

/** Why a host may not run the shards it was given. */
export interface ShardConflict {
  shard: number;
  host: string;
  seenAgoMs: number;
  /** The other host's SHARD_COUNT, when it is not ours. */
  shardCount?: number;
}

/** Another process with this host's name wrote its shards lately (it may be alive). */
export interface Namesake {
  /** When (the database's clock, epoch ms) it last wrote, and how long ago. */
  writtenAt: number;
  seenAgoMs: number;
}

export interface ShardClaim {
  /** Other hosts that run these shards, or count the shards differently: refused. */
  conflicts: ShardConflict[];
  /** Another process of this name, live: refused. */
  namesake: Namesake | undefined;
}

export function requirePostgres(store: Store, what: string): void {
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
   * Takes `ids` for this process, unless another host wrote any of them within `liveMs`, a live
   * host counts the shards differently, or another process of the same name wrote within
   * `liveMs` (after `namesakeSilentSince`, when given: a process of this name taken for dead once
   * it has not written since then). All or nothing, one claim at a time (advisory lock).
   */
  claim(
    self: HostProcess,
    ids: readonly number[],
    shardCount: number,
    liveMs: number,
    namesakeSilentSince?: number,
  ): Promise<ShardClaim> {
    return this.#store.transaction(async (trx) => {
      await turnLock('shard-states').execute(trx);
      const now = Number((await sql<{ now: number }>`select ${NOW} as now`.execute(trx)).rows[0]?.now);
      const live = await trx
        .selectFrom('shard_states')
        .select(['shard_id', 'host', 'instance', 'shard_count', 'updated_at'])
        .where('updated_at', '>', now - liveMs)
        .execute();
      const mine = new Set(ids);
      const conflicts: ShardConflict[] = [];
      let namesakeAt: number | undefined;
      for (const row of live) {
        const seenAgoMs = Math.max(0, now - row.updated_at);
        if (row.host === self.host) {
          const silent = namesakeSilentSince !== undefined && Number(row.updated_at) <= namesakeSilentSince;
          if (row.instance !== self.instance && !silent) {
            namesakeAt = Math.max(namesakeAt ?? 0, Number(row.updated_at));
          }
        } else if (row.shard_count !== shardCount) {
          conflicts.push({ shard: row.shard_id, host: row.host, seenAgoMs, shardCount: row.shard_count });
        } else if (mine.has(row.shard_id)) {
          conflicts.push({ shard: row.shard_id, host: row.host, seenAgoMs });
        }
      }
      const namesake =
        namesakeAt === undefined
          ? undefined
          : { writtenAt: namesakeAt, seenAgoMs: Math.max(0, now - namesakeAt) };
      if (conflicts.length > 0 || namesake) {
        return { conflicts: conflicts.sort((x, y) => x.shard - y.shard), namesake };
      }
      await trx
        .insertInto('shard_states')
        .values(
          ids.map((id) => ({
            shard_id: id,
            host: self.host,
            instance: self.instance,
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
            instance: eb.ref('excluded.instance'),
            shard_count: eb.ref('excluded.shard_count'),
            ready: 0,
            guilds: 0,
            members: 0,
            updated_at: eb.ref('excluded.updated_at'),
          })),
        )
        .execute();
      return { conflicts: [], namesake: undefined };
    });
  }

  /**
   * When (the database's clock) another process of this name last wrote its shards, and how
   * long ago; undefined when none ever did.
   */
  async namesake(self: HostProcess): Promise<Namesake | undefined> {
    const found = await this.#store.run((db) =>
      sql<{ written_at: number | null; now: number }>`
        select max(updated_at) as written_at, ${NOW} as now from shard_states
         where host = ${self.host} and instance != ${self.instance}`.execute(db),
    );
    const row = found.rows[0];
    if (!row || row.written_at === null) return undefined;
    const writtenAt = Number(row.written_at);
    return { writtenAt, seenAgoMs: Math.max(0, Number(row.now) - writtenAt) };
  }

  /**
   * Writes this process's shards' numbers; returns the ids it no longer holds (another host, or
   * another process of its name, took them).
   */
  async write(self: HostProcess, shardCount: number, shards: readonly ShardNumbers[]): Promise<number[]> {
    if (shards.length === 0) return [];
    const written = await this.#store.run((db) =>
      db
        .insertInto('shard_states')
        .values(
          shards.map((s) => ({
            shard_id: s.id,
            host: self.host,
            instance: self.instance,
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
            .where('shard_states.host', '=', self.host)
            .where('shard_states.instance', '=', self.instance),
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
  async release(self: HostProcess, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#store.run((db) =>
      db
        .updateTable('shard_states')
        .set({ updated_at: 0, ready: 0 })
        .where('host', '=', self.host)
        .where('instance', '=', self.instance)
        .where('shard_id', 'in', [...ids])
        .execute(),
    );
  }
}
