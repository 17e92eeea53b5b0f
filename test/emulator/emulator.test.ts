import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { httpGet } from '../support/http.js';
import { formatWaitRu } from './messages.js';
import { DEFAULT_COOLDOWN_MS, type Emulator, startEmulator } from './server.js';
import { IDS, PRIVATE_BOT_SERVERS, TOKENS } from './state.js';

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
  emu.setCooldownMs(DEFAULT_COOLDOWN_MS);
  emu.setNextUpStyle('epoch');
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
  text: string;
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
  return { status: res.status, headers: res.headers, text, data };
}

const auth = (version: 1 | 2, kind: string, token: string): string =>
  version === 1 ? token : `${kind} ${token}`;

const error = (code: number, message: string) => ({ error: { code, message } });

function upBody(serverID: string, up: 0 | 1, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    serverID,
    up,
    status: 1,
    upUserID: '178404926869733376',
    upChannelID: '722424773233213463',
    upChannelName: 'bump',
    ...extra,
  };
}

function field(data: unknown, key: string): unknown {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return undefined;
  return Object.entries(data).find(([k]) => k === key)?.[1];
}

function items(data: unknown): unknown[] {
  return Array.isArray(data) ? data : [];
}

describe.each([1, 2] as const)('v%i lookups and comments', (v) => {
  const botAuth = auth(v, 'Bot', TOKENS.plainBot);

  it('serves bots by id and short code, with the unlisted server field', async () => {
    const byId = await call(`/v${v}/bot/${IDS.plainBot}`);
    expect(byId.status).toBe(200);
    expect(byId.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(byId.data).toMatchObject({
      id: IDS.plainBot,
      shortCode: 'kerdoku',
      server: { id: '724668798874943529', approved: true },
      information: { bumps: 37, stats: { servers: 2558, shards: 3, users: 348986 }, status: 'APPROVED' },
    });
    expect((await call(`/v${v}/bot/kerdoku`)).data).toEqual(byId.data);
    expect((await call(`/v${v}/bot/${IDS.botNullShortCode}`)).data).toMatchObject({ shortCode: null });
    expect(await call(`/v${v}/bot/404404404404404404`)).toMatchObject({
      status: 404,
      data: error(404, 'Bot not found'),
    });
  });

  it('serves servers and profiles, 404 for unknown ones', async () => {
    const server = await call(`/v${v}/server/boticord`);
    expect(server.status).toBe(200);
    expect(server.data).toMatchObject({ id: IDS.serverFresh, bot: { id: null, approved: false } });
    expect(field(field(server.data, 'information'), 'members')).toEqual([438, 0]);
    expect((await call(`/v${v}/server/${IDS.serverFresh}`)).data).toEqual(server.data);
    expect((await call(`/v${v}/server/1`)).data).toEqual(error(404, 'Server not found'));
    expect((await call(`/v${v}/profile/${IDS.profileUser}`)).data).toMatchObject({ shortCode: 'cipherka' });
    expect(await call(`/v${v}/profile/1`)).toMatchObject({
      status: 404,
      data: error(404, 'Profile not found'),
    });
  });

  it('serves comments and developer bots to a bot token', async () => {
    const bot = await call(`/v${v}/bot/${IDS.plainBot}/comments`, { auth: botAuth });
    expect(bot.status).toBe(200);
    expect(bot.data).toEqual([
      { userID: '525366699969478676', text: 'aboba', vote: 1, isUpdated: false, createdAt: 1644388399 },
      {
        userID: '178404926869733376',
        text: 'Отличный бот, пользуюсь каждый день!',
        vote: 1,
        isUpdated: true,
        updatedAt: 1650183132145,
      },
    ]);
    const server = await call(`/v${v}/server/${IDS.serverFresh}/comments`, { auth: botAuth });
    expect(server.data).toHaveLength(3);
    const profile = await call(`/v${v}/profile/${IDS.profileUser}/comments`, { auth: botAuth });
    expect(profile.data).toMatchObject({
      bots: [{ text: 'Отличный бот, пользуюсь каждый день!' }],
      servers: [{ text: 'Лучший сервер про ботов!' }],
    });
    const dev = await call(`/v${v}/bots/${IDS.profileUser}`, { auth: botAuth });
    expect(dev.data).toEqual([{ id: '672406367344132116', shortCode: 'sonata' }]);
  });

  it('has more than ten items where clients page', async () => {
    const many = await call(`/v${v}/bot/${IDS.botManyComments}/comments`, { auth: botAuth });
    expect(items(many.data).length).toBeGreaterThan(10);
    const prolific = await call(`/v${v}/profile/${IDS.prolificUser}/comments`, { auth: botAuth });
    expect(items(field(prolific.data, 'bots')).length).toBeGreaterThan(10);
    const bots = await call(`/v${v}/bots/${IDS.otherProfileUser}`, { auth: botAuth });
    expect(items(bots.data).length).toBeGreaterThan(10);
  });

  it('refuses protected reads without a token', async () => {
    for (const path of [
      `/bot/${IDS.plainBot}/comments`,
      `/server/${IDS.serverFresh}/comments`,
      `/profile/${IDS.profileUser}/comments`,
      `/bots/${IDS.profileUser}`,
    ]) {
      expect(await call(`/v${v}${path}`)).toMatchObject({ status: 401, data: error(401, 'Unauthorized') });
    }
  });
});

describe('token kinds', () => {
  const path = `/bot/${IDS.plainBot}/comments`;

  it('v1 takes a bare bot token, not the profile token or a kind word', async () => {
    expect((await call(`/v1${path}`, { auth: TOKENS.privateBot })).status).toBe(200);
    expect((await call(`/v1${path}`, { auth: TOKENS.profile })).status).toBe(401);
    expect((await call(`/v1${path}`, { auth: `Bot ${TOKENS.plainBot}` })).status).toBe(401);
  });

  it('v2 takes each kind whose word matches the token type', async () => {
    for (const [a, status] of [
      [`Bot ${TOKENS.plainBot}`, 200],
      [`PrivateBot ${TOKENS.plainBot}`, 200],
      [`Profile ${TOKENS.profile}`, 200],
      [`Profile ${TOKENS.plainBot}`, 401],
      [`Bot ${TOKENS.profile}`, 401],
      [`Bot nope`, 401],
      [TOKENS.plainBot, 401],
      [`bot ${TOKENS.plainBot}`, 401],
      [`User ${TOKENS.profile}`, 401],
    ] as const) {
      const res = await call(`/v2${path}`, { auth: a });
      expect({ a, status: res.status }).toEqual({ a, status });
      if (status === 401) expect(res.data).toEqual(error(401, 'Unauthorized'));
    }
  });

  it('GET /v2/token names the kind; v1 has no such route', async () => {
    expect((await call('/v2/token', { auth: `PrivateBot ${TOKENS.privateBot}` })).data).toEqual({
      ok: true,
      type: 'PrivateBot',
    });
    expect((await call('/v2/token', { auth: `Profile ${TOKENS.profile}` })).data).toEqual({
      ok: true,
      type: 'Profile',
    });
    expect((await call('/v2/token', { auth: `Profile ${TOKENS.serviceBot}` })).status).toBe(401);
    expect((await call('/v2/token')).status).toBe(401);
    expect((await call('/v1/token', { auth: TOKENS.serviceBot })).status).toBe(404);
  });

  it('validateBot follows bot presence on the server', async () => {
    const a = `Bot ${TOKENS.serviceBot}`;
    const base = `/v2/server/${IDS.serverFresh}/validateBot`;
    expect((await call(`${base}/${IDS.serviceBot}`, { auth: a })).data).toEqual({ ok: true });
    expect((await call(`${base}/${IDS.plainBot}`, { auth: a })).data).toEqual({ ok: false });
    expect((await call(`/v2/server/1/validateBot/${IDS.serviceBot}`, { auth: a })).data).toEqual(
      error(404, 'Server not found'),
    );
    expect((await call(`${base}/${IDS.serviceBot}`)).status).toBe(401);
    expect(
      (await call(`/v1/server/${IDS.serverFresh}/validateBot/${IDS.serviceBot}`, { auth: a })).status,
    ).toBe(404);
    await call('/v2/server', { auth: a, json: upBody(IDS.serverFresh, 0, { status: 0 }) });
    expect((await call(`${base}/${IDS.serviceBot}`, { auth: a })).data).toEqual({ ok: false });
  });
});

describe('POST /stats', () => {
  it.each([1, 2] as const)('v%i stores the stats on the token bot', async (v) => {
    const res = await call(`/v${v}/stats`, {
      auth: auth(v, 'Bot', TOKENS.plainBot),
      json: { servers: 10, shards: 2, users: '300' },
    });
    expect(res).toMatchObject({ status: 200, data: { ok: true } });
    expect(emu.state.bots.get(IDS.plainBot)?.information.stats).toEqual({
      servers: 10,
      shards: 2,
      users: 300,
    });
  });

  it('accepts the object sent as a serialized JSON string', async () => {
    const res = await call('/v2/stats', {
      auth: `Bot ${TOKENS.plainBot}`,
      body: JSON.stringify(JSON.stringify({ servers: 1, shards: 1, users: 1 })),
      contentType: 'application/json',
    });
    expect(res.data).toEqual({ ok: true });
  });

  it('takes the Bot kind only', async () => {
    const json = { servers: 1, shards: 1, users: 1 };
    expect((await call('/v2/stats', { auth: `PrivateBot ${TOKENS.plainBot}`, json })).status).toBe(401);
    expect((await call('/v2/stats', { auth: `Profile ${TOKENS.profile}`, json })).status).toBe(401);
    expect((await call('/v1/stats', { auth: TOKENS.profile, json })).status).toBe(401);
  });

  it('answers bad bodies in the validator shape', async () => {
    const a = `Bot ${TOKENS.plainBot}`;
    expect((await call('/v2/stats', { auth: a, json: { servers: 1, shards: 1 } })).data).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: "body must have required property 'users'",
    });
    const negative = await call('/v2/stats', { auth: a, json: { servers: -1, shards: 1, users: 1 } });
    expect(negative).toMatchObject({ status: 400, data: { message: 'body/servers must be >= 0' } });
    const broken = await call('/v2/stats', { auth: a, body: '{"servers":', contentType: 'application/json' });
    expect(broken).toMatchObject({ status: 400, data: { statusCode: 400, error: 'Bad Request' } });
    const form = await call('/v2/stats', {
      auth: a,
      body: 'servers=1',
      contentType: 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(415);
  });
});

describe('POST /server', () => {
  const service = `Bot ${TOKENS.serviceBot}`;

  it('requires upUserID and the other keys, even for up 0', async () => {
    const body = upBody(IDS.serverFresh, 0);
    delete body.upUserID;
    body.upUserId = '1';
    expect(await call('/v2/server', { auth: service, json: body })).toMatchObject({
      status: 400,
      data: { statusCode: 400, error: 'Bad Request', message: "body must have required property 'upUserID'" },
    });
    const badUp = await call('/v2/server', { auth: service, json: upBody(IDS.serverFresh, 0, { up: 2 }) });
    expect(field(badUp.data, 'message')).toBe('body/up must be equal to one of the allowed values');
  });

  it('up 0 updates the server info (numeric strings coerced) and registers unknown servers', async () => {
    const res = await call('/v2/server', {
      auth: service,
      json: upBody(IDS.serverFresh, 0, {
        serverName: 'Renamed',
        serverMembersAllCount: '500',
        serverMembersOnlineCount: 42,
        serverOwnerID: '1',
      }),
    });
    expect(res.data).toMatchObject({
      serverID: IDS.serverFresh,
      up: 0,
      updated: true,
      bumps: 62,
      boost: false,
      upSuccessfully: false,
      timeToNextUpInMs: T0,
    });
    const info = emu.state.servers.get(IDS.serverFresh)?.information;
    expect(info).toMatchObject({ name: 'Renamed', members: [500, 42], owner: '1' });

    const fresh = '999000000000000001';
    await call('/v1/server', { auth: TOKENS.serviceBot, json: upBody(fresh, 0, { serverName: 'New' }) });
    expect((await call(`/v1/server/${fresh}`)).data).toMatchObject({ id: fresh, shortCode: null });
  });

  it('up 1 then cooldown, epoch style', async () => {
    const cooldown = 60_000;
    emu.setCooldownMs(cooldown);
    const first = await call('/v2/server', { auth: service, json: upBody(IDS.serverFresh, 1) });
    expect(first.data).toEqual({
      serverID: IDS.serverFresh,
      up: 1,
      updated: true,
      bumps: 63,
      boost: false,
      upSuccessfully: true,
      timeToNextUpInMs: T0 + cooldown,
      message:
        ':white_check_mark: Серверу было успешно добавлено **1 UP**!\n\n' +
        'ℹ️Вы также можете оставить отзыв о сервере!\n> https://myservers.me/s/boticord',
    });
    clock += 15_000;
    const second = await call('/v2/server', { auth: service, json: upBody(IDS.serverFresh, 1) });
    expect(second.data).toMatchObject({ bumps: 63, upSuccessfully: false, timeToNextUpInMs: T0 + cooldown });
    expect(field(second.data, 'message')).toBe(
      ':x: Сервер пока нельзя поднять! Следующий **UP** будет доступен через **45 сек.**',
    );
    clock += 45_000;
    const third = await call('/v2/server', { auth: service, json: upBody(IDS.serverFresh, 1) });
    expect(third.data).toMatchObject({ bumps: 64, upSuccessfully: true });
  });

  it('up 1 then cooldown, duration style, on the seeded cooldown server', async () => {
    emu.setNextUpStyle('duration');
    const res = await call('/v2/server', { auth: service, json: upBody(IDS.serverCooldown, 1) });
    expect(res.data).toMatchObject({
      updated: true,
      bumps: 17,
      upSuccessfully: false,
      timeToNextUpInMs: 14_395_000,
      message:
        ':x: Сервер пока нельзя поднять! Следующий **UP** будет доступен через **3 ч. 59 мин. 55 сек.**',
    });
    emu.setCooldownMs(1_000);
    const ok = await call('/v2/server', { auth: service, json: upBody(IDS.serverCooldown, 1) });
    expect(ok.data).toMatchObject({ bumps: 18, upSuccessfully: true, timeToNextUpInMs: 1_000 });
  });

  it('boosted servers get 2 ups; PrivateBot only on its five servers', async () => {
    const priv = `PrivateBot ${TOKENS.privateBot}`;
    const res = await call('/v2/server', { auth: priv, json: upBody(IDS.serverBoosted, 1) });
    expect(res.data).toMatchObject({ bumps: 242, boost: true, upSuccessfully: true });
    expect(field(res.data, 'message')).toContain('**2 UP**');
    expect(field(res.data, 'message')).toContain(`https://myservers.me/s/${IDS.serverBoosted}`);
    expect(PRIVATE_BOT_SERVERS).toHaveLength(5);
    const forbidden = await call('/v2/server', { auth: priv, json: upBody(IDS.serverFresh, 1) });
    expect(forbidden).toMatchObject({ status: 403, data: error(403, 'Forbidden') });
  });

  it('refuses tokens that may not up', async () => {
    const json = upBody(IDS.serverFresh, 1);
    for (const [path, a] of [
      ['/v2/server', `Bot ${TOKENS.plainBot}`],
      ['/v2/server', `Profile ${TOKENS.profile}`],
      ['/v2/server', undefined],
      ['/v1/server', TOKENS.plainBot],
      ['/v1/server', TOKENS.privateBot],
    ] as const) {
      const res = await call(path, { json, ...(a === undefined ? {} : { auth: a }) });
      expect({ path, a, status: res.status, data: res.data }).toEqual({
        path,
        a,
        status: 401,
        data: error(401, 'Unauthorized'),
      });
    }
    expect((await call('/v1/server', { auth: TOKENS.serviceBot, json })).status).toBe(200);
  });

  it('answers updated: false for a flagged server and for the not-updated fault', async () => {
    const flagged = await call('/v2/server', { auth: service, json: upBody(IDS.serverNotUpdated, 1) });
    expect(flagged.data).toMatchObject({ updated: false, upSuccessfully: false, bumps: 5 });
    expect(field(flagged.data, 'message')).toMatch(/не обновлена/);
    emu.faults.add({ kind: 'not-updated', message: 'нет', times: 1 });
    const faulted = await call('/v2/server', { auth: service, json: upBody(IDS.serverFresh, 1) });
    expect(faulted.data).toMatchObject({ updated: false, upSuccessfully: false, bumps: 62, message: 'нет' });
    const after = await call('/v2/server', { auth: service, json: upBody(IDS.serverFresh, 1) });
    expect(after.data).toMatchObject({ updated: true, upSuccessfully: true });
  });

  it('formats waits in Russian units', () => {
    expect(formatWaitRu(14_395_000)).toBe('3 ч. 59 мин. 55 сек.');
    expect(formatWaitRu(61_000)).toBe('1 мин. 1 сек.');
    expect(formatWaitRu(3_600_000)).toBe('1 ч. 0 мин. 0 сек.');
  });
});

describe('short links', () => {
  const profile = `Profile ${TOKENS.profile}`;

  it.each([1, 2] as const)('v%i lists the links of the token owner, filtered by code', async (v) => {
    const a = auth(v, 'Profile', TOKENS.profile);
    const all = await call(`/v${v}/links/get`, { auth: a, json: {} });
    expect(all.status).toBe(200);
    expect(items(all.data).length).toBe(3);
    expect(items(all.data).every((l) => field(l, 'ownerID') === IDS.profileUser)).toBe(true);
    expect((await call(`/v${v}/links/get`, { auth: a, json: { code: 'shiza' } })).data).toEqual([
      {
        id: 193,
        code: 'shiza',
        ownerID: '178404926869733376',
        domain: 'myservers.me',
        views: 0,
        link: 'https://sqdsh.top/',
        date: 1650183132145,
      },
    ]);
    expect(await call(`/v${v}/links/get`, { auth: a, json: { code: 'none' } })).toMatchObject({
      status: 404,
      data: error(404, 'Link not found'),
    });
  });

  it('creates and deletes links; codes are unique per domain', async () => {
    const created = await call('/v2/links/create', {
      auth: profile,
      json: { code: 'mine', link: 'https://example.org/x', domain: 3 },
    });
    expect(created.data).toEqual({ ok: true });
    expect((await call('/v2/links/get', { auth: profile, json: { code: 'mine' } })).data).toMatchObject([
      { code: 'mine', domain: 'discord.camp', views: 0, date: T0, ownerID: IDS.profileUser },
    ]);
    const bad = error(400, 'Bad request');
    for (const json of [
      { code: 'mine', link: 'https://example.org/y', domain: 3 },
      { code: 'shiza', link: 'https://example.org/y' },
      { code: 'other', link: 'https://example.org/y', domain: 2 },
      { code: 'other' },
      { link: 'https://example.org/y' },
    ]) {
      expect((await call('/v2/links/create', { auth: profile, json })).data).toEqual(bad);
    }
    expect(
      (await call('/v2/links/delete', { auth: profile, json: { code: 'shiza', domain: 2 } })).data,
    ).toEqual({
      ok: true,
    });
    expect(
      (await call('/v2/links/delete', { auth: profile, json: { code: 'shiza', domain: 2 } })).data,
    ).toEqual(error(404, 'Link not found'));
    expect((await call('/v2/links/delete', { auth: profile, json: {} })).data).toEqual(bad);
  });

  it('takes only the profile token', async () => {
    expect((await call('/v2/links/get', { auth: `Bot ${TOKENS.plainBot}`, json: {} })).status).toBe(401);
    expect((await call('/v1/links/get', { auth: TOKENS.plainBot, json: {} })).status).toBe(401);
    expect(
      (await call('/v2/links/get', { auth: `Profile ${TOKENS.otherProfile}`, json: {} })).data,
    ).toMatchObject([{ id: 155, ownerID: IDS.otherProfileUser }]);
  });
});

describe('routing', () => {
  it('answers unknown routes like Fastify and records them', async () => {
    const res = await call('/v2/nothing?x=1');
    expect(res).toMatchObject({
      status: 404,
      data: { statusCode: 404, error: 'Not Found', message: 'Route GET:/v2/nothing?x=1 not found' },
    });
    expect((await call('/v3/bot/kerdoku')).status).toBe(404);
    expect((await call('/v1/server', { method: 'GET' })).status).toBe(404);
    expect((await call('/v1/bot/kerdoku/')).status).toBe(404);
    expect(emu.requests.map((r) => [r.method, r.path, r.status])).toEqual([
      ['GET', '/v2/nothing?x=1', 404],
      ['GET', '/v3/bot/kerdoku', 404],
      ['GET', '/v1/server', 404],
      ['GET', '/v1/bot/kerdoku/', 404],
    ]);
  });

  it('never routes encoded slashes or dot segments elsewhere', async () => {
    const a = `Bot ${TOKENS.plainBot}`;
    const slashed = await call(`/v2/bot/${IDS.plainBot}%2Fcomments`, { auth: a });
    expect(slashed).toMatchObject({ status: 404, data: error(404, 'Bot not found') });
    const traversal = await call(`/v2/bot/..%2Fprofile%2F${IDS.profileUser}`);
    expect(traversal.data).toEqual(error(404, 'Bot not found'));
    const dots = await httpGet(emu.port, `/v2/bot/../profile/${IDS.profileUser}`);
    expect(dots.status).toBe(404);
    expect(JSON.parse(dots.body)).toMatchObject({ error: 'Not Found' });
    const encodedDots = await httpGet(emu.port, '/v2/bot/%2E%2E');
    expect(JSON.parse(encodedDots.body)).toEqual(error(404, 'Bot not found'));
    expect((await httpGet(emu.port, '/v2/bot/%E0%A4%A')).status).toBe(400);
    expect((await call('/v2/bot/kerdoku?x=%2F')).status).toBe(200);
  });
});

describe('rate limits', () => {
  it('global and per-route buckets with headers, fixed windows on the injected clock', async () => {
    let t = T0;
    const limited = await startEmulator({ now: () => t });
    try {
      const get = () => call(`/v2/bot/${IDS.plainBot}`, {}, limited);
      const first = await get();
      expect(first.headers.get('x-ratelimit-limit')).toBe('5');
      expect(first.headers.get('x-ratelimit-remaining')).toBe('4');
      expect(first.headers.get('x-ratelimit-reset')).toBe('5');
      for (let i = 0; i < 4; i++) expect((await get()).status).toBe(200);
      t += 1_500;
      const refused = await get();
      expect(refused.status).toBe(429);
      expect(refused.data).toEqual({
        statusCode: 429,
        error: 'Too Many Requests',
        message: 'Rate limit exceeded, retry in 4 seconds',
      });
      expect(refused.headers.get('retry-after')).toBe('4');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      t += 3_500;
      expect((await get()).status).toBe(200);

      const stats = (a: string) =>
        call('/v2/stats', { auth: a, json: { servers: 1, shards: 1, users: 1 } }, limited);
      const a = `Bot ${TOKENS.plainBot}`;
      expect((await stats(a)).headers.get('x-ratelimit-limit')).toBe('1');
      const second = await stats(a);
      expect(second.status).toBe(429);
      expect(second.headers.get('retry-after')).toBe('2');
      // Another key has its own buckets.
      expect((await stats(`Bot ${TOKENS.serviceBot}`)).status).toBe(200);
      t += 2_000;
      expect((await stats(a)).status).toBe(200);
      expect(limited.requests.filter((r) => r.status === 429)).toHaveLength(2);
    } finally {
      await limited.close();
    }
  });

  it('bare 429s without headers; limits adjustable at run time', async () => {
    const limited = await startEmulator({
      rateLimitHeaders: false,
      rateLimits: { global: { max: 1, windowMs: 60_000 }, routes: false },
    });
    try {
      const ok = await call('/v1/bot/kerdoku', {}, limited);
      expect(ok.headers.get('x-ratelimit-limit')).toBeNull();
      const refused = await call('/v1/bot/kerdoku', {}, limited);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBeNull();
      expect(refused.headers.get('x-ratelimit-reset')).toBeNull();
      expect(field(refused.data, 'statusCode')).toBe(429);
      limited.setRateLimits(false);
      expect((await call('/v1/bot/kerdoku', {}, limited)).status).toBe(200);
    } finally {
      await limited.close();
    }
  });
});

describe('faults', () => {
  const botPath = `/v2/bot/${IDS.plainBot}`;

  it('latency and stall delay a normal answer', async () => {
    emu.faults.add({ kind: 'latency', ms: 60, times: 1 });
    emu.faults.add({ kind: 'stall', ms: 60, path: /^\/server\//, times: 1 });
    for (const path of [botPath, '/v2/server/boticord']) {
      const started = performance.now();
      expect((await call(path)).status).toBe(200);
      expect(performance.now() - started).toBeGreaterThanOrEqual(50);
    }
  });

  it('status, html and text bodies; times counts down; method and path filter', async () => {
    emu.faults.add({ kind: 'status', status: 503, times: 1, method: 'get', path: /^\/bot\// });
    emu.faults.add({ kind: 'html', status: 502, times: 1 });
    emu.faults.add({ kind: 'text', status: 403, times: 1, method: 'POST' });
    expect((await call('/v2/server/boticord')).headers.get('content-type')).toBe('text/html');
    expect(await call(botPath)).toMatchObject({ status: 503, data: error(503, 'Service Unavailable') });
    const text = await call('/v2/links/get', { auth: `Profile ${TOKENS.profile}`, json: {} });
    expect(text).toMatchObject({ status: 403, text: '403 Forbidden' });
    expect((await call(botPath)).status).toBe(200);
    expect(emu.faults.rules).toHaveLength(0);
  });

  it('invalid-json truncates and drift reshapes a 200', async () => {
    emu.faults.add({ kind: 'invalid-json', times: 1 });
    const broken = await call(botPath);
    expect(broken.status).toBe(200);
    expect(broken.headers.get('content-type')).toContain('application/json');
    expect(broken.data).toBeUndefined();
    emu.faults.add({ kind: 'drift', times: 1 });
    const drifted = await call(botPath);
    expect(drifted.status).toBe(200);
    expect(drifted.data).toMatchObject({ Id: IDS.plainBot, short_code: 'kerdoku' });
    expect(field(field(drifted.data, 'Information'), 'Bumps')).toEqual({ value: 37 });
  });

  it('drop destroys the socket without an answer', async () => {
    emu.faults.add({ kind: 'drop', times: 1 });
    await expect(call(botPath)).rejects.toThrow();
    expect(emu.requests[0]?.status).toBe(0);
    expect((await call(botPath)).status).toBe(200);
  });

  it('rate-limit with and without retry-after', async () => {
    emu.faults.add({ kind: 'rate-limit', retryAfterMs: 2_500, times: 1 });
    emu.faults.add({ kind: 'rate-limit', times: 1 });
    const withHeader = await call(botPath);
    expect(withHeader).toMatchObject({ status: 429, data: { statusCode: 429, error: 'Too Many Requests' } });
    expect(withHeader.headers.get('retry-after')).toBe('3');
    const bare = await call(botPath);
    expect(bare.status).toBe(429);
    expect(bare.headers.get('retry-after')).toBeNull();
  });

  it('close() ends keep-alive and pending requests', async () => {
    const other = await startEmulator({ rateLimits: false });
    await call('/v1/bot/kerdoku', {}, other);
    other.faults.add({ kind: 'stall', ms: 10_000 });
    const pending = call('/v1/bot/kerdoku', {}, other).then(
      () => 'answered',
      () => 'failed',
    );
    await new Promise((r) => setTimeout(r, 50));
    const started = performance.now();
    await other.close();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await pending).toBe('failed');
  });
});

describe('reset', () => {
  it('restores the seed in place and clears requests and faults', async () => {
    const state = emu.state;
    await call('/v2/server', { auth: `Bot ${TOKENS.serviceBot}`, json: upBody(IDS.serverFresh, 1) });
    emu.faults.add({ kind: 'drop' });
    emu.reset();
    expect(emu.state).toBe(state);
    expect(emu.state.servers.get(IDS.serverFresh)?.information.bumps).toBe(62);
    expect(emu.requests).toHaveLength(0);
    expect((await call('/v1/bot/kerdoku')).status).toBe(200);
  });
});
