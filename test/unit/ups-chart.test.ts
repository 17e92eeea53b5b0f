/**
 * The ups chart's data (features/history/chart.ts): bars per UTC day, per week over long periods,
 * the top members apart and the rest together, the same numbers as text; names drawn as plain
 * text whatever they hold.
 */
import { describe, expect, it } from 'vitest';
import { summary, upsChart, upsSeries } from '../../src/features/history/chart.js';
import { translator } from '../../src/i18n/index.js';
import type { ChartRequest } from '../../src/render/chart-spec.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 24, 15);
const en = translator('en-US');
const day = (d: number) => Date.UTC(2026, 10, d);

describe('the ups chart', () => {
  it('puts each day in its bar, the named members apart and everyone else in "others"', () => {
    const rows = [
      { userId: 'a', day: day(22), ups: 2 },
      { userId: 'b', day: day(24), ups: 1 },
      { userId: 'c', day: day(24), ups: 3 },
      // Before the period: left out.
      { userId: 'a', day: day(10), ups: 5 },
    ];
    const s = upsSeries(rows, ['a', 'b'], NOW - 7 * DAY, NOW);
    expect(s.stepDays).toBe(1);
    expect(s.starts).toHaveLength(8);
    expect(s.starts[0]).toBe(day(17));
    expect(s.series.map((x) => [x.userId, x.data])).toEqual([
      ['a', [0, 0, 0, 0, 0, 2, 0, 0]],
      ['b', [0, 0, 0, 0, 0, 0, 0, 1]],
      [null, [0, 0, 0, 0, 0, 0, 0, 3]],
    ]);
    expect(summary(s, en)).toBe('22.11: 2 · 24.11: 4');
    // Nobody besides the named: no "others" bar.
    expect(upsSeries(rows.slice(0, 2), ['a', 'b'], NOW - 7 * DAY, NOW).series).toHaveLength(2);
    expect(summary(upsSeries([], [], NOW - 7 * DAY, NOW), en)).toBe('no ups in this period');
  });

  it('draws long periods per week, labelled with their first day and year', () => {
    const rows = [
      { userId: 'a', day: NOW - 300 * DAY - (NOW % DAY), ups: 1 },
      { userId: 'a', day: NOW - (NOW % DAY), ups: 2 },
    ];
    const s = upsSeries(rows, ['a'], NOW - 400 * DAY, NOW);
    expect(s.stepDays).toBe(7);
    expect(s.starts).toHaveLength(58);
    expect(s.totals.reduce((a, b) => a + b, 0)).toBe(3);
    expect(summary(s, en)).toMatch(/^\d\d\.\d\d\.\d\d: 1 · \d\d\.\d\d\.26: 2$/);
  });

  it('names the members in plain text (no controls, no line breaks), "others" in grey', async () => {
    let drawn: ChartRequest | undefined;
    const chart = await upsChart(
      {
        history: {
          perDay: async () => [
            { userId: '310000000000000001', day: day(24), ups: 2 },
            { userId: '310000000000000002', day: day(24), ups: 1 },
            { userId: '310000000000000003', day: day(24), ups: 1 },
          ],
        },
        charts: {
          render: async (request) => {
            drawn = request;
            return Buffer.from('png');
          },
        },
        name: async (id) => (id.endsWith('1') ? 'Анна\u202e\n@everyone' : null),
      },
      {
        guildId: '722424773233213460',
        since: NOW - 30 * DAY,
        now: NOW,
        named: ['310000000000000001', '310000000000000002'],
        title: 'Ups',
      },
      en,
    );
    expect(drawn?.series.map((s) => [s.label, s.muted ?? false])).toEqual([
      ['Анна @everyone', false],
      ['…0002', false],
      ['others', true],
    ]);
    expect(chart.file).toMatchObject({ name: 'ups.png', description: 'Ups. 24.11: 4' });
    expect(chart.text).toBe('24.11: 4');
  });
});
