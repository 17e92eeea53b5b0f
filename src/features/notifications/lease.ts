/**
 * Who holds the directory's notifications connection of a key: exactly one process, whatever the
 * number of processes and hosts, through a lease in the store (`leases`, named after a hash of the
 * key, never the key).
 *
 * - PostgreSQL (several hosts): hosts/leases.ts, on the database's clock with a fencing token.
 * - SQLite (one machine): the same row, on the machine's clock (every process sharing the file
 *   shares the clock), taken with one conditional UPDATE, so of two processes one holds it.
 */
import { createHash } from 'node:crypto';
import { LeaseRepository } from '../../hosts/leases.js';
import type { HostProcess } from '../../hosts/store.js';
import type { Store } from '../../store/store.js';

export interface KeyLease {
  /** Takes or renews the lease for `ttlMs`: whether this process holds it now. Throws the store's errors. */
  acquire(ttlMs: number): Promise<boolean>;
  /** Gives it up (shutdown), so another process takes it at its next try. Never throws. */
  release(): Promise<void>;
}

/** The lease's name: a hash of the key (the store never holds the key). */
export function leaseName(key: string): string {
  return `notify:${createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 32)}`;
}

export function keyLease(store: Store, key: string, holder: HostProcess, now: () => number): KeyLease {
  const name = leaseName(key);
  return store.engine === 'postgres'
    ? postgresLease(new LeaseRepository(store), name, holder)
    : localLease(store, name, holder, now);
}

function postgresLease(leases: LeaseRepository, name: string, holder: HostProcess): KeyLease {
  let token: number | undefined;
  return {
    async acquire(ttlMs) {
      const state = await leases.acquire(name, holder, ttlMs);
      token = state.held ? state.token : undefined;
      return state.held;
    },
    async release() {
      if (token === undefined) return;
      const held = token;
      token = undefined;
      await leases.release(name, holder, held).catch(() => undefined);
    },
  };
}

function localLease(store: Store, name: string, holder: HostProcess, now: () => number): KeyLease {
  return {
    async acquire(ttlMs) {
      const at = now();
      return store.transaction(async (trx) => {
        await trx
          .insertInto('leases')
          .values({
            name,
            holder: holder.host,
            holder_instance: holder.instance,
            token: 0,
            expires_at: 0,
            last_done_at: null,
          })
          .onConflict((oc) => oc.column('name').doNothing())
          .execute();
        const taken = await trx
          .updateTable('leases')
          .set((eb) => ({
            token: eb('token', '+', 1),
            holder: holder.host,
            holder_instance: holder.instance,
            expires_at: at + ttlMs,
          }))
          .where('name', '=', name)
          .where((eb) =>
            eb.or([
              eb.and([eb('holder', '=', holder.host), eb('holder_instance', '=', holder.instance)]),
              eb('expires_at', '<=', at),
            ]),
          )
          .executeTakeFirst();
        return Number(taken.numUpdatedRows) > 0;
      });
    },
    async release() {
      await store
        .run((db) =>
          db
            .updateTable('leases')
            .set({ expires_at: 0 })
            .where('name', '=', name)
            .where('holder', '=', holder.host)
            .where('holder_instance', '=', holder.instance)
            .execute(),
        )
        .catch(() => undefined);
    },
  };
}
