/**
 * What the directory's v3 notifications keep in the store besides their events, on both engines:
 * where each member's review was announced (CommentPostRepository: one post per member and server,
 * replaced by a new one), the /up answers waiting for their up (UpWatchRepository: `take` hands
 * each out once and deletes it, never an expired one (the next one kept deletes those), and leaves an answer asked after the up),
 * and a server's latest up (HistoryRepository.latest: who, when, from where; of one member too).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HistoryRepository, ReminderRepository, type Store } from '../../src/store/index.js';
import {
  CommentPostRepository,
  NotificationInbox,
  type UpWatch,
  UpWatchRepository,
  WATCH_MS,
} from '../../src/store/notifications.js';
import { ENGINES, freshStore } from './places.js';

const GUILD = '722424773233213460';
const OTHER = '722424773233213999';
const ANNA = '310000000000000001';
const BORIS = '310000000000000002';
const NOW = Date.UTC(2026, 10, 25, 12);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

function watch(id: string, over: Partial<UpWatch> = {}): UpWatch {
  return {
    interactionId: id,
    guildId: GUILD,
    userId: ANNA,
    applicationId: '974297735559806986',
    token: `interaction-token-${id}`,
    locale: 'ru',
    askedAt: NOW,
    expiresAt: NOW + WATCH_MS,
    ...over,
  };
}

describe.each(ENGINES)('notifications in the store (%s)', (engine) => {
  let store: Store;
  let done: () => Promise<void>;
  let another: () => Promise<Store>;

  beforeEach(async () => {
    ({ store, done, another } = await freshStore(engine));
  });
  afterEach(() => done());

  describe('CommentPostRepository', () => {
    it('has nothing for a review never announced', async () => {
      expect(await new CommentPostRepository(store).get(GUILD, ANNA)).toBeUndefined();
    });

    it("keeps one post per member and server: a new one replaces it, another member's and server's stay", async () => {
      const posts = new CommentPostRepository(store);
      await posts.put(GUILD, ANNA, { channelId: '1000', messageId: '2000', postedAt: NOW });
      await posts.put(GUILD, BORIS, { channelId: '1000', messageId: '2001', postedAt: NOW + 1 });
      await posts.put(OTHER, ANNA, { channelId: '1001', messageId: '2002', postedAt: NOW + 2 });
      expect(await posts.get(GUILD, ANNA)).toEqual({ channelId: '1000', messageId: '2000', postedAt: NOW });
      // The review announced again (its post deleted, or the channel changed): the new post is it.
      await posts.put(GUILD, ANNA, { channelId: '1003', messageId: '2003', postedAt: NOW + 10 });
      expect(await posts.get(GUILD, ANNA)).toEqual({
        channelId: '1003',
        messageId: '2003',
        postedAt: NOW + 10,
      });
      expect(await posts.get(GUILD, BORIS)).toEqual({
        channelId: '1000',
        messageId: '2001',
        postedAt: NOW + 1,
      });
      expect(await posts.get(OTHER, ANNA)).toEqual({
        channelId: '1001',
        messageId: '2002',
        postedAt: NOW + 2,
      });
      const rows = await store.run((db) => db.selectFrom('comment_posts').selectAll().execute());
      expect(rows).toHaveLength(3);
      // Another process reads what this one wrote.
      expect(await new CommentPostRepository(await another()).get(GUILD, ANNA)).toMatchObject({
        messageId: '2003',
      });
    });
  });

  describe('UpWatchRepository', () => {
    it('take hands the answers of the server asked before the up out once, and deletes them', async () => {
      const watches = new UpWatchRepository(store);
      await watches.add(watch('1'));
      await watches.add(watch('2', { userId: BORIS, askedAt: NOW + 1_000 }));
      await watches.add(watch('3', { guildId: OTHER }));
      const taken = await watches.take(GUILD, NOW + 5_000, NOW + 6_000);
      expect(taken.map((w) => w.interactionId).sort()).toEqual(['1', '2']);
      expect(taken.find((w) => w.interactionId === '1')).toEqual(watch('1'));
      expect(await watches.take(GUILD, NOW + 5_000, NOW + 6_000)).toEqual([]);
      // The other server's answer is still there, for its own up.
      expect((await watches.take(OTHER, NOW + 5_000, NOW + 6_000)).map((w) => w.interactionId)).toEqual([
        '3',
      ]);
    });

    it('adding the same interaction twice keeps the first', async () => {
      const watches = new UpWatchRepository(store);
      await watches.add(watch('1'));
      await watches.add(watch('1', { token: 'another-token', userId: BORIS }));
      expect(await watches.take(GUILD, NOW, NOW)).toEqual([watch('1')]);
    });

    it('an up before the answer was asked does not take it (beyond a minute of clock difference)', async () => {
      const watches = new UpWatchRepository(store);
      await watches.add(watch('late', { askedAt: NOW + 10 * 60_000 }));
      await watches.add(watch('close', { askedAt: NOW + 30_000 }));
      // An up at NOW: the answer asked 10 minutes later was not about it; 30 s later may have been.
      expect((await watches.take(GUILD, NOW, NOW + 60_000)).map((w) => w.interactionId)).toEqual(['close']);
      // The later answer stays for its own up.
      expect(
        (await watches.take(GUILD, NOW + 11 * 60_000, NOW + 11 * 60_000)).map((w) => w.interactionId),
      ).toEqual(['late']);
    });

    it('never hands out an expired answer (its token edits nothing); the next /up kept deletes them all', async () => {
      const watches = new UpWatchRepository(store);
      await watches.add(watch('old', { askedAt: NOW - WATCH_MS, expiresAt: NOW }));
      await watches.add(watch('other-old', { guildId: OTHER, askedAt: NOW - WATCH_MS, expiresAt: NOW - 1 }));
      await watches.add(watch('fresh', { askedAt: NOW - 60_000, expiresAt: NOW - 60_000 + WATCH_MS }));
      expect((await watches.take(GUILD, NOW, NOW)).map((w) => w.interactionId)).toEqual(['fresh']);
      const ids = async () =>
        (await store.run((db) => db.selectFrom('up_watches').select('interaction_id').execute()))
          .map((r) => r.interaction_id)
          .sort();
      expect(await ids()).toEqual(['old', 'other-old']);
      // The next answer kept, of any server, deletes the expired ones of every server.
      await watches.add(watch('next', { guildId: OTHER, askedAt: NOW, expiresAt: NOW + WATCH_MS }));
      expect(await ids()).toEqual(['next']);
    });

    it('prune deletes the answers whose token expired, and only those', async () => {
      const watches = new UpWatchRepository(store);
      await watches.add(watch('fresh', { askedAt: NOW - 60_000, expiresAt: NOW - 60_000 + WATCH_MS }));
      await watches.add(watch('old', { askedAt: NOW - WATCH_MS - 60_000, expiresAt: NOW }));
      expect(await watches.prune(NOW)).toBe(1);
      expect(await watches.prune(NOW)).toBe(0);
      expect((await watches.take(GUILD, NOW, NOW)).map((w) => w.interactionId)).toEqual(['fresh']);
    });

    it('two processes taking for the same up hand each answer out once', async () => {
      const a = new UpWatchRepository(store);
      const b = new UpWatchRepository(await another());
      for (let i = 0; i < 10; i++) await a.add(watch(String(i), { userId: `3100000000000000${10 + i}` }));
      const [x, y] = await Promise.all([a.take(GUILD, NOW + 1, NOW + 1), b.take(GUILD, NOW + 1, NOW + 1)]);
      const ids = [...x, ...y].map((w) => w.interactionId).sort();
      expect(ids).toEqual(Array.from({ length: 10 }, (_, i) => String(i)).sort());
    });
  });

  describe('HistoryRepository.latest', () => {
    it("tells the server's latest up, and a member's", async () => {
      const history = new HistoryRepository(store);
      expect(await history.latest(GUILD)).toBeUndefined();
      await history.record({
        id: 'bot:1',
        guildId: GUILD,
        userId: ANNA,
        at: NOW,
        upCount: 1,
        source: 'bot',
        possibleAt: null,
      });
      await history.record({
        id: `hook:${GUILD}:v3:up_added:${GUILD}:${BORIS}:${NOW + 5_000}`,
        guildId: GUILD,
        userId: BORIS,
        at: NOW + 5_000,
        upCount: null,
        source: 'notify',
        possibleAt: null,
      });
      await history.record({
        id: 'hook:x',
        guildId: OTHER,
        userId: ANNA,
        at: NOW + 9_000,
        upCount: null,
        source: 'webhook',
        possibleAt: null,
      });
      expect(await history.latest(GUILD)).toEqual({ userId: BORIS, at: NOW + 5_000, source: 'notify' });
      expect(await history.latest(GUILD, ANNA)).toEqual({ userId: ANNA, at: NOW, source: 'bot' });
      expect(await history.latest(GUILD, '310000000000000999')).toBeUndefined();
      expect(await history.latest(OTHER)).toEqual({ userId: ANNA, at: NOW + 9_000, source: 'webhook' });
    });
  });
  describe('NotificationInbox', () => {
    const up = (user: string, at: number, guildId = GUILD) => ({
      id: `${guildId}:v3:up_added:${guildId}:${user}:${at}`,
      guildId,
      type: 'up_added',
      event: { kind: 'bump', userId: user, at, bonus: null, upCount: 1, via: 'notify', v3: true },
      up: { at, cadenceMs: DAY },
    });
    const payloadOf = async (id: string) =>
      JSON.parse(
        (
          await store.run((db) =>
            db.selectFrom('webhook_events').select('payload').where('id', '=', id).executeTakeFirstOrThrow(),
          )
        ).payload,
      ) as { possibleAt?: number | null };

    it("stores a batch once, restarting each up's reminder in it, and keeps when the up became possible", async () => {
      const reminders = new ReminderRepository(store);
      // The server's reminder said the next up was possible an hour ago; OTHER has none.
      await reminders.scheduleGuild(GUILD, { dueAt: NOW - HOUR, nextUpAt: NOW - HOUR }, NOW - DAY);
      const inbox = new NotificationInbox(store);
      const batch = [up(ANNA, NOW), up(BORIS, NOW + 1, OTHER)];
      expect(await inbox.storeAll(batch, NOW + 5)).toEqual([
        { outcome: 'stored', restarted: { nextUpAt: NOW + DAY, dueAt: NOW + DAY } },
        { outcome: 'stored', restarted: { nextUpAt: NOW + 1 + DAY, dueAt: NOW + 1 + DAY } },
      ]);
      expect((await payloadOf(batch[0]!.id)).possibleAt).toBe(NOW - HOUR);
      expect((await payloadOf(batch[1]!.id)).possibleAt).toBeNull();
      expect(await reminders.getGuild(GUILD)).toMatchObject({
        nextUpAt: NOW + DAY,
        cooldownMs: DAY,
        state: 'scheduled',
      });
      // Told again (a replay, the webhook, another process): duplicates, nothing moves.
      const again = await new NotificationInbox(await another()).storeAll(batch, NOW + 60_000);
      expect(again).toEqual([{ outcome: 'duplicate' }, { outcome: 'duplicate' }]);
      expect((await reminders.getGuild(GUILD))?.nextUpAt).toBe(NOW + DAY);
      // The next member's up a minute later moves nothing (within SAME_UP_MS of the next-up time).
      expect(await inbox.storeAll([up(BORIS, NOW + 60_000)], NOW + 60_000)).toEqual([{ outcome: 'stored' }]);
      expect(await store.run((db) => db.selectFrom('webhook_events').select('id').execute())).toHaveLength(3);
    });

    it('uses the cooldown learned from a v2 answer before the cadence, and never moves a reminder earlier', async () => {
      const reminders = new ReminderRepository(store);
      await reminders.scheduleGuild(GUILD, { dueAt: NOW, nextUpAt: NOW, cooldownMs: 4 * HOUR }, NOW - HOUR);
      const inbox = new NotificationInbox(store);
      expect(await inbox.storeAll([up(ANNA, NOW + HOUR)], NOW + HOUR)).toEqual([
        { outcome: 'stored', restarted: { nextUpAt: NOW + 5 * HOUR, dueAt: NOW + 5 * HOUR } },
      ]);
      // An older up told late: stored (the history wants it), the reminder stays.
      expect(await inbox.storeAll([up(BORIS, NOW - 2 * HOUR)], NOW + HOUR)).toEqual([{ outcome: 'stored' }]);
      expect(await reminders.getGuild(GUILD)).toMatchObject({
        nextUpAt: NOW + 5 * HOUR,
        cooldownMs: 4 * HOUR,
      });
    });
  });
});
