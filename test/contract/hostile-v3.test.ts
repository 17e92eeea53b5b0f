/**
 * A hostile directory on API v3 (what test/faults/families/hostile.ts does for v2 through the bot,
 * here at the client and the renderers): the directory's own text reaches the records whole and
 * the cards escaped; an id that would steer a route or a custom_id refuses the answer; bombs are
 * bounded by the transport's body limit and the schemas' list limits; impossible numbers become
 * unknown, never NaN or a crash.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryClient, type DirectoryClientOptions } from '../../src/directory/client.js';
import { InvalidArgumentError, InvalidResponseError } from '../../src/directory/errors.js';
import { renderBotCard, renderProfileCard, renderServerCard } from '../../src/render/cards.js';
import { renderCommentsPage } from '../../src/render/comments.js';
import type { RenderedMessage } from '../../src/render/message.js';
import { type Emulator, IDS, startEmulator, V3_KEYS } from '../emulator/index.js';
import { viewOf } from '../support/layout-view.js';
import { CONTROLS, en, expectNoPing, expectWithinLimits, HOSTILE_NAME, RLO } from '../unit/render/helpers.js';
import { type HostileServer, startHostileServer } from './hostile-server.js';

/** An OSC 8 hyperlink, a screen clear and a C1 CSI: what a terminal would act on if shown raw. */
const ESCAPES = '\u001b]8;;https://evil.example/\u0007click\u001b]8;;\u0007\u001b[2J\u009b31m';
const HOSTILE =
  `${HOSTILE_NAME} @here <@${IDS.profileUser}> <#${IDS.serverFresh}> ||s|| # h\n> q ` +
  `${CONTROLS} ${ESCAPES} ${RLO}txet\u202c \u2066iso\u2069 🤖`;
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point
const RAW_ESCAPE = /[\u001b\u0007\u009b\u202e\u2066]/;
const NOT_A_NUMBER = /NaN|Infinity|<t:-?\d*[^\d:]|undefined/;

let emu: Emulator;
let hostile: HostileServer;
/** What v3 answers for the plain bot, the sample server and the profile user: the bases to spoil. */
let base: { bot: Record<string, unknown>; server: Record<string, unknown>; user: Record<string, unknown> };
/** The hostile server's answer to each path; a 404 envelope for any other. */
let answers: Map<string, () => string> = new Map();
const clients: DirectoryClient[] = [];

