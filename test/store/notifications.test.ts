/**
 * What the directory's v3 notifications keep in the store besides their events, on both engines:
 * where each member's review was announced (CommentPostRepository: one post per member and server,
 * replaced by a new one), the /up answers waiting for their up (UpWatchRepository: `take` hands
 * each out once and deletes it, drops the expired ones, and leaves an answer asked after the up),
 * and a server's latest up (HistoryRepository.latest: who, when, from where; of one member too).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HistoryRepository, type Store } from '../../src/store/index.js';
import {
  CommentPostRepository,
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

    it('drops the expired answers (their token no longer edits anything), of every server', async () => {
      const watches = new UpWatchRepository(store);
      await watches.add(watch('old', { askedAt: NOW - WATCH_MS, expiresAt: NOW }));
      await watches.add(watch('other-old', { guildId: OTHER, askedAt: NOW - WATCH_MS, expiresAt: NOW - 1 }));
      await watches.add(watch('fresh', { askedAt: NOW - 60_000, expiresAt: NOW - 60_000 + WATCH_MS }));
      expect((await watches.take(GUILD, NOW, NOW)).map((w) => w.interactionId)).toEqual(['fresh']);
      const left = await store.run((db) => db.selectFrom('up_watches').select('interaction_id').execute());
      expect(left).toEqual([]);
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
});
