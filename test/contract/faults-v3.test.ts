/**
 * The fault table of faults.test.ts on API v3: each fault the directory (and its search service)
 * can show yields the error class the caller sees, with v3's own code (`apiCode`) where the
 * envelope gave one; retries happen only where safe, a 429 holds the limiter (v3 blocks 10 s when
 * no Retry-After says otherwise), and a slow answer is bounded.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DirectoryClient, DirectoryClientOptions } from '../../src/directory/client.js';
import {
  ForbiddenError,
  InvalidResponseError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  UnavailableError,
} from '../../src/directory/errors.js';
import { V3_BLOCK_MS } from '../../src/directory/v3/codes.js';
import { type Emulator, IDS, startEmulator, V3_KEYS } from '../emulator/index.js';
import { clientFor } from './helpers.js';
import { drip, startHostileServer } from './hostile-server.js';

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

/** A v3 client on the emulator, with the plain bot's owner's key. */
function client(options: DirectoryClientOptions = {}): DirectoryClient {
  const c = clientFor(emu, { version: 'v3', token: V3_KEYS.kerdoku, ...options });
  clients.push(c);
  return c;
}

const fail = (e: Promise<unknown>): Promise<unknown> => e.catch((err: unknown) => err);
const countOf = (method: string, path: RegExp): number =>
  emu.requests.filter((r) => r.method === method && path.test(r.path)).length;
const botGets = (): number => countOf('GET', /^\/v3\/bots\/\d+$/);
const envelope = (code: number, message: string) =>
  JSON.stringify({ ok: false, result: null, errors: [{ code, message }] });

