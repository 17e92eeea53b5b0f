/**
 * The bot on the directory's API v3, end to end through the real discord.js client, the Discord
 * stand-in and the emulator's v3 (bare-key auth, look-ups by Discord ID, the search service):
 * cards with v3's name, rating, reviews and tags named in the reader's language; short codes found
 * through the search; comments from the comments index; /up that says where to raise the server;
 * the look-ups' cache; autocomplete that never waits on the search; stats; hostile directory text.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeGuild, makeUser } from '../discord/index.js';
import {
  type BotData,
  type CommentData,
  IDS,
  type RecordedRequest,
  TOKENS,
  V3_KEYS,
} from '../emulator/index.js';
import { viewOf } from '../support/layout-view.js';
import { expectPrivate, expectPrivatelyDeferred, expectPublic, itLeavesNoTrace } from './expectations.js';
import {
  type Answer,
  buttonsOf,
  fieldValue,
  type Harness,
  liveMessages,
  mentionProblems,
  optionString,
  sentMessages,
  startHarness,
  userOption,
} from './harness.js';

/** The bot on v3 with the staff key (owner of the service bot and the sample server). */
const V3_ENV = {
  DIRECTORY_API_VERSION: 'v3',
  DIRECTORY_TOKEN_KIND: '',
  DIRECTORY_ROUTE_RATE_LIMIT: '',
  DIRECTORY_TOKEN: V3_KEYS.staff,
  // The look-ups' cache as deployed (the harness turns it off for the v2 tests).
  DIRECTORY_CACHE_SIZE: '',
};

const home = makeGuild({ id: IDS.serverFresh, name: 'BotiCord Community', memberCount: 438 });
const tavern = makeGuild({ id: IDS.serverCooldown, name: 'Пиксельная Таверна', memberCount: 1200 });
/** A server the directory does not list. */
const unlisted = makeGuild({ id: '960000000000000031', name: 'Not Listed', memberCount: 12 });
/** The service bot as Discord knows it (the "Directory card" target). */
const sonata = makeUser({ id: IDS.serviceBot, username: 'sonata', global_name: 'Sonata', bot: true });
const cipherka = makeUser({ id: IDS.profileUser, username: 'cipherka', global_name: 'Cipherka' });
const sqdsh = makeUser({ id: IDS.otherProfileUser, username: 'sqdsh', global_name: 'Sqdsh' });

/** A third comment on kerdoku: v3's emulator gives every third comment a moderators' reply. */
const THIRD_COMMENT: CommentData = {
  userID: IDS.plainBotOwner,
  text: 'Третий отзыв',
  vote: 1,
  isUpdated: false,
  createdAt: 1650200000000,
};
const MOD_REPLY = 'Спасибо за отзыв!';

let h: Harness;

