/**
 * IDENTIFY turns shared by several hosts (SharedIdentifyThrottler over the ledger on
 * PostgreSQL): each "host" has a store of its own on one schema; Discord's 5 s per bucket is
 * scaled down to 300 ms.
 */
import { describe, expect, it } from 'vitest';
import { PostgresIdentifyLedger } from '../../src/hosts/identify-ledger.js';
import { type IdentifyLedger, SharedIdentifyThrottler } from '../../src/hosts/identify-throttle.js';
import { openStore, StoreError } from '../../src/store/index.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { type Place, perTest } from './places.js';

const SPACING_MS = 300;
const { place, undo } = perTest();

/** A host's ledger, recording the database time of each turn it was given. */
async function ledgerOn(where: Place, turns: Array<{ bucket: number; at: number }>): Promise<IdentifyLedger> {
  const store = await openStore(where.options);
  undo(() => store.close());
  const ledger = new PostgresIdentifyLedger(store);
  return {
    take: async (bucket, spacingMs) => {
      const turn = await ledger.take(bucket, spacingMs);
      if (turn.granted) turns.push({ bucket, at: turn.at });
      return turn;
    },
  };
}

function gaps(times: number[]): number[] {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted.slice(1).map((t, i) => t - (sorted[i] as number));
}

describe('IDENTIFY turns shared by several hosts (PostgreSQL)', () => {
  it.skipIf(!HAS_POSTGRES)(
    'spaces the identifies of three hosts by the bucket spacing, whichever host they come from',
    async () => {
      const where = await place();
      const turns: Array<{ bucket: number; at: number }> = [];
      const hosts = await Promise.all(
        [0, 1, 2].map(
          async () =>
            new SharedIdentifyThrottler({
              ledger: await ledgerOn(where, turns),
              maxConcurrency: 1,
              spacingMs: SPACING_MS,
            }),
        ),
      );
      const signal = new AbortController().signal;
      const started = performance.now();
      // Two shards a host, all asking at once.
      await Promise.all(
        [0, 1, 2, 3, 4, 5].map((shard) => hosts[Math.floor(shard / 2)]!.waitForIdentify(shard, signal)),
      );
      expect(turns).toHaveLength(6);
      expect(Math.min(...gaps(turns.map((t) => t.at)))).toBeGreaterThanOrEqual(SPACING_MS);
      // About as fast as allowed: five spacings, and the waits' rounding.
      expect(performance.now() - started).toBeLessThan(5 * SPACING_MS + 2_000);
    },
  );

  it.skipIf(!HAS_POSTGRES)(
    'lets buckets of max_concurrency go side by side, each spaced on its own',
    async () => {
      const where = await place();
      const turns: Array<{ bucket: number; at: number }> = [];
      const [a, b] = await Promise.all(
        [0, 1].map(
          async () =>
            new SharedIdentifyThrottler({
              ledger: await ledgerOn(where, turns),
              maxConcurrency: 2,
              spacingMs: SPACING_MS,
            }),
        ),
      );
      const signal = new AbortController().signal;
      await Promise.all([a!.waitForIdentify(0, signal), b!.waitForIdentify(1, signal)]);
      // Different buckets: both at once.
      expect(Math.abs(turns[0]!.at - turns[1]!.at)).toBeLessThan(SPACING_MS);
      await Promise.all([a!.waitForIdentify(2, signal), b!.waitForIdentify(4, signal)]);
      const bucket0 = turns.filter((t) => t.bucket === 0).map((t) => t.at);
      expect(bucket0).toHaveLength(3);
      expect(Math.min(...gaps(bucket0))).toBeGreaterThanOrEqual(SPACING_MS);
    },
  );

  it.skipIf(!HAS_POSTGRES)('gives up waiting at once when the shard is aborted', async () => {
    const where = await place();
    const throttler = new SharedIdentifyThrottler({
      ledger: await ledgerOn(where, []),
      maxConcurrency: 1,
      spacingMs: 10_000,
    });
    await throttler.waitForIdentify(0, new AbortController().signal);
    const controller = new AbortController();
    const waiting = throttler.waitForIdentify(1, controller.signal);
    setTimeout(() => controller.abort(new Error('shard destroyed')), 100);
    const started = performance.now();
    await expect(waiting).rejects.toThrow('shard destroyed');
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('never identifies without a turn: a ledger that fails is asked again', async () => {
    let calls = 0;
    const errors: unknown[] = [];
    const throttler = new SharedIdentifyThrottler({
      ledger: {
        take: async () => {
          calls++;
          if (calls <= 2) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
          return { granted: true, at: Date.now() };
        },
      },
      maxConcurrency: 1,
      onLedgerError: (err) => errors.push(err),
    });
    const started = performance.now();
    await throttler.waitForIdentify(0, new AbortController().signal);
    expect(calls).toBe(3);
    expect(errors).toHaveLength(2);
    // Asked again every second.
    expect(performance.now() - started).toBeGreaterThanOrEqual(1_900);
  });

  it('needs PostgreSQL', async () => {
    const where = await place('sqlite');
    const store = await openStore(where.options);
    undo(() => store.close());
    expect(() => new PostgresIdentifyLedger(store)).toThrow(StoreError);
  });
});
