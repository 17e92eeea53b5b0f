/**
 * The client on API v3 against the emulator's v3, over real sockets: each method's route, the
 * key sent bare, the records it gives (the same types as v1/v2, with v3's additions), the error
 * envelope as our errors naming the directory's code, the 25 per 10 s limit kept, short codes
 * through the search, comments from the search's comments index, the search key renewed when
 * refused, and the look-ups' cache.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DirectoryClient, type DirectoryClientOptions } from '../../src/directory/client.js';
import {
  ForbiddenError,
  InvalidArgumentError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
} from '../../src/directory/errors.js';
import { type Emulator, IDS, startEmulator, V3_KEYS } from '../emulator/index.js';

let emu: Emulator | undefined;
let client: DirectoryClient | undefined;

afterEach(async () => {
  await client?.close();
  await emu?.close();
  client = undefined;
  emu = undefined;
});

async function start(
  options: Partial<DirectoryClientOptions> = {},
  emulator: Parameters<typeof startEmulator>[0] = { rateLimits: false },
): Promise<{ emu: Emulator; client: DirectoryClient }> {
  emu = await startEmulator(emulator);
  client = new DirectoryClient({
    baseUrl: emu.url,
    version: 'v3',
    token: V3_KEYS.staff,
    rateLimits: false,
    timeoutMs: 2_000,
    maxRetries: 1,
    ...options,
  });
  return { emu, client };
}

/** The v3 requests the emulator saw, as `METHOD /path` (the query and /v3 kept). */
const seen = (e: Emulator) => e.requests.map((r) => `${r.method} ${r.path}`);