describe('v3 faults: statuses and envelopes', () => {
  it('V-a 5xx on a GET: retried, then Unavailable (status)', async () => {
    emu.faults.add({ version: 3, path: /^\/bots\//, kind: 'status', status: 500 });
    const err = await fail(client({ maxRetries: 2 }).getBot(IDS.plainBot));
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ reason: 'status', status: 500, apiCode: { code: 0 } });
    expect(botGets()).toBe(3);
  });

  it('V-b 502 with an HTML page: Unavailable, the page never in the message', async () => {
    emu.faults.add({ version: 3, kind: 'html', status: 502 });
    const err = await fail(client({ maxRetries: 1 }).getBot(IDS.plainBot));
    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as Error).message).not.toMatch(/<|nginx|html/i);
    expect(botGets()).toBe(2);
  });

  it('V-c 401 code 14: UnauthorizedError naming TokenInvalid', async () => {
    const err = await fail(client({ token: 'not-a-key-of-the-directory' }).getBot(IDS.plainBot));
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect(err).toMatchObject({ status: 401, apiCode: { code: 14, name: 'TokenInvalid' } });
  });

  it('V-d 404 code 19: NotFoundError naming UnknownBot', async () => {
    const err = await fail(client().getBot('999999999999999999'));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ status: 404, apiCode: { code: 19, name: 'UnknownBot' } });
    expect((err as Error).message).toMatch(/UnknownBot/);
    expect(botGets()).toBe(1);
  });

  it('V-e 403 code 55 on stats: ForbiddenError naming ResourceNotOwned, not retried', async () => {
    const err = await fail(
      client({ token: V3_KEYS.stranger }).postBotStats({ botId: IDS.plainBot, servers: 10 }),
    );
    expect(err).toBeInstanceOf(ForbiddenError);
    expect(err).toMatchObject({ status: 403, apiCode: { code: 55, name: 'ResourceNotOwned' } });
    expect(countOf('POST', /\/stats$/)).toBe(1);
    expect(emu.v3.lastStats(IDS.plainBot)).toBeUndefined();
  });

  it.each([
    [19, 'UnknownBot', NotFoundError],
    [14, 'TokenInvalid', UnauthorizedError],
    [55, 'ResourceNotOwned', ForbiddenError],
    [0, 'InternalServerError', UnavailableError],
  ] as const)('V-f ok:false on a 200 (code %i %s): the code decides the class', async (code, name, cls) => {
    emu.faults.add({ version: 3, path: /^\/bots\//, kind: 'text', status: 200, body: envelope(code, name) });
    const err = await fail(client({ maxRetries: 2 }).getBot(IDS.plainBot));
    expect(err).toBeInstanceOf(cls);
    expect(err).toMatchObject({ status: 200, apiCode: { code, name } });
    // A 200 is an answer: never tried again.
    expect(botGets()).toBe(1);
  });

  it('V-g a 200 that is not the envelope (a v2 record, drift of the envelope): InvalidResponse', async () => {
    for (const body of [
      JSON.stringify({ id: IDS.plainBot, information: {} }),
      JSON.stringify({ Ok: 'true', Result: {} }),
      '[]',
      'null',
      JSON.stringify({ ok: 'yes', result: {} }),
    ]) {
      emu.faults.clear();
      emu.faults.add({ version: 3, kind: 'text', status: 200, body });
      const err = await fail(client().getBot(IDS.plainBot));
      expect(err, body).toBeInstanceOf(InvalidResponseError);
      expect((err as Error).message, body).toMatch(/not v3's \{ ok, result \}/);
    }
    emu.faults.clear();
    emu.faults.add({ version: 3, kind: 'drift' });
    await expect(client().getBot(IDS.plainBot)).rejects.toBeInstanceOf(InvalidResponseError);
  });

  it('V-h invalid JSON on a 200: InvalidResponse with a short excerpt', async () => {
    emu.faults.add({ version: 3, kind: 'invalid-json' });
    const err = await fail(client().getServer(IDS.serverFresh));
    expect(err).toBeInstanceOf(InvalidResponseError);
    expect((err as Error).message).toMatch(/not JSON/);
    expect((err as InvalidResponseError).excerpt.length).toBeLessThanOrEqual(201);
  });

  it('V-i schema drift inside the envelope (id not a snowflake, result a list): InvalidResponse', async () => {
    const hostile = await startHostileServer();
    try {
      for (const result of [
        { id: { value: IDS.plainBot }, name: 'x' },
        [{ id: IDS.plainBot }],
        { name: 'no id at all' },
        'a string',
      ]) {
        hostile.handle((_req, res) => {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ ok: true, result }));
        });
        const c = client({ baseUrl: hostile.url });
        const err = await fail(c.getBot(IDS.plainBot));
        expect(err, JSON.stringify(result)).toBeInstanceOf(InvalidResponseError);
        expect((err as Error).message).toMatch(/does not fit/);
      }
    } finally {
      await hostile.close();
    }
  });
});

