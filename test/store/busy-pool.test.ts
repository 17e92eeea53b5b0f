/**
 * A burst larger than the pool (src/store/postgres.ts patientPool): callers wait for a connection
 * as long as others get their work done, past pg-pool's own bound (the connect timeout), so a
 * thousand webhook deliveries at once are stored rather than answered 503; a pool whose every
 * connection hangs still fails its waiters at that bound.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store, StoreUnavailableError } from '../../src/store/index.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { freshPlace, type Place } from './places.js';

const opened: Array<{ store: Store; place: Place }> = [];
afterEach(async () => {
  for (const { store, place } of opened.splice(0)) {
    await store.close();
    await place.remove();
  }
});

async function smallPool(poolSize: number): Promise<Store> {
  const place = await freshPlace('postgres');
  const store = await openStore({ ...place.options, poolSize, connectTimeoutMs: 200 });
  opened.push({ store, place });
  return store;
}

describe.skipIf(!HAS_POSTGRES)('a PostgreSQL pool smaller than the burst', () => {
  it('serves 40 callers on 2 connections though the last wait about 1 s, 5 times the bound', async () => {
    const store = await smallPool(2);
    const started = performance.now();
    const waited = await Promise.all(
      Array.from({ length: 40 }, () =>
        store.run(async (db) => {
          await sql`select pg_sleep(0.05)`.execute(db);
          return performance.now() - started;
        }),
      ),
    );
    // Two at a time, 50 ms each: the last finish about a second in, every one of them served.
    expect(waited).toHaveLength(40);
    expect(Math.max(...waited)).toBeGreaterThan(800);
  });

  it('fails a waiter at the bound when the connections hang and nothing comes back', async () => {
    const store = await smallPool(1);
    const hung = store.run((db) => sql`select pg_sleep(2)`.execute(db));
    const started = performance.now();
    const failure = await store.run((db) => sql`select 1`.execute(db)).catch((err: unknown) => err);
    const tookMs = performance.now() - started;
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect((failure as Error).message).toMatch(/timeout exceeded when trying to connect/);
    expect(tookMs).toBeLessThan(1_500);
    await hung;
  });
});
