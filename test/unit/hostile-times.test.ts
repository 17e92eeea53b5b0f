/**
 * Times past what a Date holds, past year 9999, negative or not finite are unknown wherever the
 * directory sends them: never an Invalid Date, never `NaN` or `<t:NaN` in a reply or on a terminal.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatComments, formatLinks, formatUp, iso, toJson } from '../../src/cli/format.js';
import { RateLimitedError } from '../../src/directory/errors.js';
import { normalizeNextUp } from '../../src/directory/next-up.js';
import { botSchema, commentListSchema, linkListSchema, serverUpSchema } from '../../src/directory/schemas.js';
import { retryAfterFromHeaders } from '../../src/http/retry-after.js';
import { translator } from '../../src/i18n/index.js';
import { describeError } from '../../src/interactions/error-message.js';
import { renderBotCard } from '../../src/render/cards.js';
import { renderCommentsPage } from '../../src/render/comments.js';
import { timestamp } from '../../src/render/text.js';
import { renderUpResult } from '../../src/render/up.js';
import { isUsableTime, LATEST_TIME_MS, timestampToDate } from '../../src/time/range.js';
import { viewOf } from '../support/layout-view.js';

const en = translator('en-US');
const ru = translator('ru');
const sample = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../fixtures/directory-samples/${name}`, import.meta.url), 'utf8'));

const NOW = Date.parse('2024-05-01T12:00:00Z');
/** The largest time a Date holds is 8.64e15 ms; one more is an Invalid Date. */
const PAST_DATE = 8.64e15 + 1;
/** Times no reply may show: past a Date, past year 9999, negative, not finite. */
const ABSURD = [1e300, PAST_DATE, 8.64e15, LATEST_TIME_MS + 1, -1, -1e300, Number.MAX_VALUE];

/** Nothing of an Invalid Date in what a user sees. */
function expectNoNaN(shown: unknown): void {
  const text = typeof shown === 'string' ? shown : JSON.stringify(shown);
  expect(text).not.toContain('NaN');
  expect(text).not.toContain('Invalid Date');
}

