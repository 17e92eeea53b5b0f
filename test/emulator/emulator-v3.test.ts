import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, startEmulator } from './server.js';
import { IDS, V3_KEYS } from './state.js';

const T0 = 1_700_000_000_000;
let clock = T0;
let emu: Emulator;

beforeAll(async () => {
  emu = await startEmulator({ rateLimits: false, now: () => clock });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  clock = T0;
  emu.setRateLimits(false);
  emu.reset();
});

interface CallInit {
  method?: string;
  auth?: string;
  json?: unknown;
  body?: string;
  contentType?: string;
}

interface CallResult {
  status: number;
  headers: Headers;
  data: unknown;
}

async function call(path: string, init: CallInit = {}, target: Emulator = emu): Promise<CallResult> {
  const headers: Record<string, string> = {};
  if (init.auth !== undefined) headers.authorization = init.auth;
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers['content-type'] = 'application/json';
  }
  if (init.contentType !== undefined) headers['content-type'] = init.contentType;
  const res = await fetch(`${target.url}${path}`, {
    method: init.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.text();
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  return { status: res.status, headers: res.headers, data };
}

const fail = (code: number, message: string) => ({ ok: false, result: null, errors: [{ code, message }] });

function result(data: unknown): Record<string, unknown> {
  const r = (data as { result?: unknown } | undefined)?.result;
  return typeof r === 'object' && r !== null ? (r as Record<string, unknown>) : {};
}

function hits(data: unknown): Record<string, unknown>[] {
  const h = (data as { hits?: unknown } | undefined)?.hits;
  return Array.isArray(h) ? (h as Record<string, unknown>[]) : [];
}

const stats = (id: string, json: unknown, auth: string = V3_KEYS.owner) =>
  call(`/v3/bots/${id}/stats`, { auth, json });

async function searchKey(apiKey: string = V3_KEYS.owner): Promise<string> {
  const res = await call('/v3/search-key', { auth: apiKey });
  return String(result(res.data).key);
}

const search = (index: string, json: unknown, key: string) =>
  call(`/v3/search/indexes/${index}/search`, { auth: `Bearer ${key}`, json });

describe('v3 look-ups and envelope', () => {
  it('serves a bot in the v3 shape, built from the record v2 serves', async () => {
    const v2 = await call(`/v2/bot/${IDS.plainBot}`);
    const res = await call(`/v3/bots/${IDS.plainBot}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.data).toMatchObject({ ok: true });
    const bot = result(res.data);
    expect(bot).toMatchObject({
      id: IDS.plainBot,
      name: 'Kerdoku',
      shortLink: 'kerdoku',
      owner: IDS.plainBotOwner,
      status: 1,
      prefix: '?',
      library: 8,
      guilds: 2558,
      shards: 3,
      members: 348986,
      website: 'https://kerdoku.top',
      upCount: 37,
      supportServerInviteLink: 'https://discord.gg/5qXgJvr',
      premium: { active: false },
      tags: [1, 5, 0, 9],
      developers: [{ id: IDS.plainBotOwner, username: 'kerdokudev' }],
    });
    expect(bot.shortDescription).toBe(
      (v2.data as { information: { shortDescription: string } }).information.shortDescription,
    );
    expect(bot.createdDate).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(bot.ups).toEqual([
      { id: 'up7727971', expires: '1685262170000' },
      { id: 'up7727972', expires: '1685265770000' },
      { id: 'up7727973', expires: '1685269370000' },
    ]);
    expect(bot.reviews).toEqual([
      expect.objectContaining({ id: `${IDS.plainBot}-1`, content: 'aboba', rating: 5, modReply: null }),
      expect.objectContaining({
        id: `${IDS.plainBot}-2`,
        rating: 4,
        author: expect.objectContaining({ id: IDS.profileUser }),
      }),
    ]);
    expect(bot.ratings).toEqual([
      { count: 1, rating: 5 },
      { count: 1, rating: 4 },
    ]);
  });

  it('varies the disputed field names across the seeded records', async () => {
    const service = result((await call(`/v3/bots/${IDS.serviceBot}`)).data);
    expect(service).toMatchObject({ supportServerInviteCode: 'hkHjW8a', premiumActive: true });
    expect(service).not.toHaveProperty('premium');
    expect(service).not.toHaveProperty('reviews');
    expect((service.ups as { expires: unknown }[])[0]?.expires).toBeTypeOf('number');
    const hidden = result((await call(`/v3/bots/${IDS.privateBot}`)).data);
    expect(hidden).toMatchObject({ support_server_invite: null, status: 0, library: null, shortLink: null });
    expect(hidden).not.toHaveProperty('guilds');

    const fresh = result((await call(`/v3/servers/${IDS.serverFresh}`)).data);
    expect(fresh).toMatchObject({
      name: 'BotiCord Community',
      memberCount: 438,
      invite: 'hkHjW8a',
      premium: {},
    });
    expect(fresh.moderators).toHaveLength(2);
    expect(fresh.reviews).toHaveLength(3);
    const cooldown = result((await call(`/v3/servers/${IDS.serverCooldown}`)).data);
    expect(cooldown).toMatchObject({ members: 1200, premiumActive: false, owner: IDS.otherProfileUser });
    expect(cooldown).not.toHaveProperty('memberCount');

    const user = result((await call(`/v3/users/${IDS.otherProfileUser}`)).data);
    expect(user).toMatchObject({
      id: IDS.otherProfileUser,
      username: 'sqdsh',
      socials: { vk: null, telegram: null, donate: null, git: null, custom: null },
    });
    expect((user.bots as unknown[]).length).toBe(13);
    expect((user.servers as unknown[]).length).toBe(3);
    expect(result((await call(`/v3/users/${IDS.profileUser}`)).data).badges).toEqual([
      { id: 1, name: 'Staff', assetURL: 'https://boticord.top/badges/staff.png' },
    ]);
  });

  it('answers each error in the envelope', async () => {
    expect(await call('/v3/bots/404404404404404404')).toMatchObject({
      status: 404,
      data: fail(19, 'UnknownBot'),
    });
    expect(await call('/v3/servers/404404404404404404')).toMatchObject({
      status: 404,
      data: fail(20, 'UnknownServer'),
    });
    expect(await call('/v3/users/404404404404404404')).toMatchObject({
      status: 404,
      data: fail(10, 'UnknownUser'),
    });
    expect(await call('/v3/bots/kerdoku')).toMatchObject({ status: 400, data: fail(5, 'BadRequest') });
    expect(await call('/v3/bots/1234')).toMatchObject({ status: 400, data: fail(5, 'BadRequest') });
    expect(await call('/v3/bot/kerdoku')).toMatchObject({ status: 404, data: fail(2, 'NotFound') });
    expect(await call('/v3/bots/1/comments')).toMatchObject({ status: 404, data: fail(2, 'NotFound') });
  });

  it('takes a key on look-ups but needs none; an unknown key is TokenInvalid', async () => {
    expect((await call(`/v3/bots/${IDS.plainBot}`, { auth: V3_KEYS.stranger })).status).toBe(200);
    expect(await call(`/v3/bots/${IDS.plainBot}`, { auth: 'nope' })).toMatchObject({
      status: 401,
      data: fail(14, 'TokenInvalid'),
    });
    expect(await call('/v3/search-key')).toMatchObject({ status: 401, data: fail(4, 'Unauthorized') });
    expect(await call('/v3/search-key', { auth: 'nope' })).toMatchObject({
      status: 401,
      data: fail(14, 'TokenInvalid'),
    });
    expect(await call('/v3/search-key', { auth: V3_KEYS.owner })).toMatchObject({
      status: 200,
      data: { ok: true, result: { key: expect.any(String) } },
    });
  });
});

describe('POST /v3/bots/:id/stats', () => {
  it('updates the bot, answers the bot resource and records the post', async () => {
    const res = await stats(IDS.privateBot, { servers: 12, shards: 2, members: 3400 });
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({
      ok: true,
      result: { id: IDS.privateBot, guilds: 12, shards: 2, members: 3400 },
    });
    expect(emu.v3.lastStats(IDS.privateBot)).toMatchObject({ servers: 12, shards: 2, members: 3400, at: T0 });
    const v2 = await call(`/v2/bot/${IDS.privateBot}`);
    expect(v2.data).toMatchObject({ information: { stats: { servers: 12, shards: 2, users: 3400 } } });
  });

  it('accepts guilds (boticordjava) as servers, nulls and partial bodies', async () => {
    expect((await stats(IDS.privateBot, { guilds: 77, members: 5 })).status).toBe(200);
    expect(emu.v3.lastStats(IDS.privateBot)).toEqual({
      servers: 77,
      members: 5,
      key: V3_KEYS.owner,
      body: '{"guilds":77,"members":5}',
      at: T0,
    });
    expect((await stats(IDS.privateBot, { servers: 9, shards: null, members: null })).status).toBe(200);
    expect(emu.v3.lastStats(IDS.privateBot)).toMatchObject({ servers: 9 });
    expect(result((await call(`/v3/bots/${IDS.privateBot}`)).data)).toMatchObject({ guilds: 9, members: 5 });
    expect((await stats(IDS.privateBot, {})).status).toBe(200);
  });

  it('refuses 0, negatives and fractions with BadRequest', async () => {
    for (const body of [{ servers: 0 }, { members: -1 }, { shards: 1.5 }, { servers: '10' }, [1]]) {
      expect(await stats(IDS.privateBot, body)).toMatchObject({ status: 400, data: fail(5, 'BadRequest') });
    }
    expect(emu.v3.lastStats(IDS.privateBot)).toBeUndefined();
  });

  it('needs a key of the owning account and a JSON content type', async () => {
    const path = `/v3/bots/${IDS.privateBot}/stats`;
    expect(await call(path, { json: { servers: 1 } })).toMatchObject({
      status: 401,
      data: fail(4, 'Unauthorized'),
    });
    expect(await stats(IDS.privateBot, { servers: 1 }, 'nope')).toMatchObject({
      status: 401,
      data: fail(14, 'TokenInvalid'),
    });
    expect(await stats(IDS.privateBot, { servers: 1 }, V3_KEYS.stranger)).toMatchObject({
      status: 403,
      data: fail(55, 'ResourceNotOwned'),
    });
    expect((await stats(IDS.plainBot, { servers: 1 }, V3_KEYS.kerdoku)).status).toBe(200);
    expect(await stats('404404404404404404', { servers: 1 })).toMatchObject({
      status: 404,
      data: fail(19, 'UnknownBot'),
    });
    expect(await call(path, { auth: V3_KEYS.owner, body: '{"servers":1}' })).toMatchObject({
      status: 500,
      data: fail(8, 'UnknownError'),
    });
    expect(
      await call(path, { auth: V3_KEYS.owner, body: '{"servers":1}', contentType: 'text/plain' }),
    ).toMatchObject({ status: 500, data: fail(8, 'UnknownError') });
  });
});

describe('v3 search', () => {
  it('searches bots by text with limit/offset, in the Meilisearch shape', async () => {
    const key = await searchKey();
    const res = await search('bots', { q: 'ТЕСТОВЫЙ', limit: 5, offset: 2 }, key);
    expect(res.status).toBe(200);
    expect(res.data).toMatchObject({ query: 'ТЕСТОВЫЙ', limit: 5, offset: 2, estimatedTotalHits: 12 });
    expect(hits(res.data)).toHaveLength(5);
    expect(hits(res.data)[0]).toMatchObject({
      id: '900000000000000003',
      name: 'Filler 3',
      ups: 9,
      guilds: 30,
    });
    const all = await search('servers', { q: '' }, key);
    expect(hits(all.data).map((h) => h.id)).toEqual([
      IDS.serverFresh,
      IDS.serverCooldown,
      IDS.serverBoosted,
      IDS.serverNotUpdated,
    ]);
    expect(hits(all.data)[0]).toMatchObject({ invite: 'hkHjW8a', members: 438, tags: [134, 132, 130, 136] });
  });

  it('filters and sorts comments, paged like boticordjava', async () => {
    const key = await searchKey();
    const res = await search(
      'comments',
      { q: '', filter: [`resource = ${IDS.serverFresh}`], hitsPerPage: 2, page: 1, sort: ['created:desc'] },
      key,
    );
    expect(res.data).toMatchObject({ query: '', hitsPerPage: 2, page: 1, totalHits: 3, totalPages: 2 });
    expect(hits(res.data).map((h) => h.created)).toEqual([1650190000000, 1650181977858]);
    expect(hits(res.data)[0]).toEqual({
      id: `${IDS.serverFresh}-3`,
      author: '525366699969478676',
      content: 'Долго отвечают в поддержке.',
      rating: 1,
      resource: IDS.serverFresh,
      created: 1650190000000,
      modReply: 'Спасибо за отзыв!',
    });
    const byAuthor = await search('comments', { filter: `author = "${IDS.prolificUser}"`, limit: 100 }, key);
    expect(hits(byAuthor.data).length).toBeGreaterThan(10);
    expect(hits(byAuthor.data).every((h) => h.author === IDS.prolificUser)).toBe(true);
    const bad = await search('comments', { filter: 'content = x' }, key);
    expect(bad).toMatchObject({
      status: 400,
      data: { code: 'invalid_search_filter', type: 'invalid_request' },
    });
    emu.v3.addSearchDocument('comments', {
      id: 'added-1',
      author: IDS.profileUser,
      content: 'Добавлен тестом',
      rating: 4,
      resource: IDS.plainBot,
      created: 1,
      modReply: null,
    });
    expect(hits((await search('comments', { q: 'тестом' }, key)).data)).toHaveLength(1);
  });

  it('needs a Bearer search key; a rotated key is refused until a new one is fetched', async () => {
    expect(await call('/v3/search/indexes/bots/search', { json: { q: '' } })).toMatchObject({
      status: 401,
      data: { code: 'missing_authorization_header', type: 'auth' },
    });
    const old = await searchKey();
    expect((await search('bots', { q: '' }, old)).status).toBe(200);
    emu.v3.rotateSearchKey();
    expect(await search('bots', { q: '' }, old)).toMatchObject({
      status: 403,
      data: {
        code: 'invalid_api_key',
        type: 'auth',
        link: 'https://docs.meilisearch.com/errors#invalid_api_key',
      },
    });
    const fresh = await searchKey();
    expect(fresh).not.toBe(old);
    expect((await search('bots', { q: '' }, fresh)).status).toBe(200);
    expect(await search('nope', { q: '' }, fresh)).toMatchObject({
      status: 404,
      data: { code: 'index_not_found' },
    });
    expect(
      await call('/v3/search/indexes/bots/search', {
        auth: `Bearer ${fresh}`,
        body: '{}',
        contentType: 'text/plain',
      }),
    ).toMatchObject({ status: 415, data: { code: 'invalid_content_type' } });
  });
});

describe('v3 rate limit', () => {
  it('25 per 10 s per key, then RateLimited and blocked for 10 s; search counts', async () => {
    let t = T0;
    const limited = await startEmulator({ now: () => t });
    try {
      const key = String(result((await call('/v3/search-key', { auth: V3_KEYS.owner }, limited)).data).key);
      const get = (auth?: string) =>
        call(`/v3/bots/${IDS.plainBot}`, auth === undefined ? {} : { auth }, limited);
      for (let i = 0; i < 20; i++) expect((await get(V3_KEYS.owner)).status).toBe(200);
      for (let i = 0; i < 4; i++) {
        const res = await call(
          '/v3/search/indexes/bots/search',
          { auth: `Bearer ${key}`, json: {} },
          limited,
        );
        expect(res.status).toBe(200);
      }
      expect(await get(V3_KEYS.owner)).toMatchObject({ status: 429, data: fail(1, 'RateLimited') });
      // Another key and a request without one have their own buckets; v2 keeps its own limits.
      expect((await get(V3_KEYS.kerdoku)).status).toBe(200);
      expect((await get()).status).toBe(200);
      t += 9_999;
      expect((await get(V3_KEYS.owner)).status).toBe(429);
      t += 10_000;
      expect((await get(V3_KEYS.owner)).status).toBe(200);
      limited.setRateLimits({ v3: { max: 1, windowMs: 1_000, blockMs: 5_000 } });
      expect((await get(V3_KEYS.owner)).status).toBe(200);
      expect((await get(V3_KEYS.owner)).status).toBe(429);
      limited.setRateLimits({ v3: false });
      expect((await get(V3_KEYS.owner)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('v3 faults', () => {
  it('match v3 paths after the version prefix and answer in v3 shapes', async () => {
    emu.faults.add({ kind: 'status', status: 503, version: 3, path: /^\/bots\//, times: 1 });
    emu.faults.add({ kind: 'rate-limit', retryAfterMs: 2_000, version: 3, times: 1 });
    emu.faults.add({ kind: 'status', status: 500, path: /^\/search\//, times: 1 });
    expect((await call(`/v2/bots/${IDS.profileUser}`)).status).toBe(401);
    expect(await call(`/v3/bots/${IDS.plainBot}`)).toMatchObject({
      status: 503,
      data: fail(0, 'InternalServerError'),
    });
    const limited = await call(`/v3/servers/${IDS.serverFresh}`);
    expect(limited).toMatchObject({ status: 429, data: fail(1, 'RateLimited') });
    expect(limited.headers.get('retry-after')).toBe('2');
    const key = await searchKey();
    expect(await search('bots', {}, key)).toMatchObject({ status: 500, data: { type: 'internal' } });
    emu.faults.add({ kind: 'drift', version: 3, times: 1 });
    expect((await call(`/v3/bots/${IDS.plainBot}`)).data).toMatchObject({
      Ok: 'true',
      Result: { Id: IDS.plainBot },
    });
    emu.faults.add({ kind: 'drop', version: 3, times: 1 });
    await expect(call(`/v3/users/${IDS.profileUser}`)).rejects.toThrow();
  });
});
