/**
 * Digests and live leaderboards in the store (store/digests.ts, store/live-boards.ts), on both
 * engines: a server's digest of a period is written once and posted once (one of two racing
 * processes claims it); a live board is due a minute after its last edit once an up changed it,
 * never sooner, and an up during its edit makes it due again.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestPlan, spreadOf } from '../../src/features/digests/plan.js';
import { DigestRepository } from '../../src/store/digests.js';
import type { Store } from '../../src/store/index.js';
import { LIVE_EDIT_EVERY_MS, LiveBoardRepository } from '../../src/store/live-boards.js';
import { ENGINES, freshStore } from './places.js';

const GUILD = '722424773233213460';
const CHANNEL = '722424773233213461';
const OTHER_CHANNEL = '722424773233213462';
/** Wednesday 25 November 2026, noon UTC. */
const T0 = Date.UTC(2026, 10, 25, 12);

describe.each(ENGINES)('digests and live leaderboards (%s)', (engine) => {
  let store: Store;
  let another: () => Promise<Store>;
  let done: () => Promise<void>;
  let digests: DigestRepository;
  let boards: LiveBoardRepository;

  beforeEach(async () => {
    ({ store, another, done } = await freshStore(engine));
    digests = new DigestRepository(store);
    boards = new LiveBoardRepository(store);
  });
  afterEach(() => done());

  const week = (at = T0, channelId = CHANNEL) =>
    digestPlan(GUILD, { channelId, period: 'week' }, 'Europe/Moscow', at);

  it("writes a period's digest once, due at its end plus the server's share of the spread", async () => {
    const plan = week();
    // Monday 30 November 00:00 in Moscow is 21:00 UTC on Sunday 29 November.
    expect(plan.end).toBe(Date.UTC(2026, 10, 29, 21));
    expect(plan.dueAt).toBe(plan.end + spreadOf(GUILD));
    await digests.schedule(plan);
    await digests.schedule(week(T0 + 3_600_000, OTHER_CHANNEL));
    const [only, ...none] = await digests.list(GUILD);
    expect(none).toEqual([]);
    // The same period again: one row, which took the new channel.
    expect(only).toMatchObject({
      id: `${GUILD}:week:2026-11-23`,
      channelId: OTHER_CHANNEL,
      state: 'pending',
    });
    expect(await digests.next(GUILD)).toBe(plan.dueAt);
    expect(await digests.due(plan.dueAt - 1, 10)).toEqual([]);
    expect((await digests.due(plan.dueAt, 10)).map((d) => d.id)).toEqual([only?.id]);
  });

  it('posts a digest once: one of two racing processes claims it; done, it is not due again', async () => {
    const plan = week();
    await digests.schedule(plan);
    const id = `${GUILD}:${plan.key}`;
    expect(await digests.claim(id, 'a', 30_000, plan.dueAt - 1)).toBeUndefined();
    const other = new DigestRepository(await another());
    const [a, b] = await Promise.all([
      digests.claim(id, 'a', 30_000, plan.dueAt),
      other.claim(id, 'b', 30_000, plan.dueAt),
    ]);
    expect([a, b].filter(Boolean)).toHaveLength(1);
    const won = (a ?? b)!;
    expect(await digests.finish(won, 'done', null, plan.dueAt + 5)).toBe(true);
    expect(await digests.due(plan.dueAt + 60_000_000, 10)).toEqual([]);
    // Scheduling the same period again after it was posted changes nothing.
    await digests.schedule(plan);
    expect((await digests.list(GUILD))[0]).toMatchObject({ state: 'done' });
  });

  it('drops the digests still to come of another period, or all of them', async () => {
    const last = week(T0 - 7 * 86_400_000);
    await digests.schedule(last);
    await digests.schedule(week());
    await digests.cancel(GUILD, week().key);
    expect((await digests.list(GUILD)).map((d) => d.id)).toEqual([`${GUILD}:${week().key}`]);
    await digests.cancel(GUILD);
    expect(await digests.list(GUILD)).toEqual([]);
  });

  it('a live board is shown at once, then due a minute after its last edit once an up changed it', async () => {
    expect(await boards.touch(GUILD, T0)).toBeUndefined();
    await boards.set(GUILD, CHANNEL, T0);
    const first = await boards.claim(GUILD, 'a', 30_000, T0);
    expect(first).toBeDefined();
    expect(
      await boards.shown(first!, {
        messageId: 'm1',
        contentHash: 'h1',
        editedAt: T0,
        restAt: T0 + 86_400_000,
      }),
    ).toBe(true);
    expect(await boards.finish(first!, 'done', null, T0)).toBe(true);
    // Nothing changed: it rests until the month's end.
    expect((await boards.get(GUILD))?.dueAt).toBe(T0 + 86_400_000);
    // An up 10 s after the edit: due a minute after the edit, not before.
    expect(await boards.touch(GUILD, T0 + 10_000)).toBe(T0 + LIVE_EDIT_EVERY_MS);
    expect(await boards.claim(GUILD, 'a', 30_000, T0 + LIVE_EDIT_EVERY_MS - 1)).toBeUndefined();
    // Another up keeps it there; an up long after the edit makes it due at once.
    expect(await boards.touch(GUILD, T0 + 20_000)).toBe(T0 + LIVE_EDIT_EVERY_MS);
    const second = await boards.claim(GUILD, 'a', 30_000, T0 + LIVE_EDIT_EVERY_MS);
    // An up while it is being edited: due again a minute after that edit.
    expect(await boards.touch(GUILD, T0 + LIVE_EDIT_EVERY_MS + 1)).toBe(T0 + LIVE_EDIT_EVERY_MS);
    await boards.shown(second!, {
      messageId: 'm1',
      contentHash: 'h2',
      editedAt: T0 + LIVE_EDIT_EVERY_MS + 2,
      restAt: T0 + 86_400_000,
    });
    await boards.finish(second!, 'done', null, T0 + LIVE_EDIT_EVERY_MS + 2);
    expect(await boards.get(GUILD)).toMatchObject({
      state: 'pending',
      dueAt: T0 + 2 * LIVE_EDIT_EVERY_MS + 2,
      messageId: 'm1',
      contentHash: 'h2',
    });
    expect(await boards.touch(GUILD, T0 + 10 * LIVE_EDIT_EVERY_MS)).toBe(T0 + 2 * LIVE_EDIT_EVERY_MS + 2);
  });

  it('a board moved to another channel hands back its old message; removed, it is gone', async () => {
    await boards.set(GUILD, CHANNEL, T0);
    const claim = await boards.claim(GUILD, 'a', 30_000, T0);
    await boards.shown(claim!, { messageId: 'm1', contentHash: 'h', editedAt: T0, restAt: T0 + 1 });
    await boards.finish(claim!, 'done', null, T0);
    // The same channel again keeps its message.
    expect(await boards.set(GUILD, CHANNEL, T0 + 1)).toBeUndefined();
    expect((await boards.get(GUILD))?.messageId).toBe('m1');
    expect(await boards.set(GUILD, OTHER_CHANNEL, T0 + 2)).toMatchObject({
      channelId: CHANNEL,
      messageId: 'm1',
    });
    expect(await boards.get(GUILD)).toMatchObject({
      channelId: OTHER_CHANNEL,
      messageId: null,
      state: 'pending',
    });
    expect(await boards.remove(GUILD)).toMatchObject({ channelId: OTHER_CHANNEL });
    expect(await boards.get(GUILD)).toBeUndefined();
  });

  it('a board that failed (its channel gone) waits for /settings, not for the next up', async () => {
    await boards.set(GUILD, CHANNEL, T0);
    const claim = await boards.claim(GUILD, 'a', 30_000, T0);
    await boards.finish(claim!, 'failed', 'channel-deleted', T0);
    expect(await boards.touch(GUILD, T0 + 5 * LIVE_EDIT_EVERY_MS)).toBeUndefined();
    expect(await boards.due(T0 + 100 * LIVE_EDIT_EVERY_MS, 10)).toEqual([]);
    await boards.set(GUILD, CHANNEL, T0 + 1);
    expect((await boards.get(GUILD))?.state).toBe('pending');
  });
});