beforeAll(async () => {
  // kerdoku is not a Discord user here: its card's name can only come from v3's `name`.
  h = await startHarness({ guilds: [home, tavern, unlisted], users: [sonata, cipherka, sqdsh], env: V3_ENV });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => {
  h.reset();
  // The look-ups' cache outlives the emulator's reset: every test starts from the directory.
  for (const id of [IDS.plainBot, IDS.serviceBot, IDS.privateBot, HOSTILE_ID, 'kerdoku', 'filler']) {
    h.bot.directory.forget('bot', id);
  }
  for (const id of [IDS.serverFresh, IDS.serverCooldown, unlisted.id]) h.bot.directory.forget('server', id);
  for (const id of [IDS.profileUser, IDS.otherProfileUser]) h.bot.directory.forget('profile', id);
});

const paths = (requests: readonly RecordedRequest[] = h.emu.requests) =>
  requests.map((r) => `${r.method} ${r.path}`);
/** The directory's answered requests, the search key's fetches (and any refused search) aside. */
const answeredPaths = () =>
  paths(h.emu.requests.filter((r) => r.status === 200 && r.path !== '/v3/search-key'));

function prose(answer: Answer): string {
  return liveMessages(answer.view)
    .flatMap((m) => viewOf(m).prose)
    .join('\n');
}

function withThirdComment(): void {
  h.emu.state.comments.bots.get(IDS.plainBot)?.push({ ...THIRD_COMMENT });
}

const botRun = (ref: string, locale = 'en-US', guildId = home.id) =>
  h.run({ guildId, name: 'bot', locale, options: [optionString('ref', ref)] });

describe('/bot on v3', () => {
  it.each([
    {
      locale: 'en-US',
      title: 'Bot Kerdoku',
      rating: 'Rating',
      ratingValue: '★★★★★ 4.7 · 3 ratings',
      ups: 'Ups',
      tags: ['Multifunctional', 'Economy', 'Moderation', 'Customizable'],
      tagField: 'Tags',
      reviews: '**Reviews**',
      reply: `↳ *Moderators' reply:* ${MOD_REPLY}`,
    },
    {
      locale: 'ru',
      title: 'Бот Kerdoku',
      rating: 'Рейтинг',
      ratingValue: '★★★★★ 4,7 · 3 оценки',
      ups: 'Апы',
      tags: ['Комбайн', 'Экономика', 'Модерация', 'Настройка'],
      tagField: 'Теги',
      reviews: '**Отзывы**',
      reply: `↳ *Ответ модерации:* ${MOD_REPLY}`,
    },
  ])(
    'by ID ($locale): name, rating, ups, reviews with the reply, named tags; GET /v3/bots/{id} with the bare key',
    async (c) => {
      withThirdComment();
      const answer = await botRun(IDS.plainBot, c.locale);
      expect(answer.outcome).toBe('shown');
      expect(paths()).toEqual([`GET /v3/bots/${IDS.plainBot}`]);
      expect(h.emu.requests[0]?.headers.authorization).toBe(V3_KEYS.staff);
      const { message, embed } = expectPublic(answer);
      expect(embed.title).toBe(c.title);
      expect(embed.thumbnail?.url).toContain(`https://cdn.discordapp.com/avatars/${IDS.plainBot}/`);
      expect(embed.description).toContain('Удобный и дружелюбный бот');
      expect(fieldValue(embed, c.rating)).toBe(c.ratingValue);
      // upCount; the emulator's ups[] all ended in 2023, so none is said to be counting.
      expect(embed.fields?.filter((f) => f.name === c.ups).map((f) => f.value)).toEqual(['37']);
      const tags = fieldValue(embed, c.tagField) ?? '';
      for (const tag of c.tags) expect(tags).toContain(`\`${tag}\``);
      expect(tags).not.toMatch(/\b\d+\b/);
      const text = prose(answer);
      expect(text).toContain(c.reviews);
      expect(text).toContain(`★★★★★ · <@525366699969478676>`);
      expect(text).toContain('> aboba');
      expect(text).toContain('> Третий отзыв');
      expect(text).toContain(c.reply);
      expect(embed.footer?.text).toBe(`${IDS.plainBot} · kerdoku`);
      expect(buttonsOf(message)).toContainEqual(
        expect.objectContaining({ custom_id: `comments:o:b:${IDS.plainBot}:0` }),
      );
    },
  );

  it.each([
    ['en-US', 'Bot Kerdoku'],
    ['ru', 'Бот Kerdoku'],
  ])('by short code (%s): found through the search, then looked up by ID', async (locale, title) => {
    const answer = await botRun('kerdoku', locale);
    expect(answer.outcome).toBe('shown');
    expect(answeredPaths()).toEqual(['POST /v3/search/indexes/bots/search', `GET /v3/bots/${IDS.plainBot}`]);
    const search = h.emu.requests.find((r) => r.path === '/v3/search/indexes/bots/search');
    expect(search?.headers.authorization).toMatch(/^Bearer /);
    expect(JSON.parse(search?.body ?? '{}')).toMatchObject({ q: 'kerdoku' });
    const { embed } = expectPublic(answer);
    expect(embed.title).toBe(title);
    expect(embed.footer?.text).toBe(`${IDS.plainBot} · kerdoku`);
  });

  it.each([
    ['en-US', '❌ This bot is not in the directory.'],
    ['ru', '❌ Этого бота нет в каталоге.'],
  ])(
    'an unknown short code (%s) is a clear private answer, never the card of a bot that matched',
    async (locale, text) => {
      // "filler" matches Filler 1 … Filler 12 in the search; none has that short code.
      const answer = await botRun('filler', locale);
      expect(answer.outcome).toBe('error:NotFound');
      const { embed } = expectPrivate(answer);
      expect(embed.description).toBe(text);
      expect(prose(answer)).not.toMatch(/Filler|9000000000000000/);
      expect(paths()).toContain('POST /v3/search/indexes/bots/search');
    },
  );
});

describe('/server, /profile and "Directory card" on v3', () => {
  it.each([
    {
      locale: 'en-US',
      members: ['Members', '438 members'],
      moderators: 'Moderators',
      rating: ['Rating', '★★★☆☆ 3.3 · 3 ratings'],
      tags: ['Tags', ['Anime', 'Games', 'Chatting', 'Programming']],
      reply: "↳ *Moderators' reply:* Спасибо за отзыв!",
    },
    {
      locale: 'ru',
      members: ['Участники', '438 участников'],
      moderators: 'Модераторы',
      rating: ['Рейтинг', '★★★☆☆ 3,3 · 3 оценки'],
      tags: ['Теги', ['Аниме', 'Игры', 'Общение', 'Кодинг']],
      reply: '↳ *Ответ модерации:* Спасибо за отзыв!',
    },
  ] as const)(
    '/server in this server ($locale): the v3 record with moderators, rating, reviews and named tags',
    async (c) => {
      const answer = await h.run({ guildId: home.id, name: 'server', locale: c.locale });
      expect(answer.outcome).toBe('shown');
      expect(paths()).toEqual([`GET /v3/servers/${IDS.serverFresh}`]);
      const { message, embed } = expectPublic(answer);
      expect(embed.title).toContain('BotiCord Community');
      expect(fieldValue(embed, c.members[0])).toBe(c.members[1]);
      expect(fieldValue(embed, c.moderators)).toBe(`<@${IDS.serviceBotOwner}>, <@${IDS.plainBotOwner}>`);
      expect(fieldValue(embed, c.rating[0])).toBe(c.rating[1]);
      const tags = fieldValue(embed, c.tags[0]) ?? '';
      for (const tag of c.tags[1]) expect(tags).toContain(`\`${tag}\``);
      const text = prose(answer);
      expect(text).toContain('> Долго отвечают в поддержке.');
      expect(text).toContain(c.reply);
      expect(buttonsOf(message)).toContainEqual(
        expect.objectContaining({ url: 'https://boticord.top/server/boticord' }),
      );
    },
  );

  it('/server by ID shows that server', async () => {
    const answer = await h.run({
      guildId: home.id,
      name: 'server',
      options: [optionString('ref', IDS.serverCooldown)],
    });
    expect(paths()).toEqual([`GET /v3/servers/${IDS.serverCooldown}`]);
    const { embed } = expectPublic(answer);
    expect(embed.title).toBe('Server Пиксельная Таверна');
    expect(fieldValue(embed, 'Owner')).toBe(`<@${IDS.otherProfileUser}>`);
    expect(fieldValue(embed, 'Members')).toBe('1,200 members');
  });

  it.each([
    ['en-US', 'Bots', 'Servers'],
    ['ru', 'Боты', 'Серверы'],
  ])(
    '/profile (%s) lists the bots and servers of the v3 profile, from one request',
    async (locale, bots, servers) => {
      const answer = await h.run({ guildId: home.id, name: 'profile', locale, user: cipherka });
      expect(answer.outcome).toBe('shown');
      expect(paths()).toEqual([`GET /v3/users/${IDS.profileUser}`]);
      const { embed } = expectPublic(answer);
      expect(embed.title).toContain('Cipherka');
      expect(fieldValue(embed, bots)).toBe(`<@${IDS.serviceBot}> · \`sonata\``);
      expect(fieldValue(embed, servers)).toBe('BotiCord Community · `boticord`');
    },
  );

  it("/profile of another user lists that user's bots and servers", async () => {
    const answer = await h.run({ guildId: home.id, name: 'profile', ...userOption(sqdsh) });
    expect(paths()).toEqual([`GET /v3/users/${IDS.otherProfileUser}`]);
    const { embed } = expectPublic(answer);
    const bots = fieldValue(embed, 'Bots')?.split('\n') ?? [];
    expect(bots).toContain(`<@${IDS.privateBot}>`);
    expect(bots).toContain('<@900000000000000001> · `filler1`');
    const servers = fieldValue(embed, 'Servers')?.split('\n') ?? [];
    expect(servers).toContain('Пиксельная Таверна · `tavern`');
    expect(servers).toContain('Аниме Уголок');
  });

  it('"Directory card" on a bot shows its v3 card, privately', async () => {
    const answer = await h.run({ type: 2, name: 'Directory card', targetId: sonata.id, guildId: home.id });
    expect(answer.outcome).toBe('bot');
    expect(paths()).toEqual([`GET /v3/bots/${IDS.serviceBot}`]);
    const { embed } = expectPrivatelyDeferred(answer);
    // Discord's name for a bot it knows; the directory's record for the rest.
    expect(embed.title).toBe('Bot Sonata');
    expect(embed.footer?.text).toBe(`${IDS.serviceBot} · sonata`);
    expect(fieldValue(embed, 'Ups')).toBe('120');
  });
});

describe('comments on v3', () => {
  function commentSearches(): Record<string, unknown>[] {
    return h.emu.requests
      .filter(
        (r) => r.method === 'POST' && r.path === '/v3/search/indexes/comments/search' && r.status === 200,
      )
      .map((r) => JSON.parse(r.body) as Record<string, unknown>);
  }

  it("the Comments button of a bot card: ★ ratings and the moderators' reply, from the comments index", async () => {
    withThirdComment();
    const card = await botRun(IDS.plainBot);
    const button = buttonsOf(expectPublic(card).message).find((b) => b.label === 'Comments');
    expect(button?.custom_id).toBe(`comments:o:b:${IDS.plainBot}:0`);
    const answer = await h.click({ guildId: home.id, customId: button?.custom_id ?? '' });
    expect(commentSearches()).toHaveLength(1);
    expect(JSON.stringify(commentSearches()[0]?.filter)).toContain(`resource = \\"${IDS.plainBot}\\"`);
    const text = prose(answer);
    expect(text).toContain('★★★★★ <@525366699969478676>');
    expect(text).toContain('★★★★☆ <@178404926869733376>');
    expect(text).toContain('> aboba');
    expect(text).toContain(`↳ *Moderators' reply:* ${MOD_REPLY}`);
    expect(text).not.toMatch(/👍|👎/);
  });

  it("a server's comments in Russian: ★ ratings, the reply, the index searched by resource", async () => {
    const answer = await h.click({
      guildId: home.id,
      locale: 'ru',
      customId: `comments:o:s:${IDS.serverFresh}:0`,
    });
    const search = commentSearches()[0];
    expect(JSON.stringify(search?.filter)).toContain(`resource = \\"${IDS.serverFresh}\\"`);
    const text = prose(answer);
    expect(text).toContain('Отзывы о сервере');
    expect(text).toContain('★☆☆☆☆ <@525366699969478676>');
    expect(text).toContain('> Долго отвечают в поддержке.');
    expect(text).toContain(`↳ *Ответ модерации:* ${MOD_REPLY}`);
  });
});

describe('/up on v3', () => {
  const noUp = () =>
    expect(
      paths().filter((p) => p.startsWith('POST') || /\/up\b|\/server$|bump/i.test(p)),
      'no POST /v2/server, no up of any kind',
    ).toEqual([]);

  it.each([
    ['en-US', 'Raise on BotiCord', /raised/i],
    ['ru', 'Поднять на BotiCord', /поднят(?!ь)|Сервер поднят/i],
  ])(
    '(%s) answers privately with a link to the server page, never says it was raised',
    async (locale, label, raised) => {
      const answer = await h.run({ guildId: home.id, name: 'up', locale });
      expect(answer.outcome).toBe('onSite');
      const { message } = expectPrivate(answer);
      expect(buttonsOf(message)).toEqual([
        expect.objectContaining({ label, url: 'https://boticord.top/server/boticord' }),
      ]);
      expect(paths()).toEqual([`GET /v3/servers/${IDS.serverFresh}`]);
      noUp();
      const text = prose(answer);
      expect(text).not.toMatch(raised);
      expect(text).toContain(locale === 'ru' ? 'Апов: 62' : 'Ups: 62');
      expect(h.emu.state.servers.get(IDS.serverFresh)?.information.bumps).toBe(62);
    },
  );

  it('with a v2 key that can still raise (DIRECTORY_UP_TOKEN), /up raises through v2 while the rest stays on v3', async () => {
    await h.restartBot({
      ...V3_ENV,
      DIRECTORY_UP_TOKEN: TOKENS.privateBot,
      DIRECTORY_UP_TOKEN_KIND: 'PrivateBot',
    });
    try {
      // The tavern is in its cooldown on the directory: v2's answer is "not yet", with its next-up time.
      const answer = await h.run({ guildId: tavern.id, name: 'up' });
      expect(answer.outcome).toBe('cooldown');
      const ups = h.emu.requests.filter((r) => r.method === 'POST' && r.path === '/v2/server');
      expect(ups).toHaveLength(1);
      expect(ups[0]?.headers.authorization).toBe(`PrivateBot ${TOKENS.privateBot}`);
      expect(JSON.parse(ups[0]?.body ?? '{}')).toMatchObject({ serverID: IDS.serverCooldown, up: 1 });
      // Look-ups still go to v3 with the v3 key.
      await h.run({ name: 'server', options: [optionString('ref', IDS.serverFresh)] });
      expect(paths()).toContain(`GET /v3/servers/${IDS.serverFresh}`);
    } finally {
      await h.restartBot(V3_ENV);
    }
  });

  it('in a server the directory does not list: the link still goes to its page, nothing raised', async () => {
    const answer = await h.run({ guildId: unlisted.id, name: 'up' });
    expect(answer.outcome).toBe('onSite');
    const { message } = expectPrivate(answer);
    expect(buttonsOf(message)).toEqual([
      expect.objectContaining({ url: `https://boticord.top/server/${unlisted.id}` }),
    ]);
    expect(prose(answer)).toContain('not listed on BotiCord');
    expect(prose(answer)).not.toMatch(/raised/i);
    noUp();
  });
});

describe("v3's look-ups are cached", () => {
  it('a second /bot for the same ID within the TTL asks nothing and shows the same card', async () => {
    const first = await botRun(IDS.plainBot);
    const second = await botRun(IDS.plainBot);
    expect(paths()).toEqual([`GET /v3/bots/${IDS.plainBot}`]);
    const a = expectPublic(first).message;
    const b = expectPublic(second).message;
    expect(b.components).toEqual(a.components);
    // The short code still needs the search, but the record it finds is the one in memory.
    const byCode = await botRun('kerdoku');
    expect(expectPublic(byCode).embed.footer?.text).toBe(`${IDS.plainBot} · kerdoku`);
    expect(paths().filter((p) => p === `GET /v3/bots/${IDS.plainBot}`)).toHaveLength(1);
  });
});

describe('autocomplete of /bot on v3', () => {
  interface Choice {
    name: string;
    value: string;
  }

  async function typed(
    text: string,
    user: { id: string; username: string },
  ): Promise<{ choices: Choice[]; ms: number }> {
    const started = Date.now();
    const handle = h.discord.sendCommand({
      guildId: tavern.id,
      name: 'bot',
      autocomplete: true,
      user,
      options: [{ ...optionString('ref', text), focused: true } as ReturnType<typeof optionString>],
    });
    const response = await handle.firstResponse(3_000);
    const ms = Date.now() - started;
    expect(response.type).toBe(8);
    return { choices: (response.data as { choices: Choice[] }).choices, ms };
  }

  it('answers from memory at once; a later keystroke has the search hit; none waits on a slow search', async () => {
    const SLOW_MS = 1_500;
    h.emu.faults.add({ kind: 'latency', ms: SLOW_MS, path: /^\/search\/indexes\/bots\/search$/, version: 3 });
    const user = { id: '180000000000000123', username: 'typist_v3' };
    const first = await typed('ker', user);
    expect(first.choices).toEqual([]);
    expect(first.ms).toBeLessThan(SLOW_MS / 2);
    const hit = { name: `Kerdoku (${IDS.plainBot})`, value: IDS.plainBot };
    let later: { choices: Choice[]; ms: number } = { choices: [], ms: 0 };
    const keystrokes: number[] = [first.ms];
    await expect
      .poll(
        async () => {
          later = await typed('kerd', user);
          keystrokes.push(later.ms);
          return later.choices;
        },
        { timeout: 8_000, interval: 200 },
      )
      .toContainEqual(hit);
    // The search was slowed, and it was asked: but no keystroke's answer waited for it.
    expect(paths()).toContain('POST /v3/search/indexes/bots/search');
    for (const ms of keystrokes) expect(ms).toBeLessThan(SLOW_MS / 2);
  });
});

// ---- hostile text ----------------------------------------------------------------------------------

const HOSTILE_ID = '900000000000000077';
/** The control characters in a text (tab and newline aside). */
const controlsIn = (text: string): number[] =>
  [...text].map((ch) => ch.charCodeAt(0)).filter((c) => (c < 32 && c !== 9 && c !== 10) || c === 127);

function hostileBot(): BotData {
  return {
    id: HOSTILE_ID,
    // v3's `name` of a bot whose short code is not letters+digits is its short code.
    shortCode: '@everyone <@&42> **big**\u0007',
    links: [],
    server: { id: null, approved: false },
    information: {
      bumps: 1,
      added: 1,
      prefix: '@here',
      permissions: 0,
      tags: ['модерация'],
      developers: [IDS.serviceBotOwner],
      links: { discord: null, github: null, site: null },
      library: 'discord.js',
      shortDescription: '@everyone <@&123> __under__ ||spoiler|| \u0000\u001b[31m',
      longDescription: '# Heading\n> quote @here <@1234567890123456789>\n`code` *it*',
      badge: null,
      stats: { servers: 1, shards: 1, users: 1 },
      status: 'APPROVED',
    },
  };
}

describe('hostile text from the directory on v3', () => {
  it('is escaped on the card and pings no one', async () => {
    // First in the map: the emulator sends reviews for records at even positions.
    h.emu.state.bots = new Map([[HOSTILE_ID, hostileBot()], ...h.emu.state.bots]);
    h.emu.state.comments.bots.set(HOSTILE_ID, [
      {
        userID: IDS.prolificUser,
        text: 'review @everyone <@&7> **loud**\u0007',
        vote: 1,
        isUpdated: false,
        createdAt: 1650000000000,
      },
    ]);
    const answer = await botRun(HOSTILE_ID);
    expect(answer.outcome).toBe('shown');
    const { embed } = expectPublic(answer);
    const messages = sentMessages(answer.requests);
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.flatMap((m) => mentionProblems(m))).toEqual([]);
    for (const m of messages) {
      expect(m.allowed_mentions).toBeDefined();
      const allowed = m.allowed_mentions as { parse?: unknown[]; roles?: unknown[]; users?: unknown[] };
      expect(allowed.parse ?? []).toEqual([]);
      expect(allowed.roles ?? []).toEqual([]);
      expect(allowed.users ?? []).toEqual([]);
    }
    const text = prose(answer);
    expect(controlsIn(text)).toEqual([]);
    expect(embed.title).toContain('@\u200beveryone <\u200b@&42> \\*\\*big\\*\\*');
    expect(text).toContain('@\u200beveryone <\u200b@&123> \\_\\_under\\_\\_ \\|\\|spoiler\\|\\|');
    expect(text).toContain('\\# Heading');
    expect(text).toContain('@\u200bhere <\u200b@1234567890123456789>');
    expect(text).toContain('review @\u200beveryone <\u200b@&7> \\*\\*loud\\*\\*');
  });
});

