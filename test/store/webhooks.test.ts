/**
 * The directory's webhooks in the store, on both engines: the key kept only as a salted hash and
 * checked in constant time; an event stored once however often it is delivered; claims of which
 * one wins, taken over with the same nonce once their lease ran out; two announcers on one store
 * (two processes) handling every event exactly once and each server's in order; an up told by the
 * webhook and through the bot counted once, even when both are recorded at the same moment; the
 * reminder moved by the last known cooldown; a server's webhook and events gone with it; the keys
 * known in memory, so the receiver turns 10,000 guessed server ids away without asking the store;
 * each server's next event due in turn however many another has waiting; a server's events
 * refused past its limits (waiting, and stored per window), nothing of them stored.
 */
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebhookAnnouncer } from '../../src/features/webhooks/announcer.js';
import { startWebhookReceiver } from '../../src/features/webhooks/receiver.js';
import { createLogger } from '../../src/log/logger.js';
import {
  HistoryRepository,
  ReminderRepository,
  SAME_UP_MS,
  SettingsRepository,
  type Store,
  type StoredEvent,
  WebhookRepository,
} from '../../src/store/index.js';
import type { SendOutcome } from '../../src/tasks/outbox.js';
import { eventually } from '../support/wait.js';
import { ENGINES, freshStore } from './places.js';

const GUILD = '722424773233213460';
const OTHER = '722424773233213999';
const ANNA = '310000000000000001';
const KEY = 'hk_0123456789abcdef';
const NOW = Date.UTC(2026, 10, 25, 12);
const silent = createLogger({ level: 'silent' });

function event(id: string, guildId = GUILD, receivedAt = NOW) {
  return {
    id: `${guildId}:${id}`,
    guildId,
    type: 'new_server_comment',
    payload: '{"kind":"test"}',
    receivedAt,
  };
}

