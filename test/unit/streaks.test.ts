/**
 * Streaks and reaction times (src/features/history/streaks.ts) with an injected clock: the
 * server's windows and their grace, the open window's grace running out, a member's calendar days
 * in the server's time zone across a month end and both daylight-saving changes, the fastest ups;
 * and what an /up's answer says of them (features/up/up.ts), in both languages.
 */
import { describe, expect, it } from 'vitest';
import {
  fastest,
  knownTimeZone,
  localDay,
  memberStreak,
  STREAK_GRACE_MS,
  serverStreak,
  type TimedUp,
} from '../../src/features/history/streaks.js';
import { streakLines } from '../../src/features/up/up.js';
import { translator } from '../../src/i18n/index.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);

/** Ups `cooldown` apart, each `reaction` after its window opened. */
function windows(count: number, reaction: (i: number) => number, cooldown = 4 * HOUR): TimedUp[] {
  return Array.from({ length: count }, (_, i) => {
    const possibleAt = T0 + i * cooldown;
    return { possibleAt, at: possibleAt + reaction(i) };
  });
}

describe("the server's streak", () => {
  it('counts windows upped within the grace, and a late up ends it (said with its length and when)', () => {
    const ups = windows(6, (i) => (i === 3 ? STREAK_GRACE_MS + MIN : 5 * MIN));
    const last = ups.at(-1) as TimedUp;
    expect(serverStreak(ups.slice(0, 3), null, last.at)).toEqual({ current: 3, best: 3 });
    const endedByLate = serverStreak(ups.slice(0, 4), null, last.at);
    expect(endedByLate).toEqual({
      current: 0,
      best: 3,
      ended: { length: 3, at: (ups[3]?.possibleAt as number) + STREAK_GRACE_MS },
    });
    // After the late one, two on time: a new streak of 2, the best still 3.
    expect(serverStreak(ups, null, last.at)).toEqual({ current: 2, best: 3 });
  });

  it('exactly at the grace still counts; an up whose window is not known begins one', () => {
    const ups = windows(2, () => STREAK_GRACE_MS);
    expect(serverStreak(ups, null, T0 + DAY).current).toBe(2);
    const unknown: TimedUp[] = [{ at: T0 - HOUR, possibleAt: null }, ...windows(2, () => MIN)];
    expect(serverStreak(unknown, null, T0 + DAY).current).toBe(3);
  });

  it('ends when the open window passes its grace with no up, not before', () => {
    const ups = windows(4, () => MIN);
    const next = (ups.at(-1)?.possibleAt as number) + 4 * HOUR;
    expect(serverStreak(ups, next, next + STREAK_GRACE_MS).current).toBe(4);
    const ended = serverStreak(ups, next, next + STREAK_GRACE_MS + 1);
    expect(ended).toEqual({ current: 0, best: 4, ended: { length: 4, at: next + STREAK_GRACE_MS } });
  });
});

describe("a member's streak of days", () => {
  it('counts calendar days in the time zone, across a month end', () => {
    // 30 Nov 23:30 and 1 Dec 00:30 in Moscow (UTC+3) are two days there, one day in UTC.
    const evening = Date.UTC(2026, 10, 30, 20, 30);
    const night = Date.UTC(2026, 10, 30, 21, 30);
    expect(memberStreak([evening, night], 'Europe/Moscow', night)).toEqual({ current: 2, best: 2, last: 2 });
    expect(memberStreak([evening, night], 'UTC', night)).toEqual({ current: 1, best: 1, last: 1 });
  });

  it('a day of a daylight-saving change is one day, 23 or 25 hours long', () => {
    // Berlin: 29 Mar 2026 has 23 hours (UTC+1 to UTC+2), 25 Oct 2026 has 25 (back to UTC+1). An up
    // at 23:30 local on three days around the first, at 00:30 on three days around the second.
    const spring = [
      Date.UTC(2026, 2, 28, 22, 30),
      Date.UTC(2026, 2, 29, 21, 30),
      Date.UTC(2026, 2, 30, 21, 30),
    ];
    const autumn = [
      Date.UTC(2026, 9, 23, 22, 30),
      Date.UTC(2026, 9, 24, 22, 30),
      Date.UTC(2026, 9, 25, 23, 30),
    ];
    for (const times of [spring, autumn]) {
      const local = times.map((at) => localDay(at, 'Europe/Berlin'));
      expect(local).toEqual([local[0], (local[0] as number) + 1, (local[0] as number) + 2]);
      expect(memberStreak(times, 'Europe/Berlin', times[2] as number).current).toBe(3);
    }
    // 23 and 25 hours apart, and still one day after the other.
    expect(((spring[1] as number) - (spring[0] as number)) / HOUR).toBe(23);
    expect(((autumn[2] as number) - (autumn[1] as number)) / HOUR).toBe(25);
    // New York, 1 Nov 2026 (25 hours): an up at 00:10 and one at 23:50 the same day are one day.
    const early = Date.UTC(2026, 10, 1, 4, 10);
    const late = Date.UTC(2026, 10, 2, 4, 50);
    expect(localDay(early, 'America/New_York')).toBe(localDay(late, 'America/New_York'));
  });

  it('is alive up to the end of the next day, then 0, keeping its best and its last run', () => {
    const days = [0, 1, 2].map((k) => T0 + k * DAY);
    expect(memberStreak(days, 'UTC', T0 + 3 * DAY).current).toBe(3);
    expect(memberStreak(days, 'UTC', T0 + 4 * DAY)).toEqual({ current: 0, best: 3, last: 3 });
    const again = [...days, T0 + 5 * DAY];
    expect(memberStreak(again, 'UTC', T0 + 5 * DAY)).toEqual({ current: 1, best: 3, last: 1 });
  });
});

