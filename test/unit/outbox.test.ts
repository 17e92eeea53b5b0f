/**
 * The outbox engine (src/tasks/outbox.ts) on a store kept in memory with the claims' rules of
 * store/claims.ts (one claim wins, a lease that ran out is taken over with its nonce): what a user
 * would notice is a message posted once, a transient failure tried again sooner first and later
 * after, a server's events in order, and a bot that stops in bounded time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Lease, newNonce } from '../../src/store/claims.js';
import { Outbox, type OutboxOptions, type OutboxSource, type SendOutcome } from '../../src/tasks/outbox.js';
import { captureLogger } from '../support/logs.js';
import { eventually, sleep } from '../support/wait.js';

interface Item {
  id: string;
  lane?: string;
  dueAt: number;
}

interface Row extends Item {
  state: 'waiting' | 'claimed' | 'done' | 'failed';
  by: string | null;
  expiresAt: number | null;
  nonce: string | null;
}

interface Claim extends Lease {
  id: string;
}

/** One store shared by the runners, as the database is by processes. */
class MemoryStore implements OutboxSource<Item, Claim> {
  readonly rows = new Map<string, Row>();
  readonly retries: Array<{ id: string; inMs: number }> = [];

  add(id: string, dueAt = Date.now(), lane?: string): void {
    this.rows.set(id, { id, dueAt, state: 'waiting', by: null, expiresAt: null, nonce: null, lane });
  }

  async due(now: number, until: number, limit: number): Promise<Item[]> {
    return [...this.rows.values()]
      .filter(
        (r) =>
          (r.state === 'waiting' && r.dueAt <= until) || (r.state === 'claimed' && (r.expiresAt ?? 0) <= now),
      )
      .sort((a, b) => a.dueAt - b.dueAt)
      .slice(0, limit)
      .map(({ id, dueAt, lane }) => ({ id, dueAt, ...(lane === undefined ? {} : { lane }) }));
  }

  async claim(item: Item, by: string, leaseMs: number, now: number): Promise<Claim | undefined> {
    const row = this.rows.get(item.id);
    if (!row || row.dueAt > now) return undefined;
    if (row.state !== 'waiting' && !(row.state === 'claimed' && (row.expiresAt ?? 0) <= now))
      return undefined;
    row.state = 'claimed';
    row.by = by;
    row.expiresAt = now + leaseMs;
    row.nonce ??= newNonce();
    return { id: row.id, by, nonce: row.nonce, expiresAt: row.expiresAt };
  }

  #held(claim: Claim): Row | undefined {
    const row = this.rows.get(claim.id);
    return row?.state === 'claimed' && row.by === claim.by && row.nonce === claim.nonce ? row : undefined;
  }

  async finish(claim: Claim, outcome: Exclude<SendOutcome, { kind: 'retry' }>): Promise<boolean> {
    const row = this.#held(claim);
    if (!row) return false;
    row.state = outcome.kind === 'sent' ? 'done' : 'failed';
    row.by = null;
    row.expiresAt = null;
    return true;
  }

  async retryAt(claim: Claim, at: number): Promise<boolean> {
    const row = this.#held(claim);
    if (!row) return false;
    this.retries.push({ id: claim.id, inMs: at - Date.now() });
    row.expiresAt = at;
    return true;
  }
}

interface Acted {
  id: string;
  by: string;
  nonce: string;
  at: number;
}

const outboxes: Array<Outbox<Item, Claim>> = [];
afterEach(async () => {
  await Promise.all(outboxes.splice(0).map((o) => o.stop()));
});

function runner(
  store: OutboxSource<Item, Claim>,
  owner: string,
  act: (item: Item, claim: Claim) => Promise<SendOutcome>,
  options: Partial<OutboxOptions<Item, Claim>> = {},
) {
  const acted: Acted[] = [];
  const { logger, lines } = captureLogger();
  const outbox = new Outbox<Item, Claim>({
    source: store,
    logger,
    owner,
    pollMs: 50,
    horizonMs: 1_000,
    leaseMs: 1_000,
    retryBaseMs: 40,
    policy: {
      noun: 'item',
      verb: 'sent',
      key: (item) => item.id,
      dueAt: (item) => item.dueAt,
      lane: (item) => item.lane,
      fields: (item) => ({ item: item.id }),
      since: (item) => item.dueAt,
      act: (item, claim) => {
        acted.push({ id: item.id, by: claim.by, nonce: claim.nonce, at: Date.now() });
        return act(item, claim);
      },
    },
    ...options,
  });
  outboxes.push(outbox);
  return { outbox, acted, lines };
}

