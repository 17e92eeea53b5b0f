/**
 * Deadlines hold against a directory that answers too slowly or asks to wait too long: one timer
 * for each whole attempt (a body dripped a byte at a time included), one deadline across a
 * request's attempts, and a Retry-After past it refused at once with the wait it asked for.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DirectoryClient, type DirectoryClientOptions } from '../../src/directory/client.js';
import { RateLimitedError, UnavailableError } from '../../src/directory/errors.js';
import { attemptBudgetMs } from '../../src/directory/transport.js';
import { TOKENS } from '../emulator/index.js';
import { drip, type HostileServer, startHostileServer, tooManyRequests } from './hostile-server.js';

const BOT = '724663360934772797';
const DAY_S = 86_400;

let server: HostileServer;
const clients: DirectoryClient[] = [];

beforeAll(async () => {
  server = await startHostileServer();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  server.requests.length = 0;
});
afterAll(async () => {
  await server.close();
});

function client(options: DirectoryClientOptions = {}): DirectoryClient {
  const c = new DirectoryClient({
    baseUrl: server.url,
    version: 'v2',
    token: TOKENS.serviceBot,
    rateLimits: false,
    random: () => 0,
    ...options,
  });
  clients.push(c);
  return c;
}

/** The promise's rejection and how long it took to come, in ms. */
async function timed(work: Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const started = performance.now();
  const err = await work.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  return { err, ms: performance.now() - started };
}

const stats = { servers: 1, shards: 1, users: 1 };

describe('one timer for the whole attempt', () => {
  it.each([
    ['without a Content-Length', undefined],
    ['with a Content-Length it never reaches', 1_000],
  ])(
    'a body dripped a byte every 400 ms %s ends at the timeout: Unavailable (timeout)',
    async (_what, contentLength) => {
      server.handle((_req, res) => drip(res, { contentLength }));
      const { err, ms } = await timed(client({ timeoutMs: 1_000, maxRetries: 0 }).getBot(BOT));
      expect(err).toBeInstanceOf(UnavailableError);
      expect(err).toMatchObject({ reason: 'timeout', method: 'getBot' });
      expect((err as Error).message).toBe('the directory did not answer getBot in time');
      expect(ms).toBeGreaterThanOrEqual(950);
      expect(ms).toBeLessThan(2_000);
    },
  );

  it('a head that comes after its attempt gave up is dropped quietly, its connection with it', async () => {
    const late = new Promise<void>((resolve) => {
      server.handle((_req, res) => {
        setTimeout(() => {
          // A whole answer: undici has nothing left to abort, so dropping the unread body is ours alone.
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
          resolve();
        }, 600);
      });
    });
    // The deadline cuts the attempt to 300 ms; undici's own head timeout (the 5 s timeout) lets the head in.
    const { err, ms } = await timed(
      client({ timeoutMs: 5_000, maxRetries: 0 }).getBot(BOT, { deadline: Date.now() + 300 }),
    );
    expect(err).toMatchObject({ code: 'Unavailable', reason: 'timeout' });
    expect(ms).toBeLessThan(550);
    await late;
    // Time for the late head to reach the client; dropping it must raise nothing (an unhandled
    // 'error' event would fail this file).
    await new Promise((resolve) => setTimeout(resolve, 200));
  });

  it('a GET is tried again after a dripped body, each attempt bounded', async () => {
    server.handle((_req, res) => drip(res));
    const { err, ms } = await timed(client({ timeoutMs: 500, maxRetries: 2 }).getBot(BOT));
    expect(err).toMatchObject({ code: 'Unavailable', reason: 'timeout' });
    expect(server.requests).toEqual(Array(3).fill(`GET /v2/bot/${BOT}`));
    // Three attempts of 500 ms and the two shortest backoffs (125 ms, 250 ms with random() = 0).
    expect(ms).toBeLessThan(3_000);
  });

  it('a POST whose answer drips is not sent again: the directory may have acted on it', async () => {
    server.handle((_req, res) => drip(res));
    const { err, ms } = await timed(client({ timeoutMs: 500, maxRetries: 2 }).postBotStats(stats));
    expect(err).toMatchObject({ code: 'Unavailable', reason: 'timeout' });
    expect(server.requests).toEqual(['POST /v2/stats']);
    expect(ms).toBeLessThan(1_500);
  });

  it('the caller cancelling during a drip ends the request at once, as cancelled', async () => {
    server.handle((_req, res) => drip(res));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const { err, ms } = await timed(
      client({ timeoutMs: 10_000, maxRetries: 2 }).getBot(BOT, { signal: controller.signal }),
    );
    expect(err).toMatchObject({ code: 'Unavailable', message: 'getBot was cancelled' });
    expect(server.requests).toHaveLength(1);
    expect(ms).toBeLessThan(1_000);
  });
});