// ---- stats -----------------------------------------------------------------------------------------

describe('stats on v3', () => {
  let s: Harness | undefined;
  const statsDir = mkdtempSync(join(tmpdir(), 'directory-bot-e2e-v3-stats-'));
  afterAll(async () => {
    try {
      await s?.close();
    } finally {
      rmSync(statsDir, { recursive: true, force: true });
    }
  });

  it('POST /v3/bots/{botId}/stats with servers and shards; a count of 0 (members) is left out', async () => {
    s = await startHarness({
      guilds: [
        // No member counts: the members are 0, which v3 refuses, so they must not be sent.
        makeGuild({ name: 'Stats One', memberCount: 0 }),
        makeGuild({ name: 'Stats Two', memberCount: 0 }),
      ],
      postStats: true,
      env: {
        ...V3_ENV,
        // A store of its own: the file's other bot holds DATA_DIR's.
        DATA_DIR: statsDir,
        // The staff key owns the service bot: the bot is it.
        DISCORD_APPLICATION_ID: IDS.serviceBot,
        STATS_ALLOW_SHORT_INTERVAL: 'true',
        STATS_INTERVAL: '2s',
        STATS_FIRST_DELAY: '100ms',
      },
    });
    const emu = s.emu;
    await expect.poll(() => emu.v3.lastStats(IDS.serviceBot), { timeout: 20_000 }).toBeDefined();
    const stats = emu.v3.lastStats(IDS.serviceBot);
    expect(stats).toMatchObject({ servers: 2, shards: 1, key: V3_KEYS.staff });
    expect(stats?.members).toBeUndefined();
    const post = emu.requests.find(
      (r) => r.method === 'POST' && r.path === `/v3/bots/${IDS.serviceBot}/stats`,
    );
    expect(post?.status).toBe(200);
    expect(post?.headers.authorization).toBe(V3_KEYS.staff);
    const body = JSON.parse(post?.body ?? '{}') as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['servers', 'shards']);
    for (const [key, value] of Object.entries(body)) {
      expect(['servers', 'shards', 'members']).toContain(key);
      expect(typeof value === 'number' && value > 0, `${key} = ${JSON.stringify(value)}`).toBe(true);
    }
    expect(paths(emu.requests).filter((p) => p.startsWith('POST /v2') || p.startsWith('POST /v1'))).toEqual(
      [],
    );
  });
});

describe('v3, all in all', () => {
  itLeavesNoTrace(() => h);
});
