/**
 * The directory's rate limits shared by several processes: SharedRateLimiter over the ledger on
 * PostgreSQL. Each "process" here is a limiter with a store (a connection pool) of its own, on
 * one schema, as the shard processes of start:sharded are. Windows are scaled down (5 per
 * 1 s, 1 per 400 ms on a route) so that a test takes a few seconds, not minutes.
 */
import { describe, expect, it } from 'vitest';
import { RateLimitedError, UnavailableError } from '../../src/directory/errors.js';
import type { Grant } from '../../src/directory/rate-limiter.js';
import {
  type RateLimitLedger,
  SharedRateLimiter,
  type SharedRateLimiterOptions,
} from '../../src/directory/shared-rate-limiter.js';
import { openStore, PostgresRateLimitLedger, type Store } from '../../src/store/index.js';
import { sql } from '../../src/store/kysely.js';
import { TURN_IDLE_LIMIT_MS } from '../../src/store/turns.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { holdTurnFrozen } from './frozen-turn.js';
import { type Place, perTest } from './places.js';

const GLOBAL = { max: 5, windowMs: 1_000 };
const ROUTES = { max: 1, windowMs: 400 };
const MARGIN_MS = 25;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const { place, undo } = perTest();

/** A process of the bot: a store of its own on `where`, and a limiter on its ledger. */
async function processOn(
  where: Place,
  options: Partial<SharedRateLimiterOptions> = {},
): Promise<{ store: Store; limiter: SharedRateLimiter }> {
  const store = await openStore(where.options);
  const limiter = new SharedRateLimiter({
    ledger: new PostgresRateLimitLedger(store),
    global: GLOBAL,
    routes: ROUTES,
    marginMs: MARGIN_MS,
    ...options,
  });
  undo(() => store.close());
  undo(() => limiter.close());
  return { store, limiter };
}

/** A request as the transport makes it: take a slot, "send", settle when answered. */
async function request(
  limiter: SharedRateLimiter,
  log: Array<{ at: number; who: string; buckets: readonly string[] }>,
  who: string,
  options: Parameters<SharedRateLimiter['acquire']>[0] = {},
): Promise<Grant> {
  const grant = await limiter.acquire(options);
  log.push({ at: performance.now(), who, buckets: grant.buckets });
  grant.settle();
  return grant;
}

/** The most grants of `bucket` in any window of `windowMs`. */
function mostInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0; i < sorted.length; i++) {
    let n = 0;
    for (let j = i; j < sorted.length && (sorted[j] as number) - (sorted[i] as number) < windowMs; j++) n++;
    most = Math.max(most, n);
  }
  return most;
}