describe('the client on v3', () => {
  it('is the default version, with its published limit', async () => {
    const c = new DirectoryClient({ baseUrl: 'http://127.0.0.1:9' });
    expect(c.version).toBe('v3');
    await c.close();
  });

  it('a bot: GET /v3/bots/{id} with the key bare, as the same record v2 gives, with what v3 adds', async () => {
    const { emu, client } = await start();
    const bot = await client.getBot(IDS.plainBot);
    const request = emu.requests.at(-1);
    expect(`${request?.method} ${request?.path}`).toBe(`GET /v3/bots/${IDS.plainBot}`);
    expect(request?.headers.authorization).toBe(V3_KEYS.staff);
    expect(bot).toMatchObject({
      id: IDS.plainBot,
      name: 'Kerdoku',
      shortCode: 'kerdoku',
      owner: IDS.plainBotOwner,
      prefix: '?',
      library: 'Discord.py',
      status: 'PUBLIC',
      upCount: 37,
      bumps: 37,
      stats: { servers: 2558, shards: 3, users: 348986 },
      tagCodes: [1, 5, 0, 9],
      developers: [IDS.plainBotOwner],
      links: { discord: 'https://discord.gg/5qXgJvr', site: 'https://kerdoku.top', github: null },
      pageLinks: ['https://boticord.top/bot/kerdoku'],
    });
    expect(bot.ratings).toEqual([
      { rating: 5, count: 1 },
      { rating: 4, count: 1 },
    ]);
    // `expires` as a string of ms (the SDKs) is a time.
    expect(bot.ups[0]?.expiresAt?.getTime()).toBe(1685262170000);
    expect(bot.createdAt?.toISOString()).toBe('2020-06-22T16:33:28.841Z');
    expect(bot.reviews.length).toBeGreaterThan(0);
    expect(bot.reviews[0]).toMatchObject({ text: expect.any(String) });
  });

  it('a look-up needs no key: none is sent without one', async () => {
    const { emu, client } = await start({ token: undefined });
    await client.getServer(IDS.serverFresh);
    expect(emu.requests.at(-1)?.headers.authorization).toBeUndefined();
  });

  it('a server and a profile: memberCount or members, moderators, a profile with its bots and servers', async () => {
    const { client } = await start();
    const server = await client.getServer(IDS.serverFresh);
    expect(server).toMatchObject({
      id: IDS.serverFresh,
      name: 'BotiCord Community',
      shortCode: 'boticord',
      members: { all: 438, online: null },
      owner: IDS.serviceBotOwner,
      links: { invite: 'hkHjW8a', site: 'https://boticord.top/' },
      tagCodes: [134, 132, 130, 136],
    });
    expect(server.moderators).toContain(IDS.serviceBotOwner);
    const profile = await client.getProfile(IDS.profileUser);
    expect(profile).toMatchObject({
      id: IDS.profileUser,
      name: 'cipherka',
      badges: ['Staff'],
      telegram: 'cipherka',
      donate: 'https://boosty.to/cipherka',
      git: 'https://git.sqdsh.top/me',
      site: 'https://sqdsh.top/',
    });
    expect(profile.bots?.map((b) => b.id)).toContain(IDS.serviceBot);
    expect(profile.servers).not.toBeNull();
    // The developer's bots come from the same profile.
    expect((await client.getDeveloperBots(IDS.profileUser)).map((b) => b.id)).toContain(IDS.serviceBot);
  });

  it('an unknown bot: NotFoundError naming the code (19 UnknownBot)', async () => {
    const { client } = await start();
    const err = await client.getBot('999999999999999999').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).apiCode).toEqual({ code: 19, name: 'UnknownBot' });
    expect((err as NotFoundError).toJSON()).toMatchObject({
      apiCode: 19,
      apiCodeName: 'UnknownBot',
      status: 404,
    });
  });

  it('a short code: found through the search, the record whose short link it is; else NotFoundError, never another card', async () => {
    const { emu, client } = await start();
    const bot = await client.getBot('kerdoku');
    expect(bot.id).toBe(IDS.plainBot);
    expect(seen(emu)).toEqual([
      'GET /v3/search-key',
      'POST /v3/search/indexes/bots/search',
      `GET /v3/bots/${IDS.plainBot}`,
    ]);
    // A code no record has: a search that finds records by name is not enough.
    const err = await client.getBot('kerdok').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).toMatch(/no bot has the short code "kerdok"/);
    const server = await client.getServer('boticord');
    expect(server.id).toBe(IDS.serverFresh);
  });

  it('a short code without a key: a clear InvalidArgumentError, nothing sent', async () => {
    const { emu, client } = await start({ token: undefined });
    await expect(client.getBot('kerdoku')).rejects.toThrow(
      /API v3 looks bots up by ID; finding the short code "kerdoku" needs the search, which needs DIRECTORY_TOKEN/,
    );
    expect(emu.requests).toHaveLength(0);
  });

  it('comments: the comments index, newest first, with ratings; by author for a profile', async () => {
    const { emu, client } = await start();
    const comments = await client.getBotComments(IDS.plainBot);
    expect(comments.length).toBeGreaterThan(0);
    const times = comments.map((c) => c.at?.getTime() ?? 0);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(comments[0]).toMatchObject({ rating: expect.any(Number), vote: expect.any(Number) });
    const search = emu.requests.find((r) => r.path === '/v3/search/indexes/comments/search');
    expect(JSON.parse(search?.body ?? '{}')).toEqual({
      q: '',
      limit: 100,
      filter: [`resource = "${IDS.plainBot}"`],
      sort: ['created:desc'],
    });
    expect(search?.headers.authorization).toMatch(/^Bearer /);
    const mine = await client.getProfileComments(IDS.profileUser);
    expect(mine.bots).toEqual([]);
    expect(mine.other?.every((c) => c.userId === IDS.profileUser)).toBe(true);
  });

  it('the search key is fetched once, and again once the search refuses it', async () => {
    const { emu, client } = await start();
    await client.search('bot', 'kerdoku');
    await client.search('bot', 'boti');
    expect(seen(emu).filter((r) => r === 'GET /v3/search-key')).toHaveLength(1);
    emu.v3.rotateSearchKey();
    const hits = await client.search('server', 'boticord');
    expect(hits.map((h) => h.id)).toContain(IDS.serverFresh);
    expect(seen(emu).filter((r) => r === 'GET /v3/search-key')).toHaveLength(2);
  });

  it('stats: POST /v3/bots/{id}/stats with servers, shards and members; a 0 or an unknown count left out', async () => {
    const { emu, client } = await start();
    await expect(
      client.postBotStats({ servers: 120, shards: 2, users: 0, botId: IDS.serviceBot }),
    ).resolves.toEqual({ ok: true });
    const request = emu.requests.at(-1);
    expect(`${request?.method} ${request?.path}`).toBe(`POST /v3/bots/${IDS.serviceBot}/stats`);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers.authorization).toBe(V3_KEYS.staff);
    expect(JSON.parse(request?.body ?? '')).toEqual({ servers: 120, shards: 2 });
    expect(emu.v3.lastStats(IDS.serviceBot)).toMatchObject({ servers: 120, shards: 2 });
    await client.postBotStats({ servers: 121, shards: undefined, users: 5_000, botId: IDS.serviceBot });
    expect(JSON.parse(emu.requests.at(-1)?.body ?? '')).toEqual({ servers: 121, members: 5_000 });
    // Nothing to post, or no bot ID: refused before anything is sent.
    const before = emu.requests.length;
    await expect(
      client.postBotStats({ servers: 0, shards: 0, users: 0, botId: IDS.serviceBot }),
    ).rejects.toThrow(InvalidArgumentError);
    await expect(client.postBotStats({ servers: 1, shards: 1, users: 1 })).rejects.toThrow(/botId/);
    expect(emu.requests).toHaveLength(before);
  });

  it("stats for a bot the key's account does not own: ForbiddenError 55 ResourceNotOwned", async () => {
    const { client } = await start({ token: V3_KEYS.stranger });
    const err = await client
      .postBotStats({ servers: 1, shards: 1, users: 1, botId: IDS.serviceBot })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForbiddenError);
    expect((err as ForbiddenError).apiCode).toEqual({ code: 55, name: 'ResourceNotOwned' });
  });

  it('an unknown key: UnauthorizedError 14 TokenInvalid, the key in no message', async () => {
    const key = 'emu-v3-not-a-key-0000000000000000';
    const { client } = await start({ token: key });
    const err = await client
      .postBotStats({ servers: 1, shards: 1, users: 1, botId: IDS.serviceBot })
      .catch((e) => e);
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect((err as UnauthorizedError).apiCode?.name).toBe('TokenInvalid');
    expect(JSON.stringify((err as UnauthorizedError).toJSON())).not.toContain(key);
  });

  it('v1/v2 methods are refused on v3 before anything is sent', async () => {
    const { emu, client } = await start();
    await expect(
      client.postServer({
        serverId: IDS.serverFresh,
        up: true,
        botPresent: true,
        upUserId: IDS.profileUser,
        upChannelId: IDS.serverFresh,
        upChannelName: 'general',
      }),
    ).rejects.toThrow(/postServer exists only in API v1, v2/);
    await expect(client.checkToken()).rejects.toThrow(InvalidArgumentError);
    await expect(client.getLinks()).rejects.toThrow(InvalidArgumentError);
    expect(emu.requests).toHaveLength(0);
  });

  it('keeps to the limit (scaled to 5 per 1 s): the 6th waits for the window rather than meet a 429', async () => {
    const { emu, client } = await start(
      { rateLimits: { global: { max: 5, windowMs: 1_000 }, marginMs: 25 } },
      { rateLimits: { v3: { max: 5, windowMs: 1_000, blockMs: 1_000 } } },
    );
    const ids = [IDS.plainBot, IDS.serviceBot, IDS.privateBot];
    await Promise.all(Array.from({ length: 12 }, (_, i) => client.getBot(ids[i % 3] as string)));
    expect(emu.requests.filter((r) => r.status === 429)).toHaveLength(0);
    expect(emu.requests).toHaveLength(12);
  }, 15_000);

  it('a 429 with code 1 is RateLimited, with v3’s 10 s block when no Retry-After says otherwise', async () => {
    const { client } = await start(
      { maxRetries: 0 },
      { rateLimits: { v3: { max: 1, windowMs: 60_000, blockMs: 60_000 } }, rateLimitHeaders: false },
    );
    await client.getBot(IDS.plainBot);
    const err = await client.getBot(IDS.serviceBot).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).apiCode?.name).toBe('RateLimited');
    expect((err as RateLimitedError).retryAfterMs).toBe(10_000);
  });
});

