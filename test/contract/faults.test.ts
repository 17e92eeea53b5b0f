/**
 * Each fault the directory can show yields its error class, retries happen only where safe,
 * and bad input never leaves the process.
 */
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DirectoryClient, DirectoryClientOptions } from '../../src/directory/client.js';
import {
  ForbiddenError,
  InvalidArgumentError,
  InvalidResponseError,
  RateLimitedError,
  TokenKindNotAcceptedError,
  UnavailableError,
} from '../../src/directory/errors.js';
import { type Emulator, IDS, startEmulator, TOKENS } from '../emulator/index.js';
import { closedPortUrl } from '../support/local.js';
import { clientFor } from './helpers.js';

let emu: Emulator;
const clients: DirectoryClient[] = [];

beforeAll(async () => {
  emu = await startEmulator({ rateLimits: false });
});
afterEach(async () => {
  emu.reset();
  emu.faults.clear();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await emu.close();
});

function client(options: DirectoryClientOptions = {}): DirectoryClient {
  const c = clientFor(emu, { token: TOKENS.serviceBot, ...options });
  clients.push(c);
  return c;
}

const up = {
  serverId: IDS.serverFresh,
  up: true,
  botPresent: true,
  upUserId: '525366699969478676',
  upChannelId: '722424773233213461',
  upChannelName: 'general',
};

const countTo = (path: string) => emu.requests.filter((r) => r.path.endsWith(path)).length;

