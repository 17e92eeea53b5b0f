/**
 * The reward roles' engine (features/rewards/engine.ts) on a real SQLite store, with an injected
 * clock: a count reward given once when reached; weeks and months in a server's zone (New York)
 * across a month's end and the end of daylight saving time (1 Nov 2026); removals stored at a
 * period's end and not before; the top role moved at a month's end; the changes made through the
 * granter once, and a refusal recorded.
 */
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RewardEngine } from '../../../src/features/rewards/engine.js';
import type { RewardGranter } from '../../../src/features/rewards/grant.js';
import { createLogger } from '../../../src/log/logger.js';
import { HistoryRepository, SettingsRepository, type Store } from '../../../src/store/index.js';
import { type RewardGrant, RewardRepository } from '../../../src/store/rewards.js';
import type { RewardPeriod } from '../../../src/store/schema.js';
import type { SendOutcome } from '../../../src/tasks/outbox.js';
import { freshStore } from '../../store/places.js';

const GUILD = '722424773233213460';
const ROLE = '722424773233213461';
const TOP = '722424773233213462';
const ALICE = '525366699969478676';
const BOB = '525366699969478677';
const NY = 'America/New_York';
/** Instants by their UTC fields (month 1-12). */
const utc = (y: number, mo: number, d: number, h = 0, mi = 0) => Date.UTC(y, mo - 1, d, h, mi);