describe('one deadline across the attempts', () => {
  it("the caller's deadline cuts the attempts short", async () => {
    server.handle((_req, res) => drip(res));
    const { err, ms } = await timed(
      client({ timeoutMs: 1_000, maxRetries: 5 }).getBot(BOT, { deadline: Date.now() + 1_500 }),
    );
    expect(err).toMatchObject({ code: 'Unavailable', reason: 'timeout' });
    expect(ms).toBeLessThan(2_200);
    expect(server.requests.length).toBeLessThanOrEqual(2);
  });

  it('maxWaitMs is the deadline of a request whose caller names none', async () => {
    server.handle((_req, res) => drip(res));
    const { err, ms } = await timed(
      client({ timeoutMs: 1_000, maxRetries: 5, maxWaitMs: 1_500 }).getBot(BOT),
    );
    expect(err).toMatchObject({ code: 'Unavailable', reason: 'timeout' });
    expect(ms).toBeLessThan(2_200);
  });

  it('without either, the default is every attempt at its timeout and every backoff at its longest', () => {
    expect(attemptBudgetMs(10_000, 2)).toBe(40_000);
    expect(attemptBudgetMs(1_000, 0)).toBe(1_000);
  });

  it('maxWaitMs must be a positive whole number of milliseconds', () => {
    for (const maxWaitMs of [0, -1, 1.5, Number.NaN]) {
      expect(() => new DirectoryClient({ maxWaitMs })).toThrow('maxWaitMs must be a whole number');
    }
  });
});

describe('a Retry-After past the deadline', () => {
  it('fails at once with RateLimited and the wait asked for, even with no deadline given', async () => {
    server.handle((_req, res) => tooManyRequests(res, DAY_S));
    const { err, ms } = await timed(client({ maxRetries: 2 }).getBot(BOT));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(err).toMatchObject({ retryAfterMs: DAY_S * 1000, local: false, status: 429 });
    expect(server.requests).toHaveLength(1);
    expect(ms).toBeLessThan(1_000);
  });

  it('a POST too, before its deadline', async () => {
    server.handle((_req, res) => tooManyRequests(res, DAY_S));
    const { err, ms } = await timed(
      client({ maxRetries: 2 }).postBotStats(stats, { deadline: Date.now() + 30_000 }),
    );
    expect(err).toMatchObject({ code: 'RateLimited', retryAfterMs: DAY_S * 1000 });
    expect(server.requests).toEqual(['POST /v2/stats']);
    expect(ms).toBeLessThan(1_000);
  });

  it('a wait within the deadline is waited, and the answer after it returned', async () => {
    let calls = 0;
    server.handle((_req, res) => {
      calls += 1;
      if (calls === 1) tooManyRequests(res, 1);
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const started = performance.now();
    await expect(client({ maxRetries: 2 }).postBotStats(stats)).resolves.toEqual({ ok: true });
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.requests).toHaveLength(2);
  });

  it('the rate limiter then refuses at once what would wait past its deadline, sending nothing', async () => {
    server.handle((_req, res) => tooManyRequests(res, DAY_S));
    const c = client({ maxRetries: 2, rateLimits: {} });
    await expect(c.getBot(BOT)).rejects.toBeInstanceOf(RateLimitedError);
    const { err, ms } = await timed(c.getBot(BOT, { deadline: Date.now() + 30_000 }));
    expect(err).toMatchObject({ code: 'RateLimited', local: true });
    expect((err as RateLimitedError).retryAfterMs).toBeGreaterThan((DAY_S - 5) * 1000);
    expect(server.requests).toHaveLength(1);
    expect(ms).toBeLessThan(500);
  });

  it('a wait past any usable time is unknown: tried again after the usual window, then RateLimited without a wait', async () => {
    server.handle((_req, res) => tooManyRequests(res, 1e300));
    const { err } = await timed(
      client({ maxRetries: 1, rateLimits: { global: { max: 100, windowMs: 200 } } }).getBot(BOT),
    );
    expect(err).toMatchObject({ code: 'RateLimited', retryAfterMs: undefined });
    expect(server.requests).toHaveLength(2);
  });
});
