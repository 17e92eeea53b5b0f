/**
 * A server reminder followed through (store/followups.ts), on both engines: the first up after
 * the post, within the window it was for, leaves one follow-up, once even when two ups race; an
 * up before it or long after leaves none; a follow-up is claimed by one process, and taken over
 * after its lease.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_WINDOW_MS,
  FollowupRepository,
  ReminderRepository,
  type Store,
} from '../../src/store/index.js';
import { ENGINES, freshStore } from './places.js';

const GUILD = '722424773233213460';
const CHANNEL = '722424773233213461';
const MESSAGE = '1175880702979866624';
const MEMBER = '525366699969478676';
const OTHER = '525366699969478677';
const T0 = 1_700_000_000_000;

describe.each(ENGINES)('reminder follow-ups (%s)', (engine) => {
  let store: Store;
  let another: () => Promise<Store>;
  let done: () => Promise<void>;
  let followups: FollowupRepository;

  beforeEach(async () => {
    ({ store, another, done } = await freshStore(engine));
    followups = new FollowupRepository(store);
    await new ReminderRepository(store).scheduleGuild(GUILD, { dueAt: T0, nextUpAt: T0 }, T0 - 1);
  });
  afterEach(() => done());

  const post = () =>
    followups.recordPost(GUILD, { channelId: CHANNEL, messageId: MESSAGE, text: 'raise it', postedAt: T0 });

  it('the first up after the post leaves one follow-up, with the post and who upped', async () => {
    await post();
    expect(await followups.take(GUILD, { userId: MEMBER, at: T0 + 42_000 })).toBe(T0);
    expect(await followups.take(GUILD, { userId: OTHER, at: T0 + 43_000 })).toBeNull();
    expect(await followups.get(MESSAGE)).toMatchObject({
      messageId: MESSAGE,
      guildId: GUILD,
      channelId: CHANNEL,
      text: 'raise it',
      postedAt: T0,
      uppedBy: MEMBER,
      uppedAt: T0 + 42_000,
      state: 'pending',
    });
    expect((await followups.due(10)).map((f) => f.messageId)).toEqual([MESSAGE]);
  });

  it('two ups racing on two connections leave one follow-up', async () => {
    await post();
    const second = new FollowupRepository(await another());
    const taken = await Promise.all([
      followups.take(GUILD, { userId: MEMBER, at: T0 + 1_000 }),
      second.take(GUILD, { userId: OTHER, at: T0 + 1_000 }),
    ]);
    expect(taken.filter((t) => t !== null)).toHaveLength(1);
    expect(await followups.due(10)).toHaveLength(1);
  });

  it('leaves none for an up before the post, long after it, or with nothing posted', async () => {
    expect(await followups.take(GUILD, { userId: MEMBER, at: T0 + 1 })).toBeNull();
    await post();
    expect(await followups.take(GUILD, { userId: MEMBER, at: T0 - 1 })).toBeNull();
    expect(await followups.take(GUILD, { userId: MEMBER, at: T0 + DEFAULT_WINDOW_MS })).toBeNull();
    expect(await followups.due(10)).toEqual([]);
    // Still there for an up within its window.
    expect(await followups.take(GUILD, { userId: MEMBER, at: T0 + DEFAULT_WINDOW_MS - 1 })).toBe(T0);
  });

  it('one process claims it; another takes it over once the lease ran out; done once', async () => {
    await post();
    await followups.take(GUILD, { userId: MEMBER, at: T0 + 1_000 });
    const first = await followups.claim(MESSAGE, 'a', 30_000, T0 + 2_000);
    expect(first).toBeDefined();
    expect(await followups.claim(MESSAGE, 'b', 30_000, T0 + 3_000)).toBeUndefined();
    const taken = await followups.claim(MESSAGE, 'b', 30_000, T0 + 40_000);
    expect(taken?.nonce).toBe(first?.nonce);
    expect(await followups.finish(first!, 'done', null, T0 + 41_000)).toBe(false);
    expect(await followups.finish(taken!, 'done', null, T0 + 41_000)).toBe(true);
    expect((await followups.get(MESSAGE))?.state).toBe('done');
    expect(await followups.due(10)).toEqual([]);
  });
});