describe('the directory rate limits shared by several processes (PostgreSQL)', () => {
  it.skipIf(!HAS_POSTGRES)(
    'three processes at once never pass the limits together, and go about as fast as they allow',
    async () => {
      const where = await place();
      const processes = await Promise.all([processOn(where), processOn(where), processOn(where)]);
      const log: Array<{ at: number; who: string; buckets: readonly string[] }> = [];
      const started = performance.now();
      // 15 requests, 5 of them on the /server route, spread over three processes at once.
      await Promise.all(
        processes.flatMap((p, i) =>
          Array.from({ length: 5 }, (_, k) =>
            request(p.limiter, log, `p${i}`, k < 2 && i < 2 ? { buckets: ['server'] } : {}),
          ),
        ),
      );
      const took = performance.now() - started;
      expect(log).toHaveLength(15);
      // The limits as the ledger decided them, on the database's clock. (Times taken in each
      // process when its grant arrives would not do: under load a process learns of its grant
      // late, and the limiter counts an unanswered request as happening now, not then.)
      const grants = await processes[0]!.store.run((db) =>
        db.selectFrom('directory_grants').select(['buckets', 'granted_at']).execute(),
      );
      expect(grants).toHaveLength(15);
      expect(
        mostInWindow(
          grants.map((g) => g.granted_at),
          GLOBAL.windowMs,
        ),
      ).toBeLessThanOrEqual(GLOBAL.max);
      const server = grants.filter((g) => g.buckets.split(',').includes('server')).map((g) => g.granted_at);
      expect(server).toHaveLength(4);
      expect(mostInWindow(server, ROUTES.windowMs)).toBe(1);
      // 15 at 5 per second need two full windows; the turns add little to that.
      expect(took).toBeGreaterThanOrEqual(2 * GLOBAL.windowMs);
      expect(took).toBeLessThan(2 * (GLOBAL.windowMs + MARGIN_MS) + 3_000);
      // Nothing left behind: no waiter registered, every grant settled (a settle is written
      // without the request waiting for it: give the last ones a moment).
      const leftBehind = () =>
        processes[0]!.store.run(async (db) => ({
          waiters: (await db.selectFrom('directory_waiters').select('id').execute()).length,
          unsettled: (
            await db.selectFrom('directory_grants').select('id').where('settled_at', 'is', null).execute()
          ).length,
        }));
      for (let i = 0; i < 40 && (await leftBehind()).unsettled > 0; i++) await sleep(50);
      expect(await leftBehind()).toEqual({ waiters: 0, unsettled: 0 });
    },
  );

  it.skipIf(!HAS_POSTGRES)(
    "an /up waiting in one process goes before another process's background requests",
    async () => {
      const where = await place();
      // Each process names its grants, so that the ledger's order can be read back.
      let n = 0;
      const named = (who: string) => ({ newId: () => `${who}-${n++}` });
      const [a, b, c] = await Promise.all([
        processOn(where, named('first')),
        processOn(where, named('background')),
        processOn(where, named('interactive')),
      ]);
      const log: Array<{ at: number; who: string; buckets: readonly string[] }> = [];
      // A takes the /server route's one slot; B queues background work for it first, and C's
      // interactive request for it comes after.
      await request(a!.limiter, log, 'first', { buckets: ['server'] });
      const background = Array.from({ length: 3 }, () =>
        request(b!.limiter, log, 'background', { priority: 'background', buckets: ['server'] }),
      );
      await new Promise((resolve) => setTimeout(resolve, 150));
      const interactive = request(c!.limiter, log, 'interactive', {
        priority: 'interactive',
        buckets: ['server'],
      });
      await Promise.all([...background, interactive]);
      // In the order the ledger granted them, on the database's clock.
      const grants = await a!.store.run((db) =>
        db.selectFrom('directory_grants').select(['id', 'granted_at']).orderBy('granted_at').execute(),
      );
      expect(grants.map((g) => g.id.replace(/-\d+$/, ''))).toEqual([
        'first',
        'interactive',
        'background',
        'background',
        'background',
      ]);
      expect(
        mostInWindow(
          grants.map((g) => g.granted_at),
          ROUTES.windowMs,
        ),
      ).toBe(1);
    },
  );

  it.skipIf(!HAS_POSTGRES)(
    'fails at once, with the expected wait, a request that would wait past its deadline',
    async () => {
      const where = await place();
      const [a, b] = await Promise.all([processOn(where), processOn(where)]);
      await request(a!.limiter, [], 'a', { buckets: ['server'] });
      const started = performance.now();
      const err = await b!.limiter
        .acquire({ buckets: ['server'], deadline: Date.now() + 100, method: 'postServer' })
        .catch((e: unknown) => e);
      const took = performance.now() - started;
      expect(err).toBeInstanceOf(RateLimitedError);
      const wait = (err as RateLimitedError).retryAfterMs ?? 0;
      expect(wait).toBeGreaterThan(100);
      expect(wait).toBeLessThanOrEqual(ROUTES.windowMs + MARGIN_MS);
      // At once: not after waiting the route's window out.
      expect(took).toBeLessThan(wait);
      // Within the deadline it waits, and goes.
      const grant = await b!.limiter.acquire({ buckets: ['server'], deadline: Date.now() + 1_000 });
      expect(grant.buckets).toEqual(['global', 'server']);
    },
  );

  it.skipIf(!HAS_POSTGRES)(
    "a 429 in one process holds the bucket for every process until the directory's Retry-After",
    async () => {
      const where = await place();
      const [a, b] = await Promise.all([processOn(where), processOn(where)]);
      a!.limiter.penalize('global', Date.now() + 600);
      // The hold is written without waiting (the transport goes on): give it the moment it takes.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = performance.now();
      await request(b!.limiter, [], 'b');
      expect(performance.now() - started).toBeGreaterThanOrEqual(500);
    },
  );

  it.skipIf(!HAS_POSTGRES)(
    'a grant of a process that died unanswered counts as in flight until the cap, then frees its slot',
    async () => {
      const where = await place();
      const dead = await processOn(where, { inFlightCapMs: 800 });
      const live = await processOn(where, { inFlightCapMs: 800 });
      const route = { buckets: ['server'] };
      // Granted, never settled: the process was killed with the request on its way.
      await dead.limiter.acquire(route);
      await dead.store.close();
      const started = performance.now();
      await request(live.limiter, [], 'live', route);
      const waited = performance.now() - started;
      // Not at 400 ms (the window after a settled grant), but after the cap plus the window.
      expect(waited).toBeGreaterThanOrEqual(800 + ROUTES.windowMs - 50);
      expect(waited).toBeLessThan(800 + ROUTES.windowMs + 1_500);
    },
  );

  it.skipIf(!HAS_POSTGRES)(
    'a waiter whose process died stops holding back the others once its registration expires',
    async () => {
      const where = await place();
      const { store, limiter } = await processOn(where);
      await request(limiter, [], 'first', { buckets: ['server'] });
      // A dead process's /up, waiting for the same route; its last turn was 3.5 s ago, so its
      // registration expires in 1.5 s. Until then it goes first at every turn, and never takes it.
      await store.run((db) =>
        sql`insert into directory_waiters (id, priority, buckets, enqueued_at, expires_at)
          values ('dead', 'interactive', 'global,server',
                  (extract(epoch from clock_timestamp()) * 1000)::bigint - 3500,
                  (extract(epoch from clock_timestamp()) * 1000)::bigint + 1500)`.execute(db),
      );
      const started = performance.now();
      await request(limiter, [], 'background', { priority: 'background', buckets: ['server'] });
      const waited = performance.now() - started;
      expect(waited).toBeGreaterThanOrEqual(1_400);
      expect(waited).toBeLessThan(3_000);
      expect(await store.run((db) => db.selectFrom('directory_waiters').select('id').execute())).toEqual([]);
    },
  );

  it.skipIf(!HAS_POSTGRES)(
    'a process frozen in the middle of its turn holds the others up no longer than the idle bound (5 s)',
    async () => {
      const where = await place();
      // A process of the bot that takes a turn and freezes in it (its connection stays open).
      const child = await holdTurnFrozen(where.options);
      undo(() => child.kill('SIGKILL'));
      const { limiter } = await processOn(where);
      const started = performance.now();
      await request(limiter, [], 'live');
      const waited = performance.now() - started;
      child.kill('SIGKILL');
      // It waited for the frozen turn (so the lock was held), until PostgreSQL ended that session.
      expect(waited).toBeGreaterThanOrEqual(TURN_IDLE_LIMIT_MS - 1_500);
      expect(waited).toBeLessThan(TURN_IDLE_LIMIT_MS + 4_000);
    },
    20_000,
  );

  it('sends nothing while the ledger cannot be reached, and says so by the deadline', async () => {
    let turns = 0;
    const errors: string[] = [];
    const ledger: RateLimitLedger = {
      turn: async () => {
        turns++;
        throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      },
      settle: async () => undefined,
      hold: async () => undefined,
      leave: async () => undefined,
    };
    const limiter = new SharedRateLimiter({
      ledger,
      global: GLOBAL,
      routes: ROUTES,
      onLedgerError: (_err, what) => errors.push(what),
    });
    const started = performance.now();
    const err = await limiter.acquire({ deadline: Date.now() + 800 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as Error).message).toMatch(/shared rate limit .* cannot be reached, so nothing was sent/);
    // Not the directory's fault: the person is told the bot's database is away (error-message.ts).
    expect((err as UnavailableError).reason).toBe('limits');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(turns).toBeGreaterThanOrEqual(3);
    expect(new Set(errors)).toEqual(new Set(['turn']));
    // An /up has 14 minutes: it still hears within unreachableWaitMs, not at its deadline.
    const patient = new SharedRateLimiter({ ledger, global: GLOBAL, routes: ROUTES, unreachableWaitMs: 600 });
    const since = performance.now();
    await expect(patient.acquire({ deadline: Date.now() + 14 * 60_000 })).rejects.toBeInstanceOf(
      UnavailableError,
    );
    expect(performance.now() - since).toBeLessThan(2_000);
  });

  it.skipIf(!HAS_POSTGRES)(
    'close fails the requests still waiting, and takes them out of the ledger',
    async () => {
      const where = await place();
      const { store, limiter } = await processOn(where);
      await request(limiter, [], 'first', { buckets: ['server'] });
      const waiting = limiter.acquire({ buckets: ['server'] });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(limiter.pending).toBe(1);
      limiter.close(new Error('shutting down'));
      await expect(waiting).rejects.toThrow('shutting down');
      expect(limiter.pending).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await store.run((db) => db.selectFrom('directory_waiters').select('id').execute())).toEqual([]);
    },
  );

  it('the ledger needs PostgreSQL', async () => {
    const sqlite = await place('sqlite');
    const store = await openStore(sqlite.options);
    undo(() => store.close());
    expect(() => new PostgresRateLimitLedger(store)).toThrow(/need the store on PostgreSQL/);
  });
});