describe('reward roles engine', () => {
  let store: Store;
  let done: () => Promise<void>;
  let rewards: RewardRepository;
  let history: HistoryRepository;
  let settings: SettingsRepository;
  let engine: RewardEngine;
  let clock: number;
  let acted: RewardGrant[];
  let answer: (grant: RewardGrant) => SendOutcome;
  let lines: string[];
  let ups = 0;

  beforeEach(async () => {
    ({ store, done } = await freshStore('sqlite'));
    rewards = new RewardRepository(store);
    history = new HistoryRepository(store);
    settings = new SettingsRepository(store);
    clock = utc(2026, 10, 1);
    acted = [];
    answer = () => ({ kind: 'sent' });
    lines = [];
    const granter: RewardGranter = {
      act: async (grant) => {
        acted.push(grant);
        return answer(grant);
      },
    };
    const destination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    engine = new RewardEngine({
      rewards,
      settings,
      history,
      granter,
      logger: createLogger({ level: 'warn', destination }),
      owner: 'test',
      now: () => clock,
    });
  });
  afterEach(async () => {
    await engine.stop();
    await done();
  });

  const reward = (roleId: string, period: RewardPeriod, count: number | null, at = utc(2026, 9, 1)) =>
    rewards.set({ guildId: GUILD, roleId, ups: count, period }, at);
  /** An up recorded, then told to the engine, as the bot does. */
  const up = async (userId: string, at: number) => {
    clock = Math.max(clock, at);
    await history.record({ id: `bot:${++ups}`, guildId: GUILD, userId, at, upCount: null, source: 'bot' });
    await engine.afterUp(GUILD, userId, at);
  };
  const stored = async () =>
    (await rewards.due(Number.MAX_SAFE_INTEGER, 100)).map((g) => `${g.action} ${g.userId} ${g.periodKey}`);
  const ny = () => settings.update(GUILD, { timeZone: NY }, clock);

  it('gives a count reward once, when the member reaches the count, and not for a second up', async () => {
    await reward(ROLE, 'all', 2);
    await up(ALICE, utc(2026, 10, 2));
    expect(await stored()).toEqual([]);
    await up(ALICE, utc(2026, 10, 3));
    expect(await stored()).toEqual([`add ${ALICE} all`]);
    await up(ALICE, utc(2026, 10, 4));
    await up(BOB, utc(2026, 10, 4));
    expect(await stored()).toEqual([`add ${ALICE} all`]);
  });

  it('gives nothing to a server with no reward, nor for an up told after its period ended', async () => {
    await up(ALICE, utc(2026, 10, 2));
    expect(await stored()).toEqual([]);
    await reward(ROLE, 'week', 1);
    clock = utc(2026, 10, 20);
    await history.record({
      id: 'late',
      guildId: GUILD,
      userId: BOB,
      at: utc(2026, 10, 2),
      upCount: null,
      source: 'bot',
    });
    await engine.afterUp(GUILD, BOB, utc(2026, 10, 2));
    expect(await stored()).toEqual([]);
  });

  it('counts a week in the server’s zone: across the end of daylight saving time, removed at its local end', async () => {
    await ny();
    await reward(ROLE, 'week', 2);
    // Saturday 31 Oct, noon in New York; then Sunday 1 Nov 23:30 EST, already Monday in UTC.
    await up(ALICE, utc(2026, 10, 31, 16));
    await up(ALICE, utc(2026, 11, 2, 4, 30));
    expect(await stored()).toEqual([`add ${ALICE} week:2026-10-26`]);
    // Monday 00:30 EST: a new week, one up in it.
    await up(ALICE, utc(2026, 11, 2, 5, 30));
    expect(await stored()).toEqual([`add ${ALICE} week:2026-10-26`]);

    // The week had 169 hours: it ends at Monday 00:00 EST, 05:00 UTC, not at 04:00.
    expect(await engine.periodEnds(utc(2026, 11, 2, 4, 59))).toBe(0);
    expect(await engine.periodEnds(utc(2026, 11, 2, 5))).toBe(1);
    const removal = (await rewards.due(Number.MAX_SAFE_INTEGER, 10)).find((g) => g.action === 'remove');
    expect(removal).toMatchObject({
      userId: ALICE,
      periodKey: 'week:2026-10-26',
      dueAt: utc(2026, 11, 2, 5),
    });
    // Once.
    expect(await engine.periodEnds(utc(2026, 11, 2, 6))).toBe(0);
  });

  it('counts a month in the server’s zone and takes the role back at its local end', async () => {
    await ny();
    await reward(ROLE, 'month', 1);
    // 31 Oct, 23:30 in New York: November in UTC, October there.
    await up(ALICE, utc(2026, 11, 1, 3, 30));
    expect(await stored()).toEqual([`add ${ALICE} month:2026-10`]);
    expect(await engine.periodEnds(utc(2026, 11, 1, 3, 59))).toBe(0);
    expect(await engine.periodEnds(utc(2026, 11, 1, 4))).toBe(1);
    expect(await stored()).toEqual([`add ${ALICE} month:2026-10`, `remove ${ALICE} month:2026-10`]);
  });

  it('a member who earns the role again keeps it until the new period ends; one who does not gets nothing', async () => {
    await reward(ROLE, 'month', 1);
    await up(ALICE, utc(2026, 10, 30));
    await up(BOB, utc(2026, 10, 30));
    // The bot was down over the month's end; Alice upped in November before it looked.
    await up(ALICE, utc(2026, 11, 1, 0, 10));
    expect(await engine.periodEnds(utc(2026, 11, 1, 0, 20))).toBe(1);
    expect(await stored()).toEqual([
      `add ${ALICE} month:2026-10`,
      `add ${BOB} month:2026-10`,
      `remove ${BOB} month:2026-10`,
      `add ${ALICE} month:2026-11`,
    ]);
    expect(await engine.periodEnds(utc(2026, 12, 1))).toBe(2);
    expect((await stored()).filter((s) => s.startsWith('remove'))).toEqual([
      `remove ${BOB} month:2026-10`,
      `remove ${ALICE} month:2026-10`,
      `remove ${ALICE} month:2026-11`,
    ]);
  });

  it('moves the top role at the month’s end to the top member (equal counts: who got there first)', async () => {
    await ny();
    await reward(TOP, 'top', null, utc(2026, 11, 10));
    await up(ALICE, utc(2026, 11, 3));
    await up(BOB, utc(2026, 11, 4));
    await up(BOB, utc(2026, 11, 5));
    // 30 Nov, 23:30 in New York (EST): still November there.
    await up(ALICE, utc(2026, 12, 1, 4, 30));
    // October ended before the reward was set: nothing for it.
    expect(await engine.periodEnds(utc(2026, 11, 20))).toBe(0);
    expect(await engine.periodEnds(utc(2026, 12, 1, 4, 59))).toBe(0);
    expect(await engine.periodEnds(utc(2026, 12, 1, 5))).toBe(1);
    expect(await stored()).toEqual([`add ${BOB} month:2026-11`]);

    await up(ALICE, utc(2026, 12, 10));
    expect(await engine.periodEnds(utc(2027, 1, 1, 5))).toBe(2);
    expect((await stored()).sort()).toEqual([
      `add ${ALICE} month:2026-12`,
      `add ${BOB} month:2026-11`,
      `remove ${BOB} month:2026-11`,
    ]);
    expect(await engine.periodEnds(utc(2027, 1, 1, 7))).toBe(0);

    // Alice tops January too: she keeps it, nothing taken.
    await up(ALICE, utc(2027, 1, 10));
    expect(await engine.periodEnds(utc(2027, 2, 1, 5))).toBe(1);
    expect((await stored()).slice(-1)).toEqual([`add ${ALICE} month:2027-01`]);
  });

  it('makes each change through the granter once, and records a refusal with its reason', async () => {
    await reward(ROLE, 'all', 1);
    answer = (grant) =>
      grant.userId === BOB ? { kind: 'failed', reason: 'role-above-bot' } : { kind: 'sent' };
    engine.start();
    await up(ALICE, utc(2026, 10, 2));
    await up(BOB, utc(2026, 10, 2));
    await vi.waitFor(async () => expect(await stored()).toEqual([]));
    expect(acted.map((g) => [g.userId, g.action, g.period])).toEqual([
      [ALICE, 'add', 'all'],
      [BOB, 'add', 'all'],
    ]);
    expect(await rewards.get(`${GUILD}:${ROLE}:${ALICE}:all:add`)).toMatchObject({
      state: 'done',
      failure: null,
    });
    expect(await rewards.get(`${GUILD}:${ROLE}:${BOB}:all:add`)).toMatchObject({
      state: 'failed',
      failure: 'role-above-bot',
    });
    await up(ALICE, utc(2026, 10, 3));
    await engine.periodEnds();
    expect(acted).toHaveLength(2);
  });

  it('an up whose rewards cannot be read is one warn line, not an error', async () => {
    vi.spyOn(rewards, 'list').mockRejectedValue(new Error('database is locked'));
    await expect(engine.afterUp(GUILD, ALICE, clock)).resolves.toBeUndefined();
    expect(lines.filter((l) => l.includes('could not look at the reward roles after an up'))).toHaveLength(1);
  });
});