describe.each(ENGINES)("the directory's webhooks in the store (%s)", (engine) => {
  let store: Store;
  let done: () => Promise<void>;
  let another: () => Promise<Store>;
  let webhooks: WebhookRepository;

  beforeEach(async () => {
    ({ store, done, another } = await freshStore(engine));
    webhooks = new WebhookRepository(store);
  });
  afterEach(() => done());

  it('keeps the key only as a salted hash, checks it, and forgets the old one when a new one is set', async () => {
    expect(await webhooks.check(GUILD, KEY)).toEqual({ kind: 'unknown' });
    await webhooks.configure(GUILD, KEY, '1000', NOW);
    await webhooks.configure(OTHER, KEY, '2000', NOW);
    const rows = await store.run((db) => db.selectFrom('directory_webhooks').selectAll().execute());
    expect(JSON.stringify(rows)).not.toContain(KEY);
    // The same key, two servers: two salts, two hashes.
    expect(rows[0]?.key_hash).not.toBe(rows[1]?.key_hash);
    expect(await webhooks.check(GUILD, KEY)).toMatchObject({ kind: 'ok', setup: { channelId: '1000' } });
    expect(await webhooks.check(GUILD, `${KEY}0`)).toEqual({ kind: 'wrong' });
    expect(await webhooks.check(GUILD, '')).toEqual({ kind: 'wrong' });
    await webhooks.configure(GUILD, 'hk_new-key', '1001', NOW + 1);
    expect(await webhooks.check(GUILD, KEY)).toEqual({ kind: 'wrong' });
    expect(await webhooks.check(GUILD, 'hk_new-key')).toMatchObject({
      kind: 'ok',
      setup: { channelId: '1001' },
    });
    expect(await webhooks.remove(GUILD)).toBe(true);
    expect(await webhooks.remove(GUILD)).toBe(false);
    expect(await webhooks.check(GUILD, 'hk_new-key')).toEqual({ kind: 'unknown' });
  });

  it('knows the keys in memory once loaded, kept up to date by configure, remove and check', async () => {
    await webhooks.configure(GUILD, KEY, '1000', NOW);
    expect(webhooks.knows(GUILD, KEY)).toBe('unknown');
    await webhooks.loadKeys();
    expect([
      webhooks.knows(GUILD, KEY),
      webhooks.knows(GUILD, `${KEY}0`),
      webhooks.knows(OTHER, KEY),
    ]).toEqual(['ok', 'wrong', 'unknown']);
    await webhooks.configure(OTHER, KEY, '2000', NOW);
    expect(webhooks.knows(OTHER, KEY)).toBe('ok');
    await webhooks.remove(GUILD);
    expect(webhooks.knows(GUILD, KEY)).toBe('unknown');
    // Another process (another repository on the store) changes them: memory learns it from check.
    const elsewhere = new WebhookRepository(store);
    await elsewhere.configure(GUILD, KEY, '1000', NOW);
    await elsewhere.configure(OTHER, 'hk_another-key-0001', '2000', NOW);
    expect(webhooks.knows(GUILD, KEY)).toBe('unknown');
    expect(await webhooks.check(GUILD, KEY)).toMatchObject({ kind: 'ok' });
    expect(webhooks.knows(GUILD, KEY)).toBe('ok');
    expect(await webhooks.check(OTHER, KEY)).toEqual({ kind: 'wrong' });
    expect(webhooks.knows(OTHER, 'hk_another-key-0001')).toBe('ok');
    await elsewhere.remove(OTHER);
    expect(await webhooks.check(OTHER, 'hk_another-key-0001')).toEqual({ kind: 'unknown' });
    expect(webhooks.knows(OTHER, 'hk_another-key-0001')).toBe('unknown');
  });

  it('the receiver turns 10,000 guessed server ids from one address away at its limit, without a store query each', async () => {
    await webhooks.configure(GUILD, KEY, '1000', NOW);
    const receiver = await startWebhookReceiver({
      port: 0,
      host: '127.0.0.1',
      webhooks,
      logger: silent,
      rateLimit: { max: 30, windowMs: 60_000 },
    });
    try {
      const queries = vi.spyOn(store, 'run');
      const statuses = new Map<number, number>();
      const ids = Array.from({ length: 10_000 }, (_, i) => `7224247732332${String(i).padStart(5, '0')}`);
      for (let i = 0; i < ids.length; i += 100) {
        await Promise.all(
          ids.slice(i, i + 100).map(async (id) => {
            const res = await request(`http://127.0.0.1:${receiver.port}/hooks/directory/${id}`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-hook-key': KEY },
              body: '{"type":"test_webhook_message","data":{}}',
            });
            await res.body.dump();
            statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          }),
        );
      }
      expect(Object.fromEntries(statuses)).toEqual({ 401: 30, 429: 9_970 });
      // Only the 30 within the address's limit were looked up (each id at most once per 5 s).
      expect(queries.mock.calls.length).toBeLessThanOrEqual(30);
      queries.mockRestore();
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it('stores an event once however often it is delivered, and notes when the last came', async () => {
    await webhooks.configure(GUILD, KEY, '1000', NOW);
    expect(await webhooks.enqueue(event('a'))).toBe('stored');
    expect(await webhooks.enqueue(event('a', GUILD, NOW + 5))).toBe('duplicate');
    expect(await webhooks.due(NOW, 10)).toHaveLength(1);
    expect((await webhooks.get(GUILD))?.lastEventAt).toBe(NOW + 5);
  });

  it('lets one claim win, and another take it over with the same nonce once its lease ran out', async () => {
    await webhooks.enqueue(event('a'));
    const id = `${GUILD}:a`;
    const first = await webhooks.claim(id, 'p1', 1_000, NOW);
    expect(first?.nonce).toMatch(/^[\w-]{16}$/);
    expect(await webhooks.claim(id, 'p2', 1_000, NOW + 999)).toBeUndefined();
    expect(await webhooks.due(NOW + 999, 10)).toEqual([]);
    expect((await webhooks.due(NOW + 1_000, 10)).map((e) => e.state)).toEqual(['claimed']);
    const second = await webhooks.claim(id, 'p2', 1_000, NOW + 1_000);
    expect(second?.nonce).toBe(first?.nonce);
    // The first process, back from a pause: its claim is not its own any more.
    expect(await webhooks.finish(first!, 'done', null, NOW + 1_001)).toBe(false);
    expect(await webhooks.finish(second!, 'done', null, NOW + 1_001)).toBe(true);
    expect(await webhooks.claim(id, 'p3', 1_000, NOW + 10_000)).toBeUndefined();
    expect((await webhooks.getEvent(id))?.state).toBe('done');
  });

  it("claims a server's event only once every earlier one of that server is done, whichever process holds it", async () => {
    await webhooks.enqueue(event('a', GUILD, NOW));
    await webhooks.enqueue(event('b', GUILD, NOW + 1));
    await webhooks.enqueue(event('c', OTHER, NOW + 2));
    // The first still waits: the second is not to be taken, by anyone.
    expect(await webhooks.claim(`${GUILD}:b`, 'p2', 1_000, NOW + 10)).toBeUndefined();
    const first = await webhooks.claim(`${GUILD}:a`, 'p1', 1_000, NOW + 10);
    expect(first).toBeDefined();
    // Another process, which lost the first, goes on to the second: refused while the first is
    // being announced; another server's is its own.
    expect(await webhooks.claim(`${GUILD}:b`, 'p2', 1_000, NOW + 20)).toBeUndefined();
    expect(await webhooks.claim(`${OTHER}:c`, 'p2', 1_000, NOW + 20)).toBeDefined();
    // The holder gone (its lease ran out): the first is taken over before the second.
    expect(await webhooks.claim(`${GUILD}:b`, 'p2', 1_000, NOW + 2_000)).toBeUndefined();
    const again = await webhooks.claim(`${GUILD}:a`, 'p2', 1_000, NOW + 2_000);
    expect(await webhooks.finish(again!, 'failed', 'gone', NOW + 2_001)).toBe(true);
    // Given up on (failed) counts as over: the second goes.
    expect(await webhooks.claim(`${GUILD}:b`, 'p2', 1_000, NOW + 2_002)).toBeDefined();
  });

  it('lets the holder set when its claim runs out (a retry), and another take it over then', async () => {
    await webhooks.enqueue(event('a'));
    const id = `${GUILD}:a`;
    const first = await webhooks.claim(id, 'p1', 30_000, NOW);
    expect(await webhooks.retryAt({ ...first!, by: 'p2' }, NOW + 500)).toBe(false);
    expect(await webhooks.retryAt(first!, NOW + 500)).toBe(true);
    expect(await webhooks.due(NOW + 499, 10)).toEqual([]);
    expect((await webhooks.due(NOW + 500, 10)).map((e) => e.id)).toEqual([id]);
    const second = await webhooks.claim(id, 'p2', 30_000, NOW + 500);
    expect(second?.nonce).toBe(first?.nonce);
    expect(await webhooks.finish(second!, 'done', null, NOW + 501)).toBe(true);
  });

  it('prunes what is done and old, keeps what waits', async () => {
    await webhooks.enqueue(event('old', GUILD, NOW - 20 * 86_400_000));
    await webhooks.enqueue(event('waiting', GUILD, NOW - 20 * 86_400_000));
    const claim = await webhooks.claim(`${GUILD}:old`, 'p', 1_000, NOW);
    await webhooks.finish(claim!, 'done', null, NOW);
    expect(await webhooks.prune(NOW - 14 * 86_400_000)).toBe(1);
    expect((await webhooks.due(NOW, 10)).map((e) => e.id)).toEqual([`${GUILD}:waiting`]);
  });

  it("goes with the server's settings when the bot leaves it", async () => {
    await webhooks.configure(GUILD, KEY, '1000', NOW);
    await webhooks.configure(OTHER, KEY, '2000', NOW);
    await webhooks.enqueue(event('a'));
    await webhooks.enqueue(event('b', OTHER));
    await new SettingsRepository(store).deleteGuild(GUILD);
    expect(await webhooks.get(GUILD)).toBeUndefined();
    expect(await webhooks.get(OTHER)).toBeDefined();
    expect((await webhooks.due(NOW, 10)).map((e) => e.guildId)).toEqual([OTHER]);
  });

  /** `n` events of `guildId` waiting, received from `from` on a millisecond apart (250 a statement). */
  async function waiting(guildId: string, n: number, from: number): Promise<void> {
    const rows = Array.from({ length: n }, (_, i) => ({
      id: `${guildId}:w${String(i).padStart(4, '0')}`,
      guild_id: guildId,
      type: 'new_server_comment',
      payload: '{"kind":"test"}',
      received_at: from + i,
      state: 'pending' as const,
      claimed_by: null,
      claim_expires_at: null,
      nonce: null,
      done_at: null,
      failure: null,
    }));
    for (let i = 0; i < n; i += 250) {
      const values = rows.slice(i, i + 250);
      await store.run((db) => db.insertInto('webhook_events').values(values).execute());
    }
  }

  it("takes each server's oldest event before any server's second: 1,000 of one server waiting do not hold another's back", async () => {
    const THIRD = '722424773233213777';
    await waiting(GUILD, 1_000, NOW);
    await webhooks.enqueue(event('c1', THIRD, NOW + 10));
    await webhooks.enqueue(event('b1', OTHER, NOW + 5_000));
    await webhooks.enqueue(event('c2', THIRD, NOW + 6_000));
    const due = await webhooks.due(NOW + 10_000, 200);
    expect(due).toHaveLength(200);
    expect(due.slice(0, 5).map((e) => e.id)).toEqual([
      `${GUILD}:w0000`,
      `${THIRD}:c1`,
      `${OTHER}:b1`,
      `${GUILD}:w0001`,
      `${THIRD}:c2`,
    ]);
    // The rest of the batch is the busy server's, in the order its events came.
    const busy = due.filter((e) => e.guildId === GUILD).map((e) => e.id);
    expect(busy).toHaveLength(197);
    expect(busy).toEqual([...busy].sort());
    expect(busy.at(-1)).toBe(`${GUILD}:w0196`);
    // Its oldest being announced (claimed): its next one takes its turn.
    await webhooks.claim(`${GUILD}:w0000`, 'p1', 30_000, NOW + 10_000);
    expect((await webhooks.due(NOW + 10_001, 3)).map((e) => e.id)).toEqual([
      `${GUILD}:w0001`,
      `${THIRD}:c1`,
      `${OTHER}:b1`,
    ]);
  });

  it("refuses a server's event while its cap of events waits; a repeat is still a duplicate, other servers go on", async () => {
    const capped = new WebhookRepository(store, { maxPending: 3, rate: { max: 100, windowMs: 60_000 } });
    await capped.configure(GUILD, KEY, '1000', NOW);
    for (const id of ['a', 'b', 'c']) expect(await capped.enqueue(event(id, GUILD, NOW))).toBe('stored');
    // One of them being announced still waits.
    await capped.claim(`${GUILD}:b`, 'p1', 30_000, NOW);
    expect(await capped.enqueue(event('d', GUILD, NOW + 1))).toBe('full');
    expect(await capped.enqueue(event('a', GUILD, NOW + 2))).toBe('duplicate');
    expect(await capped.enqueue(event('x', OTHER, NOW + 3))).toBe('stored');
    const ids = await store.run((db) =>
      db.selectFrom('webhook_events').select('id').where('guild_id', '=', GUILD).orderBy('id').execute(),
    );
    expect(ids.map((r) => r.id)).toEqual([`${GUILD}:a`, `${GUILD}:b`, `${GUILD}:c`]);
    // The refused delivery is not "the last event".
    expect((await capped.get(GUILD))?.lastEventAt).toBe(NOW + 2);
    // One announced: room for one more.
    const claim = await capped.claim(`${GUILD}:a`, 'p1', 30_000, NOW + 4);
    await capped.finish(claim!, 'done', null, NOW + 4);
    expect(await capped.enqueue(event('d', GUILD, NOW + 5))).toBe('stored');
    expect(await capped.enqueue(event('e', GUILD, NOW + 6))).toBe('full');
  });

  it("refuses a server's events past its rate, announced or not, until the window has passed", async () => {
    const limited = new WebhookRepository(store, { maxPending: 100, rate: { max: 2, windowMs: 60_000 } });
    expect(await limited.enqueue(event('a', GUILD, NOW))).toBe('stored');
    expect(await limited.enqueue(event('b', GUILD, NOW + 1_000))).toBe('stored');
    for (const id of ['a', 'b']) {
      const claim = await limited.claim(`${GUILD}:${id}`, 'p1', 30_000, NOW + 2_000);
      await limited.finish(claim!, 'done', null, NOW + 2_000);
    }
    expect(await limited.enqueue(event('c', GUILD, NOW + 3_000))).toBe('full');
    expect(await limited.enqueue(event('c', OTHER, NOW + 3_000))).toBe('stored');
    expect(await limited.enqueue(event('c', GUILD, NOW + 59_999))).toBe('full');
    // The first has left the window.
    expect(await limited.enqueue(event('c', GUILD, NOW + 60_000))).toBe('stored');
    expect(await limited.enqueue(event('d', GUILD, NOW + 60_001))).toBe('full');
    expect(await webhooks.getEvent(`${GUILD}:d`)).toBeUndefined();
  });

  it('two announcers on one store (two processes) handle every event once, each server in order', async () => {
    const second = await another();
    {
      const repos = [webhooks, new WebhookRepository(second)];
      const handled: Array<{ by: number; id: string }> = [];
      const announcers = repos.map(
        (repo, by) =>
          new WebhookAnnouncer({
            webhooks: repo,
            owner: `process-${by}`,
            logger: silent,
            pollMs: 20,
            handler: {
              async handle(e: StoredEvent): Promise<SendOutcome> {
                handled.push({ by, id: e.id });
                await new Promise((resolve) => setTimeout(resolve, 1));
                return { kind: 'sent' };
              },
            },
          }),
      );
      const guilds = Array.from({ length: 10 }, (_, g) => `72242477323321${String(g).padStart(4, '0')}`);
      for (let i = 0; i < 20; i++) {
        for (const guildId of guilds)
          await webhooks.enqueue(event(String(i).padStart(3, '0'), guildId, NOW + i));
      }
      for (const a of announcers) a.start();
      await eventually(() => (handled.length >= 200 ? true : undefined), 30_000, 'every event handled');
      await new Promise((resolve) => setTimeout(resolve, 200));
      await Promise.all(announcers.map((a) => a.stop()));
      expect(handled).toHaveLength(200);
      expect(new Set(handled.map((h) => h.id)).size).toBe(200);
      // Both processes took part.
      expect(new Set(handled.map((h) => h.by)).size).toBe(2);
      for (const guildId of guilds) {
        const order = handled.filter((h) => h.id.startsWith(guildId)).map((h) => h.id);
        expect(order).toEqual([...order].sort());
      }
    }
  });

  describe('an up the webhook tells of', () => {
    const bot = (at: number, n: number) => ({
      id: `bot:${n}`,
      guildId: GUILD,
      userId: ANNA,
      at,
      upCount: 10 + n,
      source: 'bot' as const,
    });
    const hook = (at: number) => ({
      id: `hook:${GUILD}:bump:${ANNA}:${at}`,
      guildId: GUILD,
      userId: ANNA,
      at,
      upCount: null,
      source: 'webhook' as const,
    });
    const count = async () => (await new HistoryRepository(store).members(GUILD, 0))[0]?.ups ?? 0;

    it('is counted once with the same /up through the bot, whichever is recorded first', async () => {
      const history = new HistoryRepository(store);
      expect(await history.record(bot(NOW, 1))).toBe(true);
      expect(await history.record(hook(NOW + 900))).toBe(false);
      expect(await count()).toBe(1);
      expect(await history.record(hook(NOW + 10 * 60_000))).toBe(true);
      expect(await history.record(bot(NOW + 10 * 60_000 + 500, 2))).toBe(true);
      expect(await count()).toBe(2);
      const sources = await store.run((db) =>
        db.selectFrom('up_history').select(['source', 'up_count']).execute(),
      );
      expect(sources.map((s) => s.source)).toEqual(['bot', 'bot']);
      // Further apart than SAME_UP_MS: two ups.
      expect(await history.record(hook(NOW + 10 * 60_000 + SAME_UP_MS + 1_000))).toBe(true);
      expect(await count()).toBe(3);
    });

    // PostgreSQL only: two processes share a store only there (SQLite serves one process, whose one
    // connection runs one transaction at a time), and better-sqlite3's second connection in this
    // process would wait synchronously for the first, which then cannot finish.
    it.skipIf(engine === 'sqlite')(
      'is counted once when both are recorded at the same moment (two connections), 40 times over',
      async () => {
        const a = new HistoryRepository(store);
        const b = new HistoryRepository(await another());
        for (let i = 0; i < 40; i++) {
          const at = NOW + i * 10 * 60_000;
          await Promise.all([a.record(bot(at, 100 + i)), b.record(hook(at + 50))]);
        }
        expect(await count()).toBe(40);
      },
    );

    it('moves the reminder by the cooldown of the last answer, when known and later', async () => {
      const reminders = new ReminderRepository(store);
      expect(await reminders.moveForUp(GUILD, NOW, SAME_UP_MS, NOW)).toBeUndefined();
      await reminders.scheduleGuild(GUILD, { dueAt: NOW + 3_600_000, nextUpAt: NOW + 3_600_000 }, NOW);
      // No cooldown known (a "not yet" answer): not moved.
      expect(await reminders.moveForUp(GUILD, NOW + 600_000, SAME_UP_MS, NOW)).toBeUndefined();
      await reminders.scheduleGuild(
        GUILD,
        { dueAt: NOW + 3_600_000, nextUpAt: NOW + 3_600_000, cooldownMs: 3_600_000 },
        NOW,
      );
      // The bot's own up told again: within the tolerance, not moved.
      expect(await reminders.moveForUp(GUILD, NOW + 30_000, SAME_UP_MS, NOW)).toBeUndefined();
      // An older delivery: not moved back.
      expect(await reminders.moveForUp(GUILD, NOW - 600_000, SAME_UP_MS, NOW)).toBeUndefined();
      expect(await reminders.moveForUp(GUILD, NOW + 600_000, SAME_UP_MS, NOW + 1)).toBe(NOW + 4_200_000);
      expect(await reminders.getGuild(GUILD)).toMatchObject({
        dueAt: NOW + 4_200_000,
        nextUpAt: NOW + 4_200_000,
        cooldownMs: 3_600_000,
        state: 'scheduled',
      });
      // A "not yet" answer later keeps the cooldown known.
      await reminders.scheduleGuild(GUILD, { dueAt: NOW + 4_300_000, nextUpAt: NOW + 4_300_000 }, NOW + 2);
      expect((await reminders.getGuild(GUILD))?.cooldownMs).toBe(3_600_000);
    });
  });
});