async function resultOf(path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${emu.url}${path}`);
  return ((await res.json()) as { result: Record<string, unknown> }).result;
}

beforeAll(async () => {
  emu = await startEmulator({ rateLimits: false });
  base = {
    bot: await resultOf(`/v3/bots/${IDS.plainBot}`),
    server: await resultOf(`/v3/servers/${IDS.serverFresh}`),
    user: await resultOf(`/v3/users/${IDS.profileUser}`),
  };
  hostile = await startHostileServer();
  hostile.handle((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const answer = answers.get(path);
    if (answer === undefined) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ ok: false, errors: [{ code: 2, message: 'NotFound' }] }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(answer());
  });
});
afterEach(async () => {
  answers = new Map();
  hostile.requests.length = 0;
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await hostile.close();
  await emu.close();
});

function client(options: DirectoryClientOptions = {}): DirectoryClient {
  const c = new DirectoryClient({
    baseUrl: hostile.url,
    version: 'v3',
    token: V3_KEYS.kerdoku,
    rateLimits: false,
    timeoutMs: 3_000,
    maxRetries: 0,
    random: () => 0,
    ...options,
  });
  clients.push(c);
  return c;
}

const ok = (result: unknown): string => JSON.stringify({ ok: true, result });
const serve = (path: string, result: unknown): void => {
  const body = ok(result);
  answers.set(path, () => body);
};
const serveRaw = (path: string, body: string): void => {
  answers.set(path, () => body);
};
const fail = (e: Promise<unknown>): Promise<unknown> => e.catch((err: unknown) => err);

/** Every text the message shows, joined. */
const shown = (msg: RenderedMessage): string => viewOf(msg).texts.join('\n');

/** Rendered safely: within Discord's limits, no control or bidi character, nothing that pings. */
function expectSafe(msg: RenderedMessage, users: readonly string[]): void {
  expectWithinLimits(msg);
  expectNoPing(msg, users);
  expect(shown(msg)).not.toMatch(RAW_ESCAPE);
  expect(shown(msg)).not.toMatch(NOT_A_NUMBER);
}

const botPath = `/v3/bots/${IDS.plainBot}`;
const serverPath = `/v3/servers/${IDS.serverFresh}`;
const userPath = `/v3/users/${IDS.profileUser}`;

describe('v3 hostile text: carried whole, rendered escaped', () => {
  it('names, descriptions, tags, reviews and replies of a bot, a server and a profile', async () => {
    const review = {
      id: 'r1',
      author: { id: IDS.profileUser, username: HOSTILE },
      content: HOSTILE,
      createdDate: '2024-01-01T00:00:00.000Z',
      modReply: HOSTILE,
      rating: 5,
    };
    const evil = {
      name: HOSTILE,
      shortDescription: HOSTILE,
      description: HOSTILE.repeat(50),
      tags: [HOSTILE, '@everyone', `<@&${IDS.serverFresh}>`],
      prefix: HOSTILE,
      reviews: [review, { ...review, author: { id: '../../x', username: HOSTILE } }],
    };
    serve(botPath, { ...base.bot, ...evil });
    serve(serverPath, { ...base.server, ...evil });
    serve(userPath, {
      ...base.user,
      username: HOSTILE,
      shortDescription: HOSTILE,
      status: HOSTILE,
      badges: [{ name: HOSTILE }],
      bots: [{ id: IDS.plainBot, name: HOSTILE, shortLink: 'kerdoku' }],
    });
    const c = client();
    const bot = await c.getBot(IDS.plainBot);
    const server = await c.getServer(IDS.serverFresh);
    const profile = await c.getProfile(IDS.profileUser);
    // The records carry the text as sent.
    expect(bot.name).toBe(HOSTILE);
    expect(bot.shortDescription).toBe(HOSTILE);
    expect(bot.reviews[0]).toMatchObject({
      text: HOSTILE,
      moderatorReply: HOSTILE,
      authorId: IDS.profileUser,
    });
    expect(server.name).toBe(HOSTILE);
    expect(profile.name).toBe(HOSTILE);
    // The cards show it escaped: the review author's mention is the only user shown as one.
    // The bot's own card names it; the profile lists its bots as mentions (none of them pings).
    const users = [IDS.profileUser, IDS.plainBot, ...bot.developers, ...server.moderators];
    expectSafe(renderBotCard(bot, en, 'en-US'), users);
    expectSafe(renderServerCard(server, en, 'en-US'), users);
    expectSafe(renderProfileCard(profile, null, en), users);
  });

  it('comments from the search: carried whole, the page escaped', async () => {
    serve('/v3/search-key', { key: 'k' });
    const hit = (n: number) => ({
      id: `c${n}`,
      author: IDS.profileUser,
      content: `${HOSTILE}\n`.repeat(20),
      rating: n % 5 === 0 ? 7 : 4,
      created: n === 1 ? 1e308 : Date.now() - n * 1000,
      modReply: HOSTILE,
    });
    serveRaw('/v3/search/indexes/comments/search', JSON.stringify({ hits: [1, 2, 3, 4, 5].map(hit) }));
    const comments = await client().getBotComments(IDS.plainBot);
    expect(comments).toHaveLength(5);
    expect(comments[0]?.text).toBe(`${HOSTILE}\n`.repeat(20));
    expect(comments[0]?.at).toBeNull();
    expect(comments[4]?.rating).toBeNull();
    const page = renderCommentsPage('bot', IDS.plainBot, HOSTILE, comments, 0, en);
    expectSafe(page, [IDS.profileUser]);
    expect(shown(page)).toContain(en('comments.timeUnknown'));
  });
});

describe('v3 ids that would steer a route or a custom_id', () => {
  const STEERING: readonly unknown[] = [
    '../../x',
    '123/../456',
    `${IDS.plainBot}/../456`,
    '1'.repeat(21),
    '9'.repeat(40),
    1e21,
    12345,
    'kerdoku',
    '',
    null,
    `${IDS.plainBot}?x=1`,
    ` ${IDS.plainBot}`,
  ];
  for (const id of STEERING) {
    it(`a bot, a server and a profile whose id is ${JSON.stringify(id)}: refused, no other request`, async () => {
      serve(botPath, { ...base.bot, id });
      serve(serverPath, { ...base.server, id });
      serve(userPath, { ...base.user, id });
      const c = client();
      for (const call of [
        () => c.getBot(IDS.plainBot),
        () => c.getServer(IDS.serverFresh),
        () => c.getProfile(IDS.profileUser),
        () => c.getDeveloperBots(IDS.profileUser),
      ]) {
        const err = await fail(call());
        expect(err).toBeInstanceOf(InvalidResponseError);
        expect((err as Error).message).toMatch(/does not fit/);
      }
      expect(hostile.requests).toEqual([
        `GET ${botPath}`,
        `GET ${serverPath}`,
        `GET ${userPath}`,
        `GET ${userPath}`,
      ]);
    });
  }

  it("a profile's bots and servers whose ids steer are left out, the others kept", async () => {
    serve(userPath, {
      ...base.user,
      bots: [
        { id: '../../x', name: 'a' },
        { id: '1'.repeat(25), name: 'b' },
        { id: IDS.plainBot, name: 'Kerdoku', shortLink: 'kerdoku' },
      ],
      servers: [{ id: '123/../456', name: 'c' }],
    });
    const profile = await client().getProfile(IDS.profileUser);
    expect(profile.bots?.map((b) => b.id)).toEqual([IDS.plainBot]);
    expect(profile.servers).toEqual([]);
    expectSafe(renderProfileCard(profile, null, en), [IDS.plainBot]);
  });

  it('a reference that is a path is refused before anything is sent', async () => {
    const c = client();
    for (const ref of ['../../x', '123/../456', '..%2Fx', 'a/b', '9'.repeat(40)]) {
      await expect(c.getBot(ref)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(c.getProfile(ref)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(c.getBotComments(ref)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect(hostile.requests).toEqual([]);
  });
});

describe('v3 bombs are bounded', () => {
  it('a 5 MB body (declared or not): InvalidResponse, a short excerpt', async () => {
    const huge = ok({ ...base.bot, description: 'x'.repeat(5 * 1024 * 1024) });
    for (const declared of [true, false]) {
      hostile.handle((_req, res) => {
        res.writeHead(200, {
          'content-type': 'application/json',
          ...(declared ? { 'content-length': Buffer.byteLength(huge) } : {}),
        });
        res.end(huge);
      });
      const err = await fail(client().getBot(IDS.plainBot));
      expect(err, `declared: ${declared}`).toBeInstanceOf(InvalidResponseError);
      expect((err as Error).message).toMatch(/not JSON/);
      expect((err as InvalidResponseError).excerpt.length).toBeLessThan(300);
    }
    // Back to the table of answers for the next tests.
    hostile.handle((req, res) => {
      const answer = answers.get((req.url ?? '/').split('?')[0] ?? '/');
      if (answer === undefined) res.writeHead(404).end('{}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(answer());
    });
  });

  it('100,000 reviews, ups, developers, tags or ratings: lists cut, or the body over the limit refused', async () => {
    const many = 100_000;
    const lists: Record<string, () => unknown> = {
      reviews: () => ({ content: '' }),
      ups: () => ({}),
      developers: () => 1,
      tags: () => 1,
      ratings: () => ({ count: 1, rating: 5 }),
    };
    const seen: string[] = [];
    for (const [field, item] of Object.entries(lists)) {
      const body = ok({ ...base.bot, [field]: Array.from({ length: many }, item) });
      serveRaw(botPath, body);
      const got = await fail(client().getBot(IDS.plainBot));
      if (Buffer.byteLength(body) > 2 * 1024 * 1024) {
        // Past the transport's body limit: cut there, and the answer is not JSON.
        expect(got, field).toBeInstanceOf(InvalidResponseError);
        seen.push(`${field}: refused`);
        continue;
      }
      expect(got, field).not.toBeInstanceOf(Error);
      const bot = got as Awaited<ReturnType<DirectoryClient['getBot']>>;
      expect(bot.reviews.length).toBeLessThanOrEqual(50);
      expect(bot.ups.length).toBeLessThanOrEqual(1_000);
      expect(bot.developers.length).toBeLessThanOrEqual(50);
      expect(bot.tagCodes?.length ?? 0).toBeLessThanOrEqual(50);
      expect(bot.ratings.length).toBeLessThanOrEqual(10);
      expectSafe(renderBotCard(bot, en, 'en-US'), [
        IDS.plainBot,
        bot.owner ?? '',
        ...bot.developers,
        ...bot.reviews.map((r) => r.authorId ?? ''),
      ]);
      seen.push(`${field}: cut`);
    }
    // At least the small items fit under the limit and were cut by the schema.
    expect(seen).toEqual(
      expect.arrayContaining(['reviews: cut', 'ups: cut', 'developers: cut', 'tags: cut']),
    );
  });

  it('deeply nested JSON in a shown field is left out; as the whole result, refused', async () => {
    const depth = 100_000;
    const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const botJson = JSON.stringify({ ...base.bot, description: null, reviews: null })
      .replace('"description":null', `"description":${nested}`)
      .replace('"reviews":null', `"reviews":${nested}`);
    serveRaw(botPath, `{"ok":true,"result":${botJson}}`);
    const bot = await client().getBot(IDS.plainBot);
    expect(bot.longDescription).toBeNull();
    expect(bot.reviews).toEqual([]);
    serveRaw(serverPath, `{"ok":true,"result":${nested}}`);
    await expect(client().getServer(IDS.serverFresh)).rejects.toBeInstanceOf(InvalidResponseError);
  });
});

describe('v3 impossible numbers become unknown', () => {
  const YEAR_99999 = Date.UTC(99999, 0, 1);
  const impossible = {
    upCount: -5,
    guilds: 1e308,
    shards: 'NaN',
    members: -1,
    memberCount: 1e308,
    ratings: [
      { rating: 7, count: 3 },
      { rating: -1, count: 2 },
      { rating: 5, count: -4 },
      { rating: 4, count: 1e308 },
      { rating: 'NaN', count: 1 },
    ],
    ups: [{ id: 'u1', expires: YEAR_99999 }, { id: 'u2', expires: String(YEAR_99999) }, { expires: 1e308 }],
    reviews: [
      { id: 'r1', content: 'seven', rating: 7, createdDate: '+099999-01-01T00:00:00.000Z' },
      { id: 'r2', content: 'minus one', rating: -1, createdDate: 1e308 },
      { id: 'r3', content: 'nan', rating: 'NaN', createdDate: 'NaN' },
    ],
    createdDate: YEAR_99999,
  };

  it('counts, ratings and times on a bot and a server: null, the cards without NaN', async () => {
    serve(botPath, { ...base.bot, ...impossible });
    serve(serverPath, { ...base.server, ...impossible });
    const c = client();
    const bot = await c.getBot(IDS.plainBot);
    expect(bot.upCount).toBeNull();
    expect(bot.bumps).toBe(0);
    expect(bot.stats).toEqual({ servers: null, shards: null, users: null });
    expect(bot.createdAt).toBeNull();
    expect(bot.ups.map((u) => u.expiresAt)).toEqual([null, null, null]);
    expect(bot.reviews.map((r) => [r.rating, r.at])).toEqual([
      [null, null],
      [null, null],
      [null, null],
    ]);
    const server = await c.getServer(IDS.serverFresh);
    expect(server.members.all).toBeNull();
    expect(server.upCount).toBeNull();
    for (const card of [renderBotCard(bot, en, 'en-US'), renderServerCard(server, en, 'en-US')]) {
      expectSafe(card, [...bot.developers, ...server.moderators]);
      // No rating line: none of the ratings is possible.
      expect(shown(card)).not.toContain(en('common.rating'));
    }
  });
});