const sent = async (): Promise<SendOutcome> => ({ kind: 'sent' });
const never = (): Promise<SendOutcome> => new Promise(() => undefined);

describe('the outbox engine', () => {
  it('takes over a claim whose lease ran out (its process died) with the same nonce, and posts once', async () => {
    const store = new MemoryStore();
    store.add('a');
    // The first process claims and sends, and never hears back: as if killed during the send.
    const dead = runner(store, 'dead', never, { leaseMs: 300, stopTimeoutMs: 50 });
    dead.outbox.start();
    await eventually(() => dead.acted[0], 2_000, 'the first send');
    const next = runner(store, 'next', sent, { leaseMs: 300 });
    next.outbox.start();
    // Not before the lease runs out.
    await sleep(150);
    expect(next.acted).toEqual([]);
    await eventually(() => next.acted[0], 2_000, 'the send of the process that took over');
    expect(next.acted[0]?.nonce).toBe(dead.acted[0]?.nonce);
    await eventually(() => (store.rows.get('a')?.state === 'done' ? true : undefined), 2_000, 'done');
    expect(dead.acted).toHaveLength(1);
    expect(next.acted).toHaveLength(1);
  });

  it('stops in bounded time while a send hangs, and never looks or sends after', async () => {
    const store = new MemoryStore();
    store.add('hangs');
    let looks = 0;
    const counting: OutboxSource<Item, Claim> = {
      due: (now, until, limit) => {
        looks += 1;
        return store.due(now, until, limit);
      },
      claim: (item, by, leaseMs, now) => store.claim(item, by, leaseMs, now),
      finish: (claim, outcome) => store.finish(claim, outcome),
      retryAt: (claim, at) => store.retryAt(claim, at),
    };
    const { outbox, acted } = runner(store, 'p', never, { stopTimeoutMs: 200, source: counting });
    outbox.start();
    await eventually(() => acted[0], 2_000, 'the send');
    const started = Date.now();
    await outbox.stop();
    const took = Date.now() - started;
    // stopTimeoutMs, then the loop's grace (1 s).
    expect(took).toBeGreaterThanOrEqual(180);
    expect(took).toBeLessThan(2_500);
    const after = looks;
    store.add('later');
    outbox.wake(Date.now());
    await sleep(200);
    expect(looks).toBe(after);
    expect(acted.map((a) => a.id)).toEqual(['hangs']);
  });

  it('tries a failing send again with a growing backoff and the same nonce, then records it', async () => {
    const store = new MemoryStore();
    store.add('flaky');
    let calls = 0;
    const { outbox, acted, lines } = runner(
      store,
      'p',
      async () => {
        calls += 1;
        if (calls === 2) throw new Error('lost connection');
        return calls <= 3 ? { kind: 'retry', detail: 'discord 503' } : { kind: 'sent' };
      },
      // No jitter upwards: each wait is half its step (40, 80, 160 ms steps).
      { random: () => 0, pollMs: 10_000 },
    );
    outbox.start();
    await eventually(() => (store.rows.get('flaky')?.state === 'done' ? true : undefined), 3_000, 'done');
    expect(acted).toHaveLength(4);
    expect(new Set(acted.map((a) => a.nonce)).size).toBe(1);
    // Sooner than the lease (1 s) and the next look (10 s), each wait twice the one before: as the
    // engine decided them (its line), and as the store was told them (its clock read a little later).
    const waits = lines.filter((l) => l.msg?.includes('tried again')).map((l) => l.retryInMs);
    expect(waits).toEqual([20, 40, 80]);
    expect(store.retries).toHaveLength(3);
    for (const [i, retry] of store.retries.entries())
      expect(retry.inMs).toBeLessThanOrEqual(waits[i] as number);
    const gaps = acted.slice(1).map((a, i) => a.at - acted[i]!.at);
    expect(gaps[0]).toBeGreaterThanOrEqual(15);
    expect(gaps[2]).toBeGreaterThanOrEqual(75);
    expect(gaps[2]).toBeLessThan(1_000);
  });

  it('records a failure that sending again will not fix, and does not send it again', async () => {
    const store = new MemoryStore();
    store.add('gone');
    const { outbox, acted } = runner(store, 'p', async () => ({ kind: 'failed', reason: 'channel-deleted' }));
    outbox.start();
    await eventually(() => (store.rows.get('gone')?.state === 'failed' ? true : undefined), 2_000, 'failed');
    await sleep(200);
    expect(acted).toHaveLength(1);
  });

  it('acts on each item once when two runners share a store', async () => {
    const store = new MemoryStore();
    const now = Date.now();
    for (let i = 0; i < 80; i++) store.add(`i${String(i).padStart(2, '0')}`, now + (i % 9) * 15);
    const send = async (): Promise<SendOutcome> => {
      await sleep(Math.random() * 5);
      return { kind: 'sent' };
    };
    const a = runner(store, 'a', send, { concurrency: 4 });
    const b = runner(store, 'b', send, { concurrency: 4 });
    a.outbox.start();
    b.outbox.start();
    await eventually(
      () => ([...store.rows.values()].every((r) => r.state === 'done') ? true : undefined),
      5_000,
      'every item done',
    );
    await sleep(150);
    const ids = [...a.acted, ...b.acted].map((x) => x.id);
    expect(ids).toHaveLength(80);
    expect(new Set(ids).size).toBe(80);
    expect(a.acted.length).toBeGreaterThan(0);
    expect(b.acted.length).toBeGreaterThan(0);
  });

  it("keeps a lane's order: one to be tried again holds its lane's later items back, not the others", async () => {
    const store = new MemoryStore();
    const now = Date.now() - 1_000;
    store.add('g1:1', now, 'g1');
    store.add('g1:2', now + 1, 'g1');
    store.add('g1:3', now + 2, 'g1');
    store.add('g2:1', now + 3, 'g2');
    let first = true;
    const { outbox, acted } = runner(
      store,
      'p',
      async (item) => {
        if (item.id === 'g1:1' && first) {
          first = false;
          return { kind: 'retry', detail: 'discord 500' };
        }
        return { kind: 'sent' };
      },
      { retryBaseMs: 300, random: () => 1 },
    );
    outbox.start();
    await eventually(
      () => ([...store.rows.values()].every((r) => r.state === 'done') ? true : undefined),
      3_000,
      'every item done',
    );
    const order = acted.map((a) => a.id);
    expect(order.filter((id) => id.startsWith('g1'))).toEqual(['g1:1', 'g1:1', 'g1:2', 'g1:3']);
    // The other server did not wait for the retry.
    expect(order.indexOf('g2:1')).toBeLessThan(order.lastIndexOf('g1:1'));
  });

  it("a send that hangs does not keep another lane's item, stored meanwhile, from going", async () => {
    const store = new MemoryStore();
    // Only wakes make it look: the poll is far off.
    const { outbox, acted } = runner(
      store,
      'p',
      async (item) => (item.lane === 'slow' ? never() : { kind: 'sent' }),
      { pollMs: 60_000, stopTimeoutMs: 50 },
    );
    outbox.start();
    await sleep(50);
    store.add('slow:1', Date.now(), 'slow');
    outbox.wake();
    await eventually(() => (acted.length === 1 ? true : undefined), 1_000, 'the slow send to start');
    store.add('quick:1', Date.now(), 'quick');
    outbox.wake();
    await eventually(
      () => (store.rows.get('quick:1')?.state === 'done' ? true : undefined),
      1_000,
      'the other lane to go',
    );
    expect(acted.map((a) => a.id)).toEqual(['slow:1', 'quick:1']);
  });

  it('a hook that throws does not stop the engine', async () => {
    const store = new MemoryStore();
    store.add('a');
    store.add('b');
    const { outbox, acted } = runner(store, 'p', sent, {
      onDone: () => {
        throw new Error('metrics broke');
      },
    });
    outbox.start();
    await eventually(
      () => ([...store.rows.values()].every((r) => r.state === 'done') ? true : undefined),
      2_000,
      'every item done',
    );
    expect(acted).toHaveLength(2);
  });
});