describe('time zones and the fastest ups', () => {
  it('knows IANA names as Intl spells them, and nothing else', () => {
    expect(knownTimeZone(' Europe/Moscow ')).toBe('Europe/Moscow');
    expect(knownTimeZone('utc')).toBe('UTC');
    expect(knownTimeZone('Mars/Olympus_Mons')).toBeUndefined();
    expect(knownTimeZone('')).toBeUndefined();
    expect(knownTimeZone('x'.repeat(65))).toBeUndefined();
  });

  it('ranks reactions from the moment the up was possible; unknown windows are left out', () => {
    const ups = [
      { id: 'a', at: T0 + 30_000, possibleAt: T0 },
      { id: 'b', at: T0 + 3_000, possibleAt: T0 },
      { id: 'c', at: T0 + 1_000, possibleAt: null },
      { id: 'd', at: T0 + 9_000, possibleAt: T0 },
    ];
    expect(fastest(ups, 2).map((u) => [u.id, u.reactionMs])).toEqual([
      ['b', 3_000],
      ['d', 9_000],
    ]);
  });
});

describe("what an up's answer says of the streaks", () => {
  const en = translator('en-US');
  const ru = translator('ru');
  const ME = '310000000000000001';
  const OTHER = '310000000000000002';

  it('the server on time and the member days in a row, in both languages', () => {
    const ups = windows(3, () => MIN, DAY).map((u) => ({ ...u, userId: ME }));
    const facts = { ups, userId: ME, at: (ups.at(-1) as TimedUp).at };
    expect(streakLines(facts, 'UTC', en)).toEqual([
      '🔥 The server: **3** ups on time in a row',
      '🔥 You: **3** days in a row',
    ]);
    expect(streakLines(facts, 'UTC', ru)).toEqual([
      '🔥 Сервер: **3** апа вовремя подряд',
      '🔥 Вы: **3** дня подряд',
    ]);
  });

  it('says the streaks this up ended, and nothing for a first up', () => {
    const before = windows(3, () => MIN, DAY).map((u) => ({ ...u, userId: ME }));
    const late = { possibleAt: T0 + 5 * DAY, at: T0 + 5 * DAY + 2 * HOUR, userId: ME };
    const facts = { ups: [...before, late], userId: ME, at: late.at };
    expect(streakLines(facts, 'UTC', en)).toEqual([
      "💔 The server's streak of 3 ups on time ended: this up came more than 30 min after it was possible",
      '💔 Your streak of 3 days ended; this up starts a new one',
    ]);
    expect(streakLines(facts, 'UTC', ru)).toEqual([
      '💔 Серия сервера из 3 апов вовремя прервалась: этот ап пришёл позже чем через 30 мин после того, как стал возможен',
      '💔 Ваша серия из 3 дней прервалась; этот ап начинает новую',
    ]);
    const first = { possibleAt: null, at: T0, userId: OTHER };
    expect(streakLines({ ups: [first], userId: OTHER, at: T0 }, 'UTC', en)).toEqual([]);
  });
});