describe('faults', () => {
  it('connection refused → Unavailable (network)', async () => {
    const c = clientFor(emu, { baseUrl: await closedPortUrl(), maxRetries: 1 });
    clients.push(c);
    const err = await c.getBot('kerdoku').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ reason: 'network', method: 'getBot' });
  });

  it('a 5 s stall past the timeout → Unavailable (timeout); a GET is tried again', async () => {
    // undici's header timer ticks about once a second: the timeout holds to within ~1 s.
    emu.faults.add({ path: /^\/bot\//, kind: 'stall', ms: 5_000 });
    const started = Date.now();
    const err = await client({ timeoutMs: 1_000, maxRetries: 1 })
      .getBot('kerdoku')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ reason: 'timeout' });
    expect(countTo('/bot/kerdoku')).toBe(2);
    expect(Date.now() - started).toBeLessThan(4_900);
  });

  it('a stall shorter than the timeout is simply waited for', async () => {
    emu.faults.add({ path: /^\/bot\//, kind: 'stall', ms: 300, times: 1 });
    expect((await client({ timeoutMs: 2_000 }).getBot('kerdoku')).id).toBe(IDS.plainBot);
  });

  it('500 JSON on a GET: retried, then Unavailable (status)', async () => {
    emu.faults.add({ path: /^\/bot\//, kind: 'status', status: 500, message: 'Internal Server Error' });
    const err = await client({ maxRetries: 2 })
      .getBot('kerdoku')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ reason: 'status', status: 500 });
    expect(countTo('/bot/kerdoku')).toBe(3);
  });

  it('500 on a POST is not retried: the up may have been registered', async () => {
    emu.faults.add({ path: /^\/server$/, kind: 'status', status: 500 });
    const err = await client({ maxRetries: 2 })
      .postServer(up)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect(countTo('/server')).toBe(1);
  });

  it('a dropped connection on a POST is not retried; on a GET it is', async () => {
    emu.faults.add({ kind: 'drop', times: 3 });
    const post = await client({ maxRetries: 2 })
      .postServer(up)
      .catch((e: unknown) => e);
    expect(post).toBeInstanceOf(UnavailableError);
    expect(countTo('/server')).toBe(1);
    emu.faults.clear();
    emu.faults.add({ kind: 'drop', times: 1 });
    expect((await client({ maxRetries: 2 }).getBot('kerdoku')).id).toBe(IDS.plainBot);
    expect(countTo('/bot/kerdoku')).toBe(2);
  });

  it('503 on a POST is retried: the directory did not act on it', async () => {
    emu.faults.add({ path: /^\/server$/, kind: 'status', status: 503, times: 1 });
    expect((await client({ maxRetries: 2 }).postServer(up)).upSuccessfully).toBe(true);
    expect(countTo('/server')).toBe(2);
  });

  it('502 with an HTML page → Unavailable, without the page in the message', async () => {
    emu.faults.add({ kind: 'html', status: 502 });
    const err = await client({ maxRetries: 0 })
      .getServer('boticord')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as Error).message).toBe('the directory answered 502');
  });

  it('403 with a plain-text body → Forbidden', async () => {
    emu.faults.add({ kind: 'text', status: 403, body: 'Access denied' });
    await expect(client().getBotComments(IDS.plainBot)).rejects.toBeInstanceOf(ForbiddenError);
  });

  it('invalid JSON → InvalidResponse with the status and an excerpt', async () => {
    emu.faults.add({ kind: 'invalid-json' });
    const err = await client()
      .getBot('kerdoku')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect(err).toMatchObject({ status: 200 });
    expect((err as InvalidResponseError).excerpt.length).toBeGreaterThan(0);
    expect((err as InvalidResponseError).excerpt.length).toBeLessThanOrEqual(201);
  });

  it('schema drift → InvalidResponse naming what does not fit', async () => {
    emu.faults.add({ kind: 'drift' });
    for (const call of [
      () => client().getBot('kerdoku'),
      () => client().getServer('boticord'),
      () => client().postServer(up),
      () => client().getBotComments(IDS.plainBot),
    ]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidResponseError);
      expect((err as Error).message).toMatch(/does not fit/);
    }
  });

  it('429 with Retry-After: waited for and tried again', async () => {
    emu.faults.add({ path: /^\/bot\//, kind: 'rate-limit', retryAfterMs: 1_000, times: 1 });
    const started = Date.now();
    expect((await client().getBot('kerdoku')).id).toBe(IDS.plainBot);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(countTo('/bot/kerdoku')).toBe(2);
  });

  it('429 without Retry-After: waits one window of the route, then tries again', async () => {
    emu.faults.add({ path: /^\/server$/, kind: 'rate-limit', times: 1 });
    const started = Date.now();
    expect((await client({ maxRetries: 2 }).postServer(up)).upSuccessfully).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_950);
    expect(countTo('/server')).toBe(2);
  });

  it('429 without Retry-After and no time to wait: RateLimited, wait unknown', async () => {
    emu.faults.add({ path: /^\/server$/, kind: 'rate-limit' });
    const err = await client({ maxRetries: 2 })
      .postServer(up, { deadline: Date.now() + 200 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).local).toBe(false);
    expect((err as RateLimitedError).retryAfterMs).toBeUndefined();
    expect(countTo('/server')).toBe(1);
  });

  it('a Fastify 429 body names the wait when the headers do not', async () => {
    emu.faults.add({
      path: /^\/server$/,
      kind: 'text',
      status: 429,
      body: '{"statusCode":429,"error":"Too Many Requests","message":"Rate limit exceeded, retry in 2 seconds"}',
    });
    const err = await client()
      .postServer(up, { deadline: Date.now() + 200 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(2_000);
  });

  it('429 with Retry-After past the deadline: RateLimited with that wait', async () => {
    emu.faults.add({ path: /^\/server$/, kind: 'rate-limit', retryAfterMs: 7_000 });
    const err = await client()
      .postServer(up, { deadline: Date.now() + 1_000 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(7_000);
  });
});

describe('answer bodies', () => {
  const botJson = JSON.stringify({ id: IDS.plainBot, information: { bumps: '3' } });
  const oversized = `{"id":"${IDS.plainBot}","pad":"${'x'.repeat(3 * 1024 * 1024)}"}`;
  let handler: (res: ServerResponse) => void = (res) => res.end();
  const server = createHttpServer((_req, res) => handler(res));
  let baseUrl = '';

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    baseUrl = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('reads an answer sent in chunks without a Content-Length', async () => {
    handler = (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(botJson.slice(0, 10));
      setTimeout(() => res.end(botJson.slice(10)), 20);
    };
    const bot = await client({ baseUrl }).getBot('kerdoku');
    expect(bot).toMatchObject({ id: IDS.plainBot, bumps: 3 });
  });

  it('cuts a body over 2 MB, declared or not, and says the answer is not JSON', async () => {
    for (const declared of [true, false]) {
      handler = (res) => {
        res.writeHead(200, {
          'content-type': 'application/json',
          ...(declared ? { 'content-length': Buffer.byteLength(oversized) } : {}),
        });
        res.end(oversized);
      };
      const err = await client({ baseUrl })
        .getBot('kerdoku')
        .catch((e: unknown) => e);
      expect(err, `declared: ${declared}`).toBeInstanceOf(InvalidResponseError);
      expect((err as Error).message).toMatch(/not JSON/);
      // The excerpt is the start of the body, not megabytes of it.
      expect((err as InvalidResponseError).excerpt.length).toBeLessThan(300);
    }
  });
});

describe('input never reaches another route', () => {
  const hostile = [
    '../links/get',
    '..%2Flinks%2Fget',
    'kerdoku?x=1',
    'kerdoku#x',
    'a%2Fb',
    'with space',
    '',
    '/',
    '..',
    'kerdoku/comments',
    '9'.repeat(40),
    'кердоку',
  ];
  for (const ref of hostile) {
    it(`refuses ${JSON.stringify(ref)} with no request sent`, async () => {
      const c = client();
      await expect(c.getBot(ref)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(c.getServer(ref)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(c.getProfile(ref)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(c.getBotComments(ref)).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(c.validateBot(ref, IDS.plainBot)).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(emu.requests).toHaveLength(0);
    });
  }

  it('refuses bad bodies with no request sent', async () => {
    const c = client();
    await expect(c.postServer({ ...up, upChannelName: '' })).rejects.toThrow(/upChannelName/);
    await expect(c.postServer({ ...up, upUserId: 'me' })).rejects.toThrow(/upUserId/);
    await expect(c.postServer({ ...up, membersAll: -1 })).rejects.toThrow(/serverMembersAllCount/);
    await expect(c.postBotStats({ servers: 1.5, shards: 1, users: 1 })).rejects.toThrow(/servers/);
    const p = client({ token: TOKENS.profile, tokenKind: 'Profile' });
    await expect(p.createLink({ code: 'ok', link: 'javascript:alert(1)' })).rejects.toThrow(/http/);
    await expect(p.createLink({ code: 'ok', link: 'https://x.org', domain: 2 })).rejects.toThrow(/domain/);
    await expect(p.deleteLink({ code: '../x' })).rejects.toThrow(/link code/);
    expect(emu.requests).toHaveLength(0);
  });

  it('refuses a token kind the method does not accept, naming the accepted kinds', async () => {
    const c = client({ token: TOKENS.profile, tokenKind: 'Profile' });
    const err = await c.postBotStats({ servers: 1, shards: 1, users: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TokenKindNotAcceptedError);
    expect((err as Error).message).toBe('postBotStats does not accept a Profile token; it accepts: Bot');
    const b = client({ token: TOKENS.serviceBot, tokenKind: 'Bot' });
    await expect(b.getLinks()).rejects.toThrow('getLinks does not accept a Bot token; it accepts: Profile');
    expect(emu.requests).toHaveLength(0);
  });
});

describe('the token never travels on', () => {
  it('is scrubbed from error messages the directory echoes', async () => {
    emu.faults.add({ kind: 'status', status: 400, message: `bad token ${TOKENS.serviceBot} here` });
    const err = await client()
      .getBotComments(IDS.plainBot)
      .catch((e: unknown) => e);
    expect((err as Error).message).toBe('bad token [REDACTED] here');
    emu.faults.clear();
    emu.faults.add({
      kind: 'text',
      status: 200,
      body: `{"ok":true,"type":"Bot","echo":"${TOKENS.serviceBot}"}`,
    });
    const info = await client().checkToken();
    expect(JSON.stringify(info)).not.toContain(TOKENS.serviceBot);
  });
});
