/**
 * Reward roles' store (store/rewards.ts), on both engines: a server's rewards set, replaced and
 * removed (its waiting grants with it, the record kept); each grant stored once however often it
 * is asked for; claimed by one of two racing processes, done once; a member's ups in a period and
 * a period's top member (equal counts: who reached it first); who holds a role, and for which
 * periods.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HistoryRepository, type Store } from '../../src/store/index.js';
import { grantId, type NewGrant, RewardRepository } from '../../src/store/rewards.js';
import { ENGINES, freshStore } from './places.js';

const GUILD = '722424773233213460';
const OTHER_GUILD = '722424773233213470';
const ROLE = '722424773233213461';
const TOP_ROLE = '722424773233213462';
const ALICE = '525366699969478676';
const BOB = '525366699969478677';
const CAROL = '525366699969478678';
const T0 = 1_700_000_000_000;

const add = (userId: string, periodKey: string, extra: Partial<NewGrant> = {}): NewGrant => ({
  guildId: GUILD,
  roleId: ROLE,
  userId,
  periodKey,
  action: 'add',
  dueAt: T0,
  ...extra,
});

describe.each(ENGINES)('reward roles store (%s)', (engine) => {
  let store: Store;
  let another: () => Promise<Store>;
  let done: () => Promise<void>;
  let rewards: RewardRepository;
  let history: HistoryRepository;
  let ups = 0;

  beforeEach(async () => {
    ({ store, another, done } = await freshStore(engine));
    rewards = new RewardRepository(store);
    history = new HistoryRepository(store);
  });
  afterEach(() => done());

  const up = (userId: string, at: number, guildId = GUILD) =>
    history.record({ id: `bot:${++ups}`, guildId, userId, at, upCount: null, source: 'bot' });

  it('sets, replaces and lists a server’s rewards; removing one drops its waiting grants only', async () => {
    await rewards.set({ guildId: GUILD, roleId: ROLE, ups: 5, period: 'week' }, T0);
    await rewards.set({ guildId: GUILD, roleId: TOP_ROLE, ups: null, period: 'top' }, T0 + 1);
    await rewards.set({ guildId: GUILD, roleId: ROLE, ups: 10, period: 'month' }, T0 + 2);
    await rewards.set({ guildId: OTHER_GUILD, roleId: ROLE, ups: 1, period: 'all' }, T0);
    expect(await rewards.list(GUILD)).toEqual([
      { guildId: GUILD, roleId: TOP_ROLE, ups: null, period: 'top', createdAt: T0 + 1 },
      { guildId: GUILD, roleId: ROLE, ups: 10, period: 'month', createdAt: T0 + 2 },
    ]);
    expect((await rewards.periodRewards()).map((r) => [r.guildId, r.roleId, r.timeZone])).toEqual([
      [GUILD, ROLE, null],
      [GUILD, TOP_ROLE, null],
    ]);

    await rewards.enqueue([add(ALICE, 'month:2026-11'), add(BOB, 'month:2026-11')], T0);
    const claim = await rewards.claim(grantId(add(ALICE, 'month:2026-11')), 'a', 30_000, T0);
    await rewards.finish(claim!, 'done', null, T0 + 1);

    expect(await rewards.remove(GUILD, ROLE)).toBe(true);
    expect(await rewards.remove(GUILD, ROLE)).toBe(false);
    expect((await rewards.list(GUILD)).map((r) => r.roleId)).toEqual([TOP_ROLE]);
    expect(await rewards.get(grantId(add(ALICE, 'month:2026-11')))).toMatchObject({ state: 'done' });
    expect(await rewards.get(grantId(add(BOB, 'month:2026-11')))).toBeUndefined();
    expect(await rewards.due(T0 + 1, 10)).toEqual([]);
  });

  it('stores each grant once however often it is asked for', async () => {
    expect(await rewards.enqueue([add(ALICE, 'all'), add(BOB, 'all')], T0)).toBe(2);
    expect(await rewards.enqueue([add(ALICE, 'all'), add(CAROL, 'all')], T0 + 5)).toBe(1);
    expect(await rewards.enqueue([add(ALICE, 'all', { action: 'remove' })], T0 + 5)).toBe(1);
    await rewards.set({ guildId: GUILD, roleId: ROLE, ups: 3, period: 'all' }, T0);
    const due = await rewards.due(T0, 10);
    expect(due.map((g) => [g.userId, g.action, g.period])).toEqual([
      [ALICE, 'add', 'all'],
      [ALICE, 'remove', 'all'],
      [BOB, 'add', 'all'],
      [CAROL, 'add', 'all'],
    ]);
    expect(due[0]?.id).toBe(`${GUILD}:${ROLE}:${ALICE}:all:add`);
    // Only what is due by then.
    await rewards.enqueue([add(ALICE, 'week:2026-11-23', { dueAt: T0 + 60_000 })], T0);
    expect(await rewards.due(T0 + 59_999, 10)).toHaveLength(4);
    expect(await rewards.due(T0 + 60_000, 10)).toHaveLength(5);
  });

  it('one of two racing processes claims a grant; it is done once, and failed ones keep why', async () => {
    await rewards.enqueue([add(ALICE, 'all'), add(BOB, 'all')], T0);
    const second = new RewardRepository(await another());
    const id = grantId(add(ALICE, 'all'));
    const claims = await Promise.all([rewards.claim(id, 'a', 30_000, T0), second.claim(id, 'b', 30_000, T0)]);
    expect(claims.filter((c) => c !== undefined)).toHaveLength(1);
    const won = claims.find((c) => c !== undefined)!;
    expect(await rewards.finish(won, 'done', null, T0 + 1)).toBe(true);
    expect(await rewards.claim(id, 'c', 30_000, T0 + 60_000)).toBeUndefined();

    const bob = await rewards.claim(grantId(add(BOB, 'all')), 'a', 30_000, T0);
    await rewards.finish(bob!, 'failed', 'member-left', T0 + 1);
    expect(await rewards.get(grantId(add(BOB, 'all')))).toMatchObject({
      state: 'failed',
      failure: 'member-left',
    });
    expect(await rewards.due(T0 + 60_000, 10)).toEqual([]);
  });

  it('a claim let to run out at a retry time is claimed again then, with its nonce', async () => {
    await rewards.enqueue([add(ALICE, 'all')], T0);
    const id = grantId(add(ALICE, 'all'));
    const first = await rewards.claim(id, 'a', 30_000, T0);
    await rewards.retryAt(first!, T0 + 2_000);
    expect(await rewards.claim(id, 'b', 30_000, T0 + 1_999)).toBeUndefined();
    expect((await rewards.claim(id, 'b', 30_000, T0 + 2_000))?.nonce).toBe(first?.nonce);
  });

  it('counts a member’s ups in [start, end) of one server only', async () => {
    await up(ALICE, T0);
    await up(ALICE, T0 + 1_000);
    await up(ALICE, T0 + 2_000);
    await up(BOB, T0 + 500);
    await up(ALICE, T0 + 500, OTHER_GUILD);
    expect(await history.upsIn(GUILD, ALICE, T0, T0 + 2_000)).toBe(2);
    expect(await history.upsIn(GUILD, ALICE, T0 + 1, T0 + 2_001)).toBe(2);
    expect(await history.upsIn(GUILD, ALICE, 0, null)).toBe(3);
    expect(await history.upsIn(GUILD, CAROL, 0, null)).toBe(0);
  });

  it('the top member has the most ups; among equals, who reached that count first', async () => {
    expect(await history.top(GUILD, T0, T0 + 100_000)).toBeUndefined();
    await up(ALICE, T0 + 1_000);
    await up(BOB, T0 + 2_000);
    await up(BOB, T0 + 3_000);
    await up(ALICE, T0 + 4_000);
    // Both have 2; Bob reached 2 first, though Alice began first.
    expect(await history.top(GUILD, T0, T0 + 100_000)).toEqual({
      userId: BOB,
      ups: 2,
      reachedAt: T0 + 3_000,
    });
    await up(ALICE, T0 + 5_000);
    expect(await history.top(GUILD, T0, T0 + 100_000)).toMatchObject({ userId: ALICE, ups: 3 });
    // The period's end is left out.
    expect(await history.top(GUILD, T0, T0 + 4_000)).toMatchObject({ userId: BOB, ups: 2 });
  });

  it('who holds a role: grants given or waiting without a removal, failed ones left out', async () => {
    await rewards.enqueue(
      [
        add(ALICE, 'week:2026-11-16'),
        add(ALICE, 'week:2026-11-23'),
        add(BOB, 'week:2026-11-16'),
        add(CAROL, 'week:2026-11-16'),
        add(BOB, 'week:2026-11-16', { action: 'remove' }),
      ],
      T0,
    );
    const carol = await rewards.claim(grantId(add(CAROL, 'week:2026-11-16')), 'a', 30_000, T0);
    await rewards.finish(carol!, 'failed', 'member-left', T0);
    expect(await rewards.open(GUILD, ROLE)).toEqual([
      { userId: ALICE, periodKey: 'week:2026-11-16', state: 'pending' },
      { userId: ALICE, periodKey: 'week:2026-11-23', state: 'pending' },
    ]);
    expect(await rewards.granted(GUILD, ROLE, 'week:2026-11-23')).toBe(true);
    expect(await rewards.granted(GUILD, ROLE, 'week:2026-11-30')).toBe(false);
    expect(await rewards.open(GUILD, TOP_ROLE)).toEqual([]);
  });

  it('warns of a grant that failed for a reason admins can fix, and tries it again when the reward is set again', async () => {
    await rewards.set({ guildId: GUILD, roleId: ROLE, ups: 1, period: 'all' }, T0);
    await rewards.enqueue([add(ALICE, 'all'), add(BOB, 'all')], T0);
    const failAs = async (userId: string, reason: string, at: number) => {
      const claim = await rewards.claim(grantId(add(userId, 'all')), 'a', 30_000, at);
      expect(await rewards.finish(claim!, 'failed', reason, at)).toBe(true);
    };
    await failAs(ALICE, 'role-above-bot', T0 + 1);
    // A member who left is no problem of the admins'.
    await failAs(BOB, 'member-left', T0 + 2);
    expect(await rewards.lastFailures(GUILD)).toEqual(new Map([[ROLE, 'role-above-bot']]));
    // Set again once fixed: the grant the admins could fix waits again; the warning is gone.
    await rewards.set({ guildId: GUILD, roleId: ROLE, ups: 1, period: 'all' }, T0 + 3);
    expect(await rewards.lastFailures(GUILD)).toEqual(new Map());
    expect(await rewards.get(grantId(add(ALICE, 'all')))).toMatchObject({ state: 'pending', failure: null });
    expect(await rewards.get(grantId(add(BOB, 'all')))).toMatchObject({
      state: 'failed',
      failure: 'member-left',
    });
    expect((await rewards.due(T0 + 3, 10)).map((g) => g.userId)).toEqual([ALICE]);
  });
});
