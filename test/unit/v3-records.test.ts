/**
 * v3's answers as published (test/fixtures/directory-v3/: the partial bodies of boticordpy's tests,
 * and complete ones constructed from the docs' field tables; SOURCES.md says which) read into the
 * same records as v1/v2, and what the cards make of them in both languages; the error table; the
 * watch that says when v2 is gone; and the suggestions' search, never waited for.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RetirementWatch } from '../../src/directory/retired.js';
import type { SearchHit } from '../../src/directory/types.js';
import { V3_ERROR_CODES, v3ErrorClass } from '../../src/directory/v3/codes.js';
import {
  v3BotHitsSchema,
  v3BotSchema,
  v3CommentHitsSchema,
  v3EnvelopeSchema,
  v3ProfileSchema,
  v3ServerSchema,
} from '../../src/directory/v3/schemas.js';
import { LookupSuggestions, SEARCH_EVERY_MS } from '../../src/interactions/suggestions.js';
import { renderBotCard, renderProfileCard, renderServerCard } from '../../src/render/cards.js';
import { renderCommentsPage } from '../../src/render/comments.js';
import { renderUpOnSite } from '../../src/render/up-v3.js';
import { en, expectNoPing, expectWithinLimits, fieldValue, linkButtons, ru } from './render/helpers.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/directory-v3');
function result(name: string): unknown {
  const envelope = v3EnvelopeSchema.parse(JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')));
  if (!envelope.ok) throw new Error(`${name} is an error envelope`);
  return envelope.result;
}
const NOW = Date.UTC(2023, 4, 28, 6, 0, 0);
const silent = { debug() {}, info() {}, warn() {}, error() {} } as never;

describe("v3's published bodies", () => {
  it('the partial bot of boticordpy reads, the rest unknown rather than invented', () => {
    const bot = v3BotSchema.parse(result('bot.json'));
    expect(bot).toMatchObject({
      id: '947141336451153931',
      name: 'BumpBot',
      status: 'PUBLIC',
      upCount: null,
      bumps: 0,
      stats: { servers: null, shards: null, users: null },
      ratings: [],
      reviews: [],
      tagCodes: [],
      developers: [],
    });
    expect(bot.createdAt?.toISOString()).toBe('2023-05-22T22:29:23.264Z');
  });

  it('a complete bot: developers as objects, ups with expires as a string, the support invite by any name', () => {
    const bot = v3BotSchema.parse(result('bot-full.constructed.json'));
    expect(bot.developers).toEqual(['585766846268047370']);
    expect(bot.ups).toEqual([{ id: 'arbuz123', expiresAt: new Date(1685262170000) }]);
    expect(bot.library).toBe('Discord.py');
    expect(bot.stats).toEqual({ servers: 100, shards: 1, users: 1000 });
    const raw = result('bot-full.constructed.json') as Record<string, unknown>;
    for (const name of ['supportServerInviteLink', 'supportServerInviteCode', 'support_server_invite']) {
      const { supportServerInviteCode: _, ...rest } = raw;
      expect(v3BotSchema.parse({ ...rest, [name]: 'abcDEF' }).links.discord, name).toBe('abcDEF');
    }
  });

  it("a server's member count as memberCount (English docs) or members (Russian docs, boticordjava)", () => {
    const full = result('server-full.constructed.json') as Record<string, unknown>;
    const { memberCount, ...rest } = full;
    expect(v3ServerSchema.parse(full).members.all).toBe(memberCount);
    expect(v3ServerSchema.parse({ ...rest, members: 77 }).members.all).toBe(77);
    expect(v3ServerSchema.parse(result('server.json')).tagCodes).toEqual([134, 132]);
  });

  it('a profile lists its bots, and reads socials; the partial one of boticordpy too', () => {
    const partial = v3ProfileSchema.parse(result('user.json'));
    expect(partial).toMatchObject({ id: '585766846268047370', name: 'Marakarka', servers: [] });
    expect(partial.bots).toEqual([{ id: '947141336451153931', shortCode: null, name: 'BumpBot' }]);
    const full = v3ProfileSchema.parse(result('user-full.constructed.json'));
    expect(full.badges.length).toBeGreaterThan(0);
  });

  it('refuses a resource whose id could steer a route or a custom_id', () => {
    for (const id of ['../../x', '123/../456', '1'.repeat(21), 'abc', '', 12]) {
      expect(v3BotSchema.safeParse({ id, name: 'x' }).success, String(id)).toBe(false);
    }
  });

  it('tolerates the wrong type where a field is only shown, and bounds lists', () => {
    const bot = v3BotSchema.parse({
      id: '947141336451153931',
      name: 42,
      ratings: 'many',
      tags: [1, 'x', { no: 1 }],
      ups: Array.from({ length: 5_000 }, (_, i) => ({ id: `u${i}`, expires: 1 })),
      reviews: [{ content: 'ok', rating: 7 }, { nothing: true }],
      upCount: -5,
      guilds: 1e308,
      createdDate: 'yesterday',
    });
    expect(bot).toMatchObject({ name: null, ratings: [], tagCodes: [1], upCount: null, createdAt: null });
    expect(bot.ups.length).toBe(1_000);
    expect(bot.reviews).toEqual([
      {
        id: null,
        authorId: null,
        authorName: null,
        rating: null,
        text: 'ok',
        at: null,
        moderatorReply: null,
      },
    ]);
    expect(bot.stats.servers).toBeNull();
  });

  it('search hits: bots, and comments with a rating as a vote', () => {
    const bots = v3BotHitsSchema.parse(
      JSON.parse(readFileSync(join(FIXTURES, 'search-bots-response.constructed.json'), 'utf8')),
    );
    expect(bots.length).toBeGreaterThan(0);
    expect(bots[0]).toMatchObject({ kind: 'bot', id: expect.stringMatching(/^\d{17,20}$/) });
    const comments = v3CommentHitsSchema.parse({
      hits: [
        {
          id: 'c1',
          author: '585766846268047370',
          content: 'great',
          rating: 5,
          created: 1650183132145,
          modReply: 'thanks',
        },
        { id: 'c2', author: '585766846268047370', content: 'meh', rating: 3, created: '1650183132000' },
        { id: 'c3', author: 'not-an-id', content: 'x', rating: 1 },
      ],
    });
    expect(comments.map((c) => [c.vote, c.rating, c.moderatorReply])).toEqual([
      [1, 5, 'thanks'],
      [0, 3, null],
    ]);
  });

  it('the error table: the English numbering, each code a kind of error', () => {
    expect(V3_ERROR_CODES[1]).toBe('RateLimited');
    expect(V3_ERROR_CODES[14]).toBe('TokenInvalid');
    expect(V3_ERROR_CODES[19]).toBe('UnknownBot');
    expect(V3_ERROR_CODES[27]).toBe('TooManyUps');
    expect(Object.keys(V3_ERROR_CODES)).toHaveLength(60);
    expect([1, 2, 4, 14, 19, 20, 55, 0].map(v3ErrorClass)).toEqual([
      'RateLimited',
      'NotFound',
      'Unauthorized',
      'Unauthorized',
      'NotFound',
      'NotFound',
      'Forbidden',
      'Unavailable',
    ]);
  });
});

describe('the cards show what v3 adds, in both languages', () => {
  const bot = () => v3BotSchema.parse(result('bot-full.constructed.json'));

  it('a bot: its name and avatar when Discord has none, the rating, ups counting, tags by name', () => {
    const withReviews = {
      ...bot(),
      ratings: [
        { rating: 5, count: 3 },
        { rating: 4, count: 1 },
      ],
      reviews: [
        {
          id: 'r1',
          authorId: '585766846268047370',
          authorName: 'Marakarka',
          rating: 4,
          text: 'Works well @everyone',
          at: new Date(NOW - 60_000),
          moderatorReply: 'Thank you <@&1>',
        },
      ],
    };
    const msg = renderBotCard(withReviews, en, 'en-US', null, NOW);
    expectWithinLimits(msg);
    expectNoPing(msg, ['585766846268047370']);
    const text = JSON.stringify(msg);
    expect(text).toContain('Bot BumpBot');
    expect(fieldValue(msg, 'Rating')).toBe('★★★★★ 4.8 · 4 ratings');
    expect(fieldValue(msg, 'Tags')).toContain('Util');
    expect(text).toContain("Moderators' reply");
    expect(text).toContain('★★★★☆');
    expect(fieldValue(msg, 'Ups')).toMatch(/^1 · 1 counting · the next ends <t:1685262170:R>$/);
    const inRussian = renderBotCard(withReviews, ru, 'ru', null, NOW);
    expect(fieldValue(inRussian, 'Рейтинг')).toBe('★★★★★ 4,8 · 4 оценки');
    expect(fieldValue(inRussian, 'Теги')).toContain('Утилиты');
    expect(JSON.stringify(inRussian)).toContain('Ответ модерации');
    expect(linkButtons(msg).map((b) => b.label)).toContain('Invite');
  });

  it('a server: its moderators and tags by name; an unknown tag code as its number', () => {
    const server = { ...v3ServerSchema.parse(result('server-full.constructed.json')), tagCodes: [134, 999] };
    const msg = renderServerCard(server, ru, 'ru', null, NOW);
    expectWithinLimits(msg);
    expect(fieldValue(msg, 'Теги')).toMatch(/Аниме.*тег 999/);
  });

  it('a profile: its bots and servers from the profile itself', () => {
    const profile = {
      ...v3ProfileSchema.parse(result('user-full.constructed.json')),
      servers: [{ id: '722424773233213460', shortCode: 'boticord', name: 'BotiCord' }],
    };
    const msg = renderProfileCard(profile, null, en);
    expect(fieldValue(msg, 'Servers')).toContain('BotiCord');
    expect(fieldValue(msg, 'Bots')).toBeDefined();
    expect(fieldValue(renderProfileCard(profile, null, ru), 'Серверы')).toContain('BotiCord');
  });

  it('a comments page shows the rating and the moderators’ reply', () => {
    const page = renderCommentsPage(
      'bot',
      '947141336451153931',
      'BumpBot',
      [
        {
          userId: '585766846268047370',
          text: 'Nice',
          vote: 1,
          rating: 5,
          moderatorReply: 'Thanks',
          isUpdated: false,
          at: new Date(NOW),
        },
      ],
      0,
      en,
    );
    const text = JSON.stringify(page);
    expect(text).toContain('★★★★★');
    expect(text).toContain("Moderators' reply:* Thanks");
  });

  it('/up on v3 says where to raise the server, never that it was raised', () => {
    const server = v3ServerSchema.parse(result('server-full.constructed.json'));
    for (const t of [en, ru]) {
      const msg = renderUpOnSite(server.id, server, t, NOW);
      const text = JSON.stringify(msg);
      expect(linkButtons(msg)).toEqual([{ label: t('upV3.button'), url: server.pageLinks[0] }]);
      // What /up says of an up that happened ("Server raised") is nowhere.
      expect(text).not.toContain(t('up.title.success'));
      expect(text).toContain(t('upV3.title'));
    }
    const unlisted = renderUpOnSite('722424773233213460', null, en, NOW);
    expect(JSON.stringify(unlisted)).toContain('not listed on BotiCord');
  });
});

describe('the watch for a retired v2', () => {
  it('a 410, or a 404 on a route that names no resource, is retirement', () => {
    expect(new RetirementWatch().observe({ method: 'getBot', route: 'GET /bot/{ref}', status: 410 })).toBe(
      true,
    );
    expect(new RetirementWatch().observe({ method: 'postBotStats', route: 'POST /stats', status: 404 })).toBe(
      true,
    );
  });

  it('a missing bot is not; three routes all 404 are; a 2xx in between keeps it alive; said once', () => {
    const watch = new RetirementWatch();
    expect(watch.observe({ method: 'getBot', route: 'GET /bot/{ref}', status: 404 })).toBe(false);
    expect(watch.observe({ method: 'getServer', route: 'GET /server/{ref}', status: 200 })).toBe(false);
    expect(watch.observe({ method: 'getProfile', route: 'GET /profile/{id}', status: 404 })).toBe(false);
    expect(watch.observe({ method: 'getServer', route: 'GET /server/{ref}', status: 404 })).toBe(true);
    expect(watch.retired).toBe(true);
    expect(watch.observe({ method: 'getBot', route: 'GET /bot/{ref}', status: 410 })).toBe(false);
    // A network failure says nothing.
    expect(
      new RetirementWatch().observe({ method: 'postBotStats', route: 'POST /stats', status: 'Unavailable' }),
    ).toBe(false);
  });
});

describe("the suggestions' search (v3)", () => {
  function suggestions(search: (kind: string, q: string) => Promise<SearchHit[]>) {
    let now = 1_000_000;
    const s = new LookupSuggestions({ ownBots: async () => [], search, now: () => now, logger: silent });
    return { s, advance: (ms: number) => (now += ms) };
  }
  const hit = (id: string, name: string): SearchHit => ({
    kind: 'bot',
    id,
    name,
    shortDescription: null,
    ups: null,
    rating: null,
  });
  const ask = (s: LookupSuggestions, typed: string) =>
    s.choices({ kind: 'bot', place: 'g', userId: 'u', typed });

  it('never waits: the keystroke that starts a search is answered without it, the next with it', async () => {
    const asked: string[] = [];
    let release: (hits: SearchHit[]) => void = () => {};
    const { s, advance } = suggestions((_, q) => {
      asked.push(q);
      return new Promise((resolve) => {
        release = resolve;
      });
    });
    expect(ask(s, 'ke')).toEqual([]);
    release([hit('724663360934772797', 'Kerdoku'), hit('672406367344132116', 'BotiCord')]);
    await Promise.resolve();
    await Promise.resolve();
    // The next keystroke extends the text: the earlier results, narrowed to what still matches.
    expect(ask(s, 'ker')).toEqual([{ name: 'Kerdoku (724663360934772797)', value: '724663360934772797' }]);
    expect(asked).toEqual(['ke']);
    // At most one search every SEARCH_EVERY_MS for the process.
    advance(SEARCH_EVERY_MS);
    ask(s, 'kerd');
    expect(asked).toEqual(['ke', 'kerd']);
  });

  it('an ID being typed, or one letter, is not searched; a failed search answers nothing and is no rejection', async () => {
    const asked: string[] = [];
    const { s } = suggestions(async (_, q) => {
      asked.push(q);
      throw new Error('the search is down');
    });
    ask(s, '7246633');
    ask(s, 'k');
    expect(asked).toEqual([]);
    expect(ask(s, 'kerdoku')).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(asked).toEqual(['kerdoku']);
  });
});