describe('v3 faults: rate limits', () => {
  it('V-j 429 with Retry-After: waited for and tried again', async () => {
    emu.faults.add({ version: 3, path: /^\/bots\//, kind: 'rate-limit', retryAfterMs: 1_000, times: 1 });
    const started = Date.now();
    expect((await client().getBot(IDS.plainBot)).id).toBe(IDS.plainBot);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(botGets()).toBe(2);
  });

  it('V-k 429 with a Retry-After past the deadline: RateLimited code 1 with that wait; the limiter holds', async () => {
    emu.faults.add({ version: 3, path: /^\/bots\//, kind: 'rate-limit', retryAfterMs: 7_000, times: 1 });
    const c = client({ rateLimits: { marginMs: 0 } });
    const err = await fail(c.getBot(IDS.plainBot, { deadline: Date.now() + 1_000 }));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({
      local: false,
      retryAfterMs: 7_000,
      apiCode: { code: 1, name: 'RateLimited' },
    });
    // The next request waits for the block too: refused here, nothing sent.
    const next = await fail(c.getServer(IDS.serverFresh, { deadline: Date.now() + 500 }));
    expect(next).toBeInstanceOf(RateLimitedError);
    expect(next).toMatchObject({ local: true });
    expect(emu.requests).toHaveLength(1);
  });

  it("V-l 429 without Retry-After: v3's 10 s block is the wait; the limiter holds", async () => {
    emu.faults.add({ version: 3, path: /^\/bots\//, kind: 'rate-limit' });
    const c = client({ rateLimits: { marginMs: 0 } });
    const err = await fail(c.getBot(IDS.plainBot, { deadline: Date.now() + 1_000 }));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ local: false, retryAfterMs: V3_BLOCK_MS, apiCode: { code: 1 } });
    const next = await fail(c.getServer(IDS.serverFresh, { deadline: Date.now() + 2_000 }));
    expect(next).toBeInstanceOf(RateLimitedError);
    expect(next).toMatchObject({ local: true });
    expect((next as RateLimitedError).retryAfterMs).toBeGreaterThan(7_000);
    expect(emu.requests).toHaveLength(1);
  });

  it('V-m code 1 with a non-429 status (400, 200): RateLimited, 10 s, and the limiter holds', async () => {
    for (const status of [400, 200]) {
      emu.reset();
      emu.faults.clear();
      emu.faults.add({ version: 3, kind: 'text', status, body: envelope(1, 'RateLimited') });
      const c = client({ rateLimits: { marginMs: 0 } });
      const err = await fail(c.getBot(IDS.plainBot, { deadline: Date.now() + 1_000 }));
      expect(err, `status ${status}`).toBeInstanceOf(RateLimitedError);
      expect(err).toMatchObject({
        status,
        retryAfterMs: V3_BLOCK_MS,
        apiCode: { code: 1, name: 'RateLimited' },
      });
      const next = await fail(c.getServer(IDS.serverFresh, { deadline: Date.now() + 1_000 }));
      expect(next, `status ${status}: the limiter did not hold`).toMatchObject({
        code: 'RateLimited',
        local: true,
      });
      expect(emu.requests).toHaveLength(1);
    }
  });
});

describe('v3 faults: slow answers are bounded', () => {
  it('V-n a 5 s stall past a 1 s timeout: Unavailable (timeout), a GET tried again, within bounds', async () => {
    emu.faults.add({ version: 3, path: /^\/bots\//, kind: 'stall', ms: 5_000 });
    const started = Date.now();
    const err = await fail(client({ timeoutMs: 1_000, maxRetries: 1 }).getBot(IDS.plainBot));
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ reason: 'timeout' });
    expect(botGets()).toBe(2);
    expect(Date.now() - started).toBeLessThan(4_900);
  });

  it('V-o a body dripped a byte every 200 ms: Unavailable (timeout) within the bound', async () => {
    const hostile = await startHostileServer();
    hostile.handle((_req, res) => drip(res, { everyMs: 200 }));
    try {
      const started = Date.now();
      const err = await fail(
        client({ baseUrl: hostile.url, timeoutMs: 1_000, maxRetries: 1 }).getBot(IDS.plainBot),
      );
      const ms = Date.now() - started;
      expect(err).toBeInstanceOf(UnavailableError);
      expect(err).toMatchObject({ reason: 'timeout' });
      expect(hostile.requests.filter((r) => r.startsWith('GET /v3/bots/'))).toHaveLength(2);
      // Two attempts of 1 s and one backoff (at most 250 ms here).
      expect(ms).toBeLessThan(3_500);
    } finally {
      await hostile.close();
    }
  });

  it('V-p a stall shorter than the timeout is waited for', async () => {
    emu.faults.add({ version: 3, path: /^\/bots\//, kind: 'stall', ms: 300, times: 1 });
    expect((await client({ timeoutMs: 2_000 }).getBot(IDS.plainBot)).id).toBe(IDS.plainBot);
  });
});

describe('v3 faults: the search service', () => {
  const searches = (): number => countOf('POST', /^\/v3\/search\/indexes\/[^/]+\/search$/);
  const keyFetches = (): number => countOf('GET', /^\/v3\/search-key$/);

  it('V-q 500 from the search: Unavailable, the POST not repeated', async () => {
    emu.faults.add({ version: 3, path: /^\/search\/indexes\//, kind: 'status', status: 500 });
    const err = await fail(client().search('bot', 'kerdoku'));
    expect(err).toBeInstanceOf(UnavailableError);
    expect(err).toMatchObject({ status: 500 });
    expect(searches()).toBe(1);
    const comments = await fail(client().getBotComments(IDS.plainBot));
    expect(comments).toBeInstanceOf(UnavailableError);
  });

  it('V-r 403 invalid_api_key once (a rotated key): the key renewed once, then the search answers', async () => {
    const c = client();
    expect((await c.search('bot', 'kerdoku')).map((h) => h.id)).toContain(IDS.plainBot);
    emu.v3.rotateSearchKey();
    const hits = await c.search('bot', 'kerdoku');
    expect(hits.map((h) => h.id)).toContain(IDS.plainBot);
    expect(keyFetches()).toBe(2);
    expect(searches()).toBe(3);
    expect(emu.requests.filter((r) => r.status === 403)).toHaveLength(1);
  });

  it('V-s 403 on every search: renewed once, then ForbiddenError (no loop)', async () => {
    emu.faults.add({ version: 3, path: /^\/search\/indexes\//, kind: 'status', status: 403 });
    const err = await fail(client().search('bot', 'kerdoku'));
    expect(err).toBeInstanceOf(ForbiddenError);
    expect(keyFetches()).toBe(2);
    expect(searches()).toBe(2);
  });

  it('V-t 401 from the search-key route (code 14): UnauthorizedError, no search sent', async () => {
    const err = await fail(client({ token: 'not-a-key-of-the-directory' }).search('bot', 'kerdoku'));
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect(err).toMatchObject({ apiCode: { code: 14, name: 'TokenInvalid' } });
    expect(searches()).toBe(0);
  });

  it('V-u garbage hits (ids that are paths or no snowflake, no name, a comment by no user) are left out', async () => {
    for (const id of ['../../x', '123/../456', '1'.repeat(25), 'kerdoku']) {
      emu.v3.addSearchDocument('bots', { id, name: 'Kerdoku evil twin', shortDescription: 'x' });
    }
    emu.v3.addSearchDocument('bots', { id: '100000000000000001', name: 42 as unknown as string });
    const hits = await client().search('bot', 'kerdoku', { limit: 20 });
    expect(hits.length).toBeGreaterThan(0);
    for (const hit of hits) expect(hit.id).toMatch(/^\d{17,20}$/);
    expect(hits.map((h) => h.name)).not.toContain('Kerdoku evil twin');
    emu.v3.addSearchDocument('comments', {
      id: 'c-evil',
      author: '../../users/@me',
      resource: IDS.plainBot,
      content: 'evil',
      rating: 5,
      created: Date.now(),
    });
    const comments = await client().getBotComments(IDS.plainBot);
    expect(comments.map((c) => c.text)).not.toContain('evil');
    for (const comment of comments) expect(comment.userId).toMatch(/^\d{17,20}$/);
  });

  it('V-v the search answering HTML or a non-Meilisearch body: Unavailable / InvalidResponse', async () => {
    emu.faults.add({ version: 3, path: /^\/search\/indexes\//, kind: 'html', status: 502, times: 1 });
    await expect(client().search('bot', 'kerdoku')).rejects.toBeInstanceOf(UnavailableError);
    emu.faults.add({ version: 3, path: /^\/search\/indexes\//, kind: 'text', status: 200, body: '<html>' });
    await expect(client().search('bot', 'kerdoku')).rejects.toBeInstanceOf(InvalidResponseError);
  });
});
