import { describe, expect, it } from 'vitest';
import { nextPeriod, periodAt, previousPeriod } from '../../../src/features/history/calendar.js';

const H = 3_600_000;

describe("a server's calendar periods", () => {
  it('a month from local midnight to local midnight, in the zone and in UTC', () => {
    const at = Date.UTC(2026, 10, 27, 12);
    expect(periodAt('month', at, 'UTC')).toEqual({
      period: 'month',
      start: Date.UTC(2026, 10, 1),
      end: Date.UTC(2026, 11, 1),
      key: 'month:2026-11',
      timeZone: 'UTC',
    });
    // Moscow is UTC+3 all year: its November begins at 21:00 UTC on 31 October.
    const moscow = periodAt('month', at, 'Europe/Moscow');
    expect(moscow.start).toBe(Date.UTC(2026, 9, 31, 21));
    expect(moscow.end).toBe(Date.UTC(2026, 10, 30, 21));
    // 30 November 22:00 UTC is already December in Moscow, still November in UTC.
    expect(periodAt('month', Date.UTC(2026, 10, 30, 22), 'Europe/Moscow').key).toBe('month:2026-12');
    expect(periodAt('month', Date.UTC(2026, 10, 30, 22), 'UTC').key).toBe('month:2026-11');
  });

  it('a year end and a leap February', () => {
    const december = periodAt('month', Date.UTC(2026, 11, 31, 23, 59), 'UTC');
    expect(nextPeriod(december)).toMatchObject({ key: 'month:2027-01', start: Date.UTC(2027, 0, 1) });
    const feb = periodAt('month', Date.UTC(2028, 1, 15), 'UTC');
    expect(feb.end - feb.start).toBe(29 * 24 * H);
    expect(previousPeriod(feb).key).toBe('month:2028-01');
  });

  it('a week from Monday, 167 or 169 hours long across a daylight-saving change', () => {
    // New York springs forward on Sunday 8 March 2026.
    const week = periodAt('week', Date.UTC(2026, 2, 5, 12), 'America/New_York');
    expect(week.key).toBe('week:2026-03-02');
    expect(week.start).toBe(Date.UTC(2026, 2, 2, 5));
    expect(week.end - week.start).toBe(167 * H);
    // And falls back on Sunday 1 November 2026.
    const fall = periodAt('week', Date.UTC(2026, 9, 28, 12), 'America/New_York');
    expect(fall.end - fall.start).toBe(169 * H);
    expect(nextPeriod(fall).start).toBe(fall.end);
    // A Sunday night is still the week that began on Monday.
    expect(periodAt('week', Date.UTC(2026, 10, 29, 23), 'UTC').key).toBe('week:2026-11-23');
    expect(periodAt('week', Date.UTC(2026, 10, 30, 0), 'UTC').key).toBe('week:2026-11-30');
  });
});
