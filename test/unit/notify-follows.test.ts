/**
 * `restartCycle` (features/up/follows.ts) on the real reminders of a SQLite store: an up given on
 * the directory's side moves the server's reminder to when the directory lets it be upped again,
 * by the cooldown learned from its answers when one is known, else (v3) by the published cadence
 * (V3_UP_EVERY_MS); it never moves a reminder earlier, and the same up told twice moves it once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { restartCycle, V3_UP_EVERY_MS } from '../../src/features/up/follows.js';
import { ReminderRepository, SettingsRepository, type Store } from '../../src/store/index.js';
import { freshStore } from '../store/places.js';

const GUILD = '722424773233213460';
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 25, 12);

describe('restartCycle', () => {
  let store: Store;
  let done: () => Promise<void>;
  let reminders: ReminderRepository;
  let woken: number[];
  const deps = () => ({ reminders, wakeReminders: (at: number) => woken.push(at) });

  beforeEach(async () => {
    ({ store, done } = await freshStore('sqlite'));
    reminders = new ReminderRepository(store);
    woken = [];
  });
  afterEach(() => done());

  it('moves the reminder by the cooldown learned from the directory, not the v3 cadence', async () => {
    await reminders.scheduleGuild(GUILD, { dueAt: T0, nextUpAt: T0, cooldownMs: 4 * HOUR }, T0 - HOUR);
    const at = T0 + HOUR;
    const moved = await restartCycle(deps(), GUILD, at, { cadenceMs: V3_UP_EVERY_MS, now: at });
    expect(moved).toEqual({ nextUpAt: at + 4 * HOUR, dueAt: at + 4 * HOUR });
    expect(woken).toEqual([at + 4 * HOUR]);
    expect(await reminders.getGuild(GUILD)).toMatchObject({
      nextUpAt: at + 4 * HOUR,
      dueAt: at + 4 * HOUR,
      cooldownMs: 4 * HOUR,
      state: 'scheduled',
    });
  });

  it('on v3 with no cooldown known, schedules the reminder a day (the published cadence) after the up', async () => {
    const at = T0;
    const next = await restartCycle(deps(), GUILD, at, { cadenceMs: V3_UP_EVERY_MS, now: at + 500 });
    expect(V3_UP_EVERY_MS).toBe(24 * HOUR);
    expect(next).toEqual({ nextUpAt: at + V3_UP_EVERY_MS, dueAt: at + V3_UP_EVERY_MS });
    expect(woken).toEqual([at + V3_UP_EVERY_MS]);
    expect(await reminders.getGuild(GUILD)).toMatchObject({
      nextUpAt: at + V3_UP_EVERY_MS,
      dueAt: at + V3_UP_EVERY_MS,
      state: 'scheduled',
    });
  });

  it('on v3, moves a reminder whose cooldown is unknown to a day after the up', async () => {
    await reminders.scheduleGuild(GUILD, { dueAt: T0, nextUpAt: T0 }, T0 - HOUR);
    expect((await reminders.getGuild(GUILD))?.cooldownMs).toBeNull();
    const at = T0 + 2 * HOUR;
    expect(await restartCycle(deps(), GUILD, at, { cadenceMs: V3_UP_EVERY_MS, now: at })).toEqual({
      nextUpAt: at + V3_UP_EVERY_MS,
      dueAt: at + V3_UP_EVERY_MS,
    });
    expect(await reminders.getGuild(GUILD)).toMatchObject({ nextUpAt: at + V3_UP_EVERY_MS });
  });

  it('without a cadence (v2) and no cooldown known, leaves everything as it is', async () => {
    expect(await restartCycle(deps(), GUILD, T0, { cadenceMs: undefined, now: T0 })).toBeUndefined();
    expect(await reminders.getGuild(GUILD)).toBeUndefined();
    await reminders.scheduleGuild(GUILD, { dueAt: T0 - HOUR, nextUpAt: T0 - HOUR }, T0 - 2 * HOUR);
    expect(await restartCycle(deps(), GUILD, T0, { cadenceMs: undefined, now: T0 })).toBeUndefined();
    expect(await reminders.getGuild(GUILD)).toMatchObject({ nextUpAt: T0 - HOUR });
    expect(woken).toEqual([]);
  });

  it('never moves a reminder earlier: a later one stays, with a cooldown known or not', async () => {
    const later = T0 + 30 * HOUR;
    await reminders.scheduleGuild(GUILD, { dueAt: later, nextUpAt: later, cooldownMs: 4 * HOUR }, T0);
    expect(await restartCycle(deps(), GUILD, T0, { cadenceMs: V3_UP_EVERY_MS, now: T0 })).toBeUndefined();
    expect(await reminders.getGuild(GUILD)).toMatchObject({
      nextUpAt: later,
      dueAt: later,
      cooldownMs: 4 * HOUR,
    });

    const other = '722424773233213999';
    await reminders.scheduleGuild(other, { dueAt: later, nextUpAt: later }, T0);
    expect(await restartCycle(deps(), other, T0, { cadenceMs: V3_UP_EVERY_MS, now: T0 })).toBeUndefined();
    expect(await reminders.getGuild(other)).toMatchObject({
      nextUpAt: later,
      dueAt: later,
      cooldownMs: null,
    });
    expect(woken).toEqual([]);
  });

  it('an older up told late does not pull the reminder back', async () => {
    const at = T0;
    await restartCycle(deps(), GUILD, at, { cadenceMs: V3_UP_EVERY_MS, now: at });
    expect(
      await restartCycle(deps(), GUILD, at - 6 * HOUR, { cadenceMs: V3_UP_EVERY_MS, now: at + 1 }),
    ).toBeUndefined();
    expect(await reminders.getGuild(GUILD)).toMatchObject({ nextUpAt: at + V3_UP_EVERY_MS });
  });

  it('is idempotent: the same up told again moves nothing', async () => {
    const at = T0;
    const first = await restartCycle(deps(), GUILD, at, { cadenceMs: V3_UP_EVERY_MS, now: at });
    const after = await reminders.getGuild(GUILD);
    const again = await restartCycle(deps(), GUILD, at, { cadenceMs: V3_UP_EVERY_MS, now: at + 1_000 });
    const third = await restartCycle(deps(), GUILD, at, { cadenceMs: V3_UP_EVERY_MS, now: at + 2_000 });
    expect(first?.nextUpAt).toBe(at + V3_UP_EVERY_MS);
    expect(again).toBeUndefined();
    expect(third).toBeUndefined();
    expect(await reminders.getGuild(GUILD)).toEqual(after);
    expect(woken).toEqual([at + V3_UP_EVERY_MS]);

    // With a learned cooldown too.
    const other = '722424773233213999';
    await reminders.scheduleGuild(other, { dueAt: T0, nextUpAt: T0, cooldownMs: 4 * HOUR }, T0 - HOUR);
    const moved = await restartCycle(deps(), other, T0 + HOUR, { cadenceMs: V3_UP_EVERY_MS, now: T0 + HOUR });
    const row = await reminders.getGuild(other);
    expect(
      await restartCycle(deps(), other, T0 + HOUR, { cadenceMs: V3_UP_EVERY_MS, now: T0 + HOUR + 1 }),
    ).toBeUndefined();
    expect(moved?.nextUpAt).toBe(T0 + 5 * HOUR);
    expect(await reminders.getGuild(other)).toEqual(row);
  });

  it('with a heads-up, the reminder falls due that long before the next up, either way it moves', async () => {
    await new SettingsRepository(store).update(GUILD, { reminderEarlyMs: 10 * 60_000 }, T0 - 2 * HOUR);
    const at = T0;
    await restartCycle(deps(), GUILD, at, { cadenceMs: V3_UP_EVERY_MS, now: at });
    expect(await reminders.getGuild(GUILD)).toMatchObject({
      nextUpAt: at + V3_UP_EVERY_MS,
      dueAt: at + V3_UP_EVERY_MS - 10 * 60_000,
    });
    const later = at + V3_UP_EVERY_MS + HOUR;
    await restartCycle(deps(), GUILD, later, { cadenceMs: V3_UP_EVERY_MS, now: later });
    expect(await reminders.getGuild(GUILD)).toMatchObject({
      nextUpAt: later + V3_UP_EVERY_MS,
      dueAt: later + V3_UP_EVERY_MS - 10 * 60_000,
    });
  });

  // Both paths say the next up and its due time alike, and wake the scheduler for the due time (the
  // next up less the heads-up): the /up follow-up shows the next up, never the heads-up's time.
  it('returns the next up and the due time on both paths when a heads-up is set', async () => {
    await new SettingsRepository(store).update(GUILD, { reminderEarlyMs: 10 * 60_000 }, T0 - 2 * HOUR);
    const first = await restartCycle(deps(), GUILD, T0, { cadenceMs: V3_UP_EVERY_MS, now: T0 });
    const later = T0 + V3_UP_EVERY_MS + HOUR;
    const second = await restartCycle(deps(), GUILD, later, { cadenceMs: V3_UP_EVERY_MS, now: later });
    expect([first?.nextUpAt, second?.nextUpAt]).toEqual([T0 + V3_UP_EVERY_MS, later + V3_UP_EVERY_MS]);
    expect([first?.dueAt, second?.dueAt]).toEqual([
      T0 + V3_UP_EVERY_MS - 10 * 60_000,
      later + V3_UP_EVERY_MS - 10 * 60_000,
    ]);
    expect(woken).toEqual([T0 + V3_UP_EVERY_MS - 10 * 60_000, later + V3_UP_EVERY_MS - 10 * 60_000]);
  });
});