describe("the look-ups' cache", () => {
  it('answers a look-up again from memory, one request for concurrent ones, and forgets on demand', async () => {
    const { emu, client } = await start({ cache: { ttlMs: 60_000 } });
    const [a, b] = await Promise.all([client.getBot(IDS.plainBot), client.getBot(IDS.plainBot)]);
    expect(a).toBe(b);
    await client.getBot(IDS.plainBot);
    expect(seen(emu)).toEqual([`GET /v3/bots/${IDS.plainBot}`]);
    expect(client.cacheStats()).toMatchObject({ entries: 1, fresh: 1, misses: 1, shared: 1 });
    // The directory said the bot changed: the next look-up asks again.
    expect(client.forget('bot', IDS.plainBot)).toBe(1);
    await client.getBot(IDS.plainBot);
    expect(seen(emu)).toHaveLength(2);
  });

  it('serves a stale record at once and refreshes it behind the answer at background priority', async () => {
    let now = 1_000_000;
    const priorities: string[] = [];
    const { emu, client } = await start({
      cache: { ttlMs: 1_000, staleMs: 10_000 },
      now: () => now,
      rateLimits: { global: { max: 100, windowMs: 1_000 } },
      onRateLimitGrant: (info) => priorities.push(info.priority),
    });
    const first = await client.getServer(IDS.serverFresh);
    now += 2_000;
    const stale = await client.getServer(IDS.serverFresh);
    expect(stale).toBe(first);
    await expect.poll(() => emu.requests.length).toBe(2);
    expect(priorities).toEqual(['interactive', 'background']);
    expect(client.cacheStats()).toMatchObject({ stale: 1, refreshes: 1 });
    // Past the stale window: the directory again, waited for.
    now += 20_000;
    await client.getServer(IDS.serverFresh);
    expect(emu.requests).toHaveLength(3);
  });

  it('remembers a record the directory does not have for a while, not for ever', async () => {
    let now = 5_000_000;
    const { emu, client } = await start({ cache: { ttlMs: 300_000, missingTtlMs: 60_000 }, now: () => now });
    await expect(client.getBot('999999999999999999')).rejects.toThrow(NotFoundError);
    await expect(client.getBot('999999999999999999')).rejects.toThrow(NotFoundError);
    expect(emu.requests).toHaveLength(1);
    now += 61_000;
    await expect(client.getBot('999999999999999999')).rejects.toThrow(NotFoundError);
    expect(emu.requests).toHaveLength(2);
  });

  it('lets go of records past their time as others are stored, not only at the bound', async () => {
    let now = 5_000_000;
    const { client } = await start({
      cache: { ttlMs: 300_000, staleMs: 0, missingTtlMs: 60_000 },
      now: () => now,
    });
    for (const id of ['999999999999999991', '999999999999999992', '999999999999999993'])
      await expect(client.getBot(id)).rejects.toThrow(NotFoundError);
    await client.getBot(IDS.plainBot);
    expect(client.cacheStats().entries).toBe(4);
    // The three misses past their minute: gone as the next record is stored.
    now += 61_000;
    await client.getBot(IDS.serviceBot);
    expect(client.cacheStats().entries).toBe(2);
    // The records past their time (ttl, no stale window) too.
    now += 300_000;
    await expect(client.getBot('999999999999999994')).rejects.toThrow(NotFoundError);
    expect(client.cacheStats().entries).toBe(1);
  });

  it('is bounded: the least recently used record goes first', async () => {
    const { emu, client } = await start({ cache: { maxEntries: 2 } });
    await client.getBot(IDS.plainBot);
    await client.getBot(IDS.serviceBot);
    await client.getBot(IDS.plainBot);
    await client.getBot(IDS.privateBot);
    expect(client.cacheStats().entries).toBe(2);
    await client.getBot(IDS.plainBot);
    await client.getBot(IDS.serviceBot);
    expect(seen(emu).filter((r) => r.endsWith(IDS.serviceBot))).toHaveLength(2);
    expect(seen(emu).filter((r) => r.endsWith(IDS.plainBot))).toHaveLength(1);
  });
});
