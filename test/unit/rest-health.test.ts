/**
 * Discord's REST health (src/gateway/rest-health.ts) as the operator reads it: one warning when a
 * trouble begins, one line when it ends, whatever the number of requests in between; a route
 * that answers does not end another route's failing; short holds and blips are not told; no
 * token ever reaches a line. The end-to-end run through the real bot is test/e2e/discord-outage.test.ts.
 */
import type { InternalRequest, REST, RESTOptions } from '@discordjs/rest';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  FORGET_MS,
  GRACE_MS,
  type RestConditions,
  RestHealth,
  routeOf,
} from '../../src/gateway/rest-health.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { captureLogger, LEVEL } from '../support/logs.js';

type Answer = { ok: true } | { ok: false; err: Error };

/** A REST whose queueRequest answers as `next` says, watched by a RestHealth. */
function rig() {
  const { logger, lines } = captureLogger();
  const changes: RestConditions[] = [];
  const metrics = createMetrics({ defaultMetrics: false });
  const health = new RestHealth({
    logger,
    onChange: (c) => {
      changes.push(c);
      metrics.discordRest(c);
    },
  });
  let next: Answer = { ok: true };
  const rest = {
    queueRequest: async (_request: InternalRequest) => {
      if (next.ok) return new Response('{}');
      throw next.err;
    },
  } as unknown as REST;
  health.watch(rest);
  const send = async (method: string, fullRoute: string, answer: Answer) => {
    next = answer;
    await rest.queueRequest({ method, fullRoute } as InternalRequest).catch(() => undefined);
  };
  const told = () => lines.filter((l) => l.level >= LEVEL.info);
  const state = async () => {
    const text = await metrics.registry.getSingleMetricAsString('discord_rest_state');
    return Object.fromEntries([...text.matchAll(/state="(\w+)"\} (\d+)/g)].map(([, k, v]) => [k, Number(v)]));
  };
  return { health, send, told, changes, state, lines };
}

const http500 = (): Error =>
  Object.assign(new Error('Internal Server Error'), { name: 'HTTPError', status: 500 });
const refused = (): Error =>
  Object.assign(new TypeError('fetch failed'), {
    cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }),
  });
const unknownMessage = (): Error =>
  Object.assign(new Error('Unknown Message'), { name: 'DiscordAPIError', status: 404 });

/** A makeRequest answering 429 with these headers. */
function limited(headers: Record<string, string>): RESTOptions['makeRequest'] {
  return async () => new Response('{}', { status: 429, headers });
}

describe('RestHealth', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('failing: one warning for many failed requests, ended by a good answer on the route that failed', async () => {
    const r = rig();
    for (let i = 0; i < 20; i++)
      await r.send('POST', '/channels/1234567890123456789/messages', { ok: false, err: http500() });
    // Another route answering is not the failing one answering.
    await r.send('GET', '/guilds/1234567890123456789', { ok: true });
    await r.send('PATCH', '/channels/1/messages/2', { ok: false, err: refused() });
    expect(await r.state()).toEqual({ ok: 0, failing: 1, rate_limited: 0 });
    await r.send('POST', '/channels/99/messages', { ok: true });
    expect(r.told()).toHaveLength(1);
    await r.send('PATCH', '/channels/5/messages/6', { ok: true });

    const told = r.told();
    expect(told).toHaveLength(2);
    expect(told[0]).toMatchObject({
      level: LEVEL.warn,
      discordRest: 'failing',
      route: 'POST /channels/:id/messages',
      failure: '500',
    });
    expect(told[1]).toMatchObject({
      level: LEVEL.info,
      discordRest: 'ok',
      was: 'failing',
      failedRequests: 21,
    });
    expect(r.changes).toEqual([
      { failing: true, rateLimited: false },
      { failing: false, rateLimited: false },
    ]);
    expect(await r.state()).toEqual({ ok: 1, failing: 0, rate_limited: 0 });
  });

  it('a 4xx is Discord answering, not failing; a route not asked again is let go after FORGET_MS', async () => {
    const r = rig();
    await r.send('DELETE', '/channels/1/messages/2', { ok: false, err: unknownMessage() });
    expect(r.told()).toEqual([]);
    await r.send('GET', '/gateway/bot', { ok: false, err: refused() });
    expect(r.told()[0]).toMatchObject({ failure: 'unreachable: ECONNREFUSED', route: 'GET /gateway/bot' });
    await vi.advanceTimersByTimeAsync(FORGET_MS + 10);
    expect(r.told()).toHaveLength(2);
    expect(r.told()[1]).toMatchObject({ discordRest: 'ok', was: 'failing' });
  });

  it('rate-limited: a global hold of 3 s told once with its length, extended by later 429s, over after it', async () => {
    const r = rig();
    const attempt = r.health.attempts(
      limited({ 'retry-after': '3', 'x-ratelimit-global': 'true', 'x-ratelimit-scope': 'global' }),
    );
    await attempt('http://127.0.0.1/api/v10/channels/1/messages', { method: 'POST' });
    await vi.advanceTimersByTimeAsync(1_000);
    await attempt('http://127.0.0.1/api/v10/channels/2/messages', { method: 'POST' });
    expect(await r.state()).toEqual({ ok: 0, failing: 0, rate_limited: 1 });
    await vi.advanceTimersByTimeAsync(3_000 + GRACE_MS - 10);
    expect(r.told()).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(20);
    const [held, over] = r.told();
    expect(held).toMatchObject({
      level: LEVEL.warn,
      discordRest: 'rate-limited',
      scope: 'global',
      retryAfterMs: 3_000,
    });
    expect(held?.msg).toContain('global hold of 3.0 s');
    expect(over).toMatchObject({ level: LEVEL.info, was: 'rate-limited', lastedMs: 4_000 });
    expect(await r.state()).toEqual({ ok: 1, failing: 0, rate_limited: 0 });
  });

  it('short holds are not told: a global one under 1 s, a route one under 10 s; a long route hold is', async () => {
    const r = rig();
    await r.health.attempts(limited({ 'retry-after': '0.3', 'x-ratelimit-global': 'true' }))(
      'http://h/api/v10/users/@me',
      {},
    );
    await r.health.attempts(limited({ 'retry-after': '5', 'x-ratelimit-scope': 'user' }))(
      'http://h/api/v10/channels/1',
      {
        method: 'PATCH',
      },
    );
    expect(r.told()).toEqual([]);
    await r.health.attempts(limited({ 'retry-after': '30', 'x-ratelimit-scope': 'shared' }))(
      'http://h/api/v10/channels/1',
      {
        method: 'PATCH',
      },
    );
    expect(r.told()).toEqual([
      expect.objectContaining({ scope: 'shared', route: 'PATCH /channels/:id', retryAfterMs: 30_000 }),
    ]);
  });

  it('names routes without ids or tokens', () => {
    const token = 'aW50ZXJhY3Rpb246MTIzNDU2Nzg5MDpzZWNyZXQ';
    expect(routeOf('patch', `/webhooks/123456789012345678/${token}/messages/@original`)).toBe(
      'PATCH /webhooks/:id/:token/messages/@original',
    );
    expect(routeOf('POST', `/interactions/123456789012345678/${token}/callback`)).toBe(
      'POST /interactions/:id/:token/callback',
    );
    expect(routeOf('PUT', '/guilds/1/members/2/roles/3')).toBe('PUT /guilds/:id/members/:id/roles/:id');
    expect(routeOf('GET', `/odd/${token}?with=query`)).toBe('GET /odd/:x');
  });
});