describe('the range of usable times', () => {
  it('is the epoch to the end of year 9999', () => {
    expect(new Date(LATEST_TIME_MS).toISOString()).toBe('9999-12-31T23:59:59.999Z');
    expect(isUsableTime(0)).toBe(true);
    expect(isUsableTime(NOW)).toBe(true);
    expect(isUsableTime(LATEST_TIME_MS)).toBe(true);
    for (const ms of [...ABSURD, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(isUsableTime(ms)).toBe(false);
    }
  });

  it('timestampToDate: seconds and milliseconds in range, anything else unknown', () => {
    expect(timestampToDate(1_644_388_399)?.toISOString()).toBe('2022-02-09T06:33:19.000Z');
    expect(timestampToDate(LATEST_TIME_MS)?.getTime()).toBe(LATEST_TIME_MS);
    for (const ms of [...ABSURD, 0, Number.NaN, Number.POSITIVE_INFINITY])
      expect(timestampToDate(ms)).toBeNull();
  });
});

describe('the next up', () => {
  it.each(ABSURD.filter((ms) => ms >= 0))('timeToNextUpInMs = %d is no time', (raw) => {
    expect(normalizeNextUp(raw, NOW)).toBeNull();
  });

  it('a duration that ends past year 9999 is no time either; a long but real one is', () => {
    expect(normalizeNextUp(999_999_999_999, LATEST_TIME_MS - 1)).toBeNull();
    expect(normalizeNextUp(999_999_999_999, NOW)?.getTime()).toBe(NOW + 999_999_999_999);
  });

  it('the answer keeps the raw value, and the bot and the CLI show no time rather than NaN', () => {
    for (const raw of [1e300, PAST_DATE]) {
      const result = serverUpSchema(NOW).parse({
        ...sample('server-up-response.json'),
        timeToNextUpInMs: raw,
      });
      expect(result).toMatchObject({ nextUpAt: null, timeToNextUpInMs: raw, upSuccessfully: true });
      for (const t of [en, ru]) {
        const message = renderUpResult(result, t, NOW);
        expectNoNaN(message);
        expect(message.embeds[0]?.fields?.map((f) => f.name)).not.toContain(t('up.nextUp'));
      }
      const text = formatUp(result, NOW);
      expectNoNaN(text);
      expect(text).toMatch(/^next up: +-$/m);
      expectNoNaN(toJson(result));
    }
  });
});

describe('comments and links', () => {
  const comment = { userID: '525366699969478676', text: 'hi', vote: 1 };

  it('a createdAt or updatedAt out of range is an unknown time, said so in both languages', () => {
    const parsed = commentListSchema.parse([
      { ...comment, isUpdated: false, createdAt: 1e300 },
      { ...comment, isUpdated: true, updatedAt: PAST_DATE },
      { ...comment, isUpdated: false, createdAt: -5 },
      { ...comment, isUpdated: false, createdAt: 1_650_183_132_145 },
    ]);
    expect(parsed.map((c) => c.at?.getTime() ?? null)).toEqual([null, null, null, 1_650_183_132_145]);

    const page = renderCommentsPage('bot', '724663360934772797', 'Kerdoku', parsed, 0, en);
    expectNoNaN(page);
    const description = viewOf(page).description ?? '';
    expect(description.match(/ · time unknown/g)).toHaveLength(3);
    expect(description).toContain(' · <t:1650183132:R>');
    const russian = renderCommentsPage('bot', '724663360934772797', 'Kerdoku', parsed, 0, ru);
    expect(viewOf(russian).description?.match(/ · время неизвестно/g)).toHaveLength(3);

    const text = formatComments(parsed);
    expectNoNaN(text);
    expect(text.match(/unknown time/g)).toHaveLength(3);
  });

  it('a link dated out of range has no date', () => {
    const [link] = linkListSchema.parse([
      {
        id: 1,
        code: 'x',
        ownerID: '178404926869733376',
        domain: 'bcord.cc',
        link: 'https://a.b',
        date: 1e300,
      },
    ]);
    expect(link?.createdAt).toBeNull();
    expectNoNaN(formatLinks(link ? [link] : []));
  });
});

describe('the rest of what shows a time', () => {
  it("a bot's `added` out of range leaves the field out", () => {
    const bot = botSchema.parse(sample('bot.json'));
    for (const added of [1e300, PAST_DATE, 9e15]) {
      const card = renderBotCard({ ...bot, added }, en, 'en-US');
      expectNoNaN(card);
      expect(viewOf(card).fields.map((f) => f.name)).not.toContain('Added');
    }
  });

  it('timestamp() and iso() give nothing for an Invalid Date or one past year 9999', () => {
    for (const date of [new Date(Number.NaN), new Date(PAST_DATE), new Date(LATEST_TIME_MS + 1)]) {
      expect(timestamp(date, 'R')).toBeNull();
      expect(iso(date)).toBeNull();
    }
    expect(timestamp(new Date(NOW), 'R')).toBe(`<t:${NOW / 1000}:R>`);
  });

  it('a Retry-After past any usable time is no wait, and the busy message names none', () => {
    for (const seconds of ['1e300', '9e12']) {
      expect(retryAfterFromHeaders({ 'retry-after': seconds }, NOW)).toBeUndefined();
    }
    expect(retryAfterFromHeaders({ 'retry-after': '86400' }, NOW)).toBe(86_400_000);
    // A wait from elsewhere (a RateLimitedError built by hand) cannot make `<t:NaN:R>` either.
    const err = new RateLimitedError('Too many requests', { retryAfterMs: 1e303 });
    const described = describeError(err, en, NOW);
    expect(described.text).toBe('The directory is busy. Try again in a moment.');
    expect(describeError(new RateLimitedError('x', { retryAfterMs: 60_000 }), en, NOW).text).toBe(
      `The directory is busy. Try again <t:${NOW / 1000 + 60}:R>.`,
    );
  });
});
