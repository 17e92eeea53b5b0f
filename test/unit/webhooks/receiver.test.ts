/**
 * The webhook receiver's limits on loopback, against a store stand-in: refusals count against their
 * source address and are cut off there without the store, deliveries with the right key count
 * against their server only (so a flood of wrong keys from the same address, a proxy's, never
 * holds them back), TRUST_PROXY takes the client's address from X-Forwarded-For as the trusted
 * proxy wrote it, an unknown server and a wrong key are answered alike, a store that is down is
 * answered 503 so the directory may try again, and the key never reaches a log line.
 */
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type DeliveryOutcome,
  STATUS,
  startWebhookReceiver,
  type WebhookReceiver,
  WindowLimiter,
} from '../../../src/features/webhooks/receiver.js';
import { parseTrustProxy, type TrustProxy } from '../../../src/http/client-address.js';
import { createLogger } from '../../../src/log/logger.js';
import { StoreUnavailableError } from '../../../src/store/index.js';

const GUILD = '722424773233213460';
const OTHER = '722424773233213999';
const KEY = 'hk_receiver-unit-key';

describe('the webhook receiver', () => {
  let receiver: WebhookReceiver | undefined;
  afterEach(async () => {
    await receiver?.close();
    receiver = undefined;
  });

  async function start(
    options: {
      enqueueFails?: boolean;
      /** What the store answers an event (default 'stored'). */
      enqueued?: 'stored' | 'full';
      limit?: { max: number; windowMs: number };
      trustProxy?: TrustProxy;
    } = {},
  ) {
    const lines: string[] = [];
    const calls = { check: 0, enqueue: 0 };
    const outcomes: DeliveryOutcome[] = [];
    const configured = new Set([GUILD, OTHER]);
    const logger = createLogger({
      level: 'debug',
      destination: { write: (line: string) => lines.push(line) },
    });
    receiver = await startWebhookReceiver({
      port: 0,
      host: '127.0.0.1',
      logger,
      rateLimit: options.limit ?? { max: 3, windowMs: 60_000 },
      trustProxy: options.trustProxy,
      onDelivery: (outcome) => outcomes.push(outcome),
      webhooks: {
        async loadKeys() {},
        knows: (guildId, key) => (configured.has(guildId) ? (key === KEY ? 'ok' : 'wrong') : 'unknown'),
        async check(guildId, key) {
          calls.check += 1;
          if (!configured.has(guildId)) return { kind: 'unknown' };
          return key === KEY
            ? {
                kind: 'ok',
                setup: { guildId: GUILD, channelId: '1', problem: null, lastEventAt: null, updatedAt: 0 },
              }
            : { kind: 'wrong' };
        },
        async enqueue() {
          calls.enqueue += 1;
          if (options.enqueueFails)
            throw new StoreUnavailableError('The database is unavailable: connection refused');
          return options.enqueued ?? 'stored';
        },
      },
    });
    const deliver = async (guildId: string, key = KEY, forwardedFor?: string) => {
      const res = await request(`http://127.0.0.1:${receiver!.port}/hooks/directory/${guildId}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'x-hook-key': key,
          ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
        },
        body: JSON.stringify({ type: 'test_webhook_message', data: { hello: true, world: true } }),
      });
      await res.body.dump();
      return { status: res.statusCode, retryAfter: res.headers['retry-after'], headers: res.headers };
    };
    return { deliver, calls, lines, outcomes };
  }

  it('cuts wrong keys off per source without the store, and takes the right key per server, whatever its source', async () => {
    const { deliver, calls } = await start();
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await deliver(GUILD, `guess-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    // The key is checked in memory; the store was asked once, for the mismatch (then not for 5 s).
    expect(calls.check).toBe(1);
    const limited = await deliver(OTHER, 'guess');
    expect(limited.status).toBe(429);
    expect(Number(limited.retryAfter)).toBeGreaterThan(0);
    expect(Number(limited.retryAfter)).toBeLessThanOrEqual(60);
    // The same address with the right key: its server's own limit, not the source's.
    const right = [];
    for (let i = 0; i < 4; i++) right.push((await deliver(GUILD)).status);
    expect(right).toEqual([200, 200, 200, 429]);
    expect(calls.enqueue).toBe(3);
    expect((await deliver(OTHER)).status).toBe(200);
  });

  it('answers a server with no webhook and a wrong key alike', async () => {
    const { deliver } = await start({ limit: { max: 100, windowMs: 60_000 } });
    const unknown = await deliver('722424773233213111', 'guess');
    const wrong = await deliver(GUILD, 'guess');
    const missing = await deliver(GUILD, '');
    const shape = (a: typeof wrong) => ({
      status: a.status,
      length: a.headers['content-length'],
      cache: a.headers['cache-control'],
      retryAfter: a.retryAfter,
    });
    expect(shape(unknown)).toEqual(shape(wrong));
    expect(shape(missing)).toEqual(shape(wrong));
    expect(wrong.status).toBe(401);
  });

  it('with TRUST_PROXY, charges refusals to the address the proxy names, not to what the client wrote', async () => {
    const trustProxy = parseTrustProxy('1');
    if (typeof trustProxy === 'string') throw new Error(trustProxy);
    const { deliver } = await start({ trustProxy });
    // Behind one proxy, which appends the address it saw: the attacker's own header is ignored.
    const flood = [];
    for (let i = 0; i < 5; i++)
      flood.push((await deliver(GUILD, 'guess', `10.0.0.${i}, 203.0.113.7`)).status);
    expect(flood).toEqual([401, 401, 401, 429, 429]);
    expect((await deliver(GUILD, 'guess', '203.0.113.8')).status).toBe(401);
    // Without TRUST_PROXY every delivery is the proxy's (here the socket's, 127.0.0.1).
    await receiver?.close();
    const plain = await start();
    for (let i = 0; i < 3; i++) await plain.deliver(GUILD, 'guess', `203.0.113.${i}`);
    expect((await plain.deliver(GUILD, 'guess', '203.0.113.9')).status).toBe(429);
  });

  it('a full limiter table refuses a new source rather than forget one whose window is open', () => {
    const limiter = new WindowLimiter({ max: 2, windowMs: 10_000 }, 2);
    expect([limiter.take('a', 0), limiter.take('b', 1_000), limiter.take('a', 2_000)]).toEqual([0, 0, 0]);
    // Full of open windows: 'c' waits until the oldest closes; 'a' keeps its count (one left: no).
    expect(limiter.take('c', 3_000)).toBe(7);
    expect(limiter.take('a', 3_000)).toBe(7);
    // Once 'a''s window is over, it is dropped to make room.
    expect(limiter.take('c', 10_000)).toBe(0);
    expect(limiter.take('b', 10_500)).toBe(0);
    expect(limiter.take('b', 10_600)).toBe(1);
  });

  it('answers 503 when the store cannot keep the event, so the directory may deliver it again', async () => {
    const { deliver, calls, lines } = await start({
      enqueueFails: true,
      limit: { max: 100, windowMs: 60_000 },
    });
    expect(await deliver(GUILD)).toMatchObject({ status: 503, retryAfter: '5' });
    expect(calls.enqueue).toBe(1);
    expect(lines.filter((l) => l.includes('could not be stored'))).toHaveLength(1);
    // A store that is down fails every delivery: one line for them, not one each.
    for (let i = 0; i < 5; i++) expect((await deliver(GUILD)).status).toBe(503);
    expect(calls.enqueue).toBe(6);
    expect(lines.filter((l) => l.includes('could not be stored'))).toHaveLength(1);
    expect(lines.join('\n')).not.toContain(KEY);
    expect(lines.join('\n')).not.toContain('guess');
  });

  it('counts an IPv6 source by its /64: one subscriber does not get a fresh limit per address', async () => {
    const trustProxy = parseTrustProxy('1');
    if (typeof trustProxy === 'string') throw new Error(trustProxy);
    const { deliver } = await start({ trustProxy });
    const flood = [];
    for (let i = 1; i <= 5; i++) flood.push((await deliver(GUILD, 'guess', `2001:db8:1:2::${i}`)).status);
    expect(flood).toEqual([401, 401, 401, 429, 429]);
    // Another /64 has its own limit; an IPv4 address is still limited alone.
    expect((await deliver(GUILD, 'guess', '2001:db8:1:3::1')).status).toBe(401);
    expect((await deliver(GUILD, 'guess', '203.0.113.7')).status).toBe(401);
  });

  it('tells a flood of refusals apart from one server over its limits in the metrics', async () => {
    const { deliver, outcomes } = await start();
    for (let i = 0; i < 4; i++) await deliver(GUILD, `guess-${i}`);
    expect(outcomes).toEqual(['bad-key', 'bad-key', 'bad-key', 'limited']);
    outcomes.length = 0;
    for (let i = 0; i < 4; i++) await deliver(OTHER);
    expect(outcomes).toEqual(['stored', 'stored', 'stored', 'server-limited']);
    await receiver?.close();
    const full = await start({ enqueued: 'full' });
    expect((await full.deliver(GUILD)).status).toBe(429);
    expect(full.outcomes).toEqual(['server-full']);
  });

  it('says a body that never arrived whole did not arrive, not that the store failed', async () => {
    const { calls, lines, outcomes } = await start();
    const socket = connect(receiver!.port, '127.0.0.1');
    socket.on('error', () => {});
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      `POST /hooks/directory/${GUILD} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Hook-Key: ${KEY}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"type":',
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    // The client goes away mid-body (a body dripped past its deadline ends the same way, the
    // listener having answered 408: test/unit/listener.test.ts).
    socket.destroy();
    const until = Date.now() + 5_000;
    while (outcomes.length === 0 && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(outcomes).toEqual(['incomplete']);
    expect(calls.enqueue).toBe(0);
    expect(lines.some((l) => l.includes('could not be stored'))).toBe(false);
    const line = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'webhook delivery');
    expect(line).toMatchObject({ outcome: 'incomplete', status: 408 });
  });

  it("lists every delivery outcome, with its answer, in the operator's docs", () => {
    const docs = readFileSync(new URL('../../../docs/webhooks.md', import.meta.url), 'utf8');
    const documented = [...docs.matchAll(/^\| `([a-z-]+)` \| (\d{3}) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(Object.fromEntries(documented)).toEqual(STATUS);
  });
});
