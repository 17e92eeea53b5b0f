/**
 * The bounds both HTTP listeners share (src/http/listener.ts), on the real operations endpoint and
 * webhook receiver on 127.0.0.1: a socket that drips its head or its body is cut within about 12 s
 * (Node's own check every 30 s let one live 30 s and more), one address holds at most its share
 * of connections, at the cap the oldest idle connection makes room so a newcomer is answered (a
 * trusted proxy's connections left to the proxy), a keep-alive socket serves a bounded number of
 * requests, and the operations endpoint is local unless HTTP_HOST says otherwise.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { startWebhookReceiver } from '../../src/features/webhooks/receiver.js';
import type { TrustProxy } from '../../src/http/client-address.js';
import { MAX_CONNECTIONS_PER_SOURCE, MAX_REQUESTS_PER_SOCKET } from '../../src/http/listener.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { startOpsServer } from '../../src/ops/server.js';
import { LOCALHOST } from '../support/local.js';
import { captureLogger, LEVEL } from '../support/logs.js';
import { eventually } from '../support/wait.js';

const GUILD = '722424773233213460';
const KEY = 'hk_listener-unit-key';
/** What a slow socket may live at most: about 12 s, and a busy machine's margin. */
const SLOW_SOCKET_BOUND_MS = 15_000;
/** A socket never cut is given up on then (Node's default check, every 30 s, comes later). */
const GIVE_UP_MS = 25_000;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function startOps() {
  const { logger, lines } = captureLogger();
  const server = await startOpsServer({
    port: 0,
    host: LOCALHOST,
    metrics: createMetrics({ defaultMetrics: false }),
    isReady: () => true,
    logger,
  });
  cleanups.push(() => server.close());
  return { port: server.port, lines };
}

async function startReceiver(trustProxy?: TrustProxy): Promise<number> {
  const { logger } = captureLogger();
  const receiver = await startWebhookReceiver({
    port: 0,
    host: LOCALHOST,
    logger,
    ...(trustProxy ? { trustProxy } : {}),
    rateLimit: { max: 100, windowMs: 60_000 },
    webhooks: {
      loadKeys: async () => undefined,
      knows: (_guildId, key) => (key === KEY ? 'ok' : 'wrong'),
      check: async (_guildId, key) =>
        key === KEY
          ? {
              kind: 'ok',
              setup: { guildId: GUILD, channelId: '1', problem: null, lastEventAt: null, updatedAt: 0 },
            }
          : { kind: 'wrong' },
      enqueue: async () => 'stored',
    },
  });
  cleanups.push(() => receiver.close());
  return receiver.port;
}

/**
 * A socket to 127.0.0.1:port (from `from`, another address of the loopback, to stand for another
 * client), connected, with what the server sends and when it closes.
 */
function open(
  port: number,
  from?: string,
): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: LOCALHOST, ...(from ? { localAddress: from } : {}) });
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    // A reset or a write after the server's end: the close that follows is what counts.
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => {});
      resolve({ socket, received: () => data, closed });
    });
    socket.once('error', reject);
  });
}

/**
 * Writes `head`, then `drip` every 500 ms until the server closes the socket; how long it lived
 * (GIVE_UP_MS when the server never closed it) and what the server answered.
 */
async function slowClient(
  port: number,
  head: string,
  drip: string,
): Promise<{ livedMs: number; answer: string }> {
  const { socket, received, closed } = await open(port);
  const started = performance.now();
  socket.write(head);
  const dripping = setInterval(() => {
    if (!socket.destroyed) socket.write(drip);
  }, 500);
  let giveUp: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<'gave up'>((done) => {
    giveUp = setTimeout(() => done('gave up'), GIVE_UP_MS);
  });
  const outcome = await Promise.race([closed, gaveUp]);
  clearInterval(dripping);
  clearTimeout(giveUp);
  socket.destroy();
  return { livedMs: outcome === 'gave up' ? GIVE_UP_MS : performance.now() - started, answer: received() };
}

/** A GET of the operations endpoint's liveness. */
const healthz = `GET /healthz HTTP/1.1\r\nHost: ${LOCALHOST}\r\nConnection: close\r\n\r\n`;
/** A valid delivery: the directory's test event, with the server's key. */
const TEST_EVENT = '{"type":"test_webhook_message","data":{}}';
const delivery =
  `POST /hooks/directory/${GUILD} HTTP/1.1\r\nHost: ${LOCALHOST}\r\nConnection: close\r\n` +
  `X-Hook-Key: ${KEY}\r\nContent-Type: application/json\r\nContent-Length: ${TEST_EVENT.length}\r\n\r\n${TEST_EVENT}`;

/** Sends one whole request from `from` and resolves with what came back once the server closed. */
async function ask(port: number, request: string, from: string): Promise<string> {
  const { socket, received, closed } = await open(port, from);
  socket.write(request);
  await closed;
  return received();
}

const slowHead = (path: string) => `GET ${path} HTTP/1.1\r\nHost: ${LOCALHOST}\r\n`;
const slowBody = (path: string, headers = '') =>
  `POST ${path} HTTP/1.1\r\nHost: ${LOCALHOST}\r\n${headers}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`;

describe('the HTTP listeners', () => {
  it(
    'cut a socket that drips its head or its body within about 12 s, on both listeners',
    async () => {
      const ops = await startOps();
      const hooks = await startReceiver();
      const hookPath = `/hooks/directory/${GUILD}`;
      const [opsHead, opsBody, hookHead, hookBody] = await Promise.all([
        slowClient(ops.port, slowHead('/healthz'), 'X-Slow: 1\r\n'),
        slowClient(ops.port, slowBody('/healthz'), ' '),
        slowClient(hooks, slowHead(hookPath), 'X-Slow: 1\r\n'),
        // A valid key: the receiver reads the body.
        slowClient(hooks, slowBody(hookPath, `X-Hook-Key: ${KEY}\r\n`), ' '),
      ]);
      for (const [what, slow] of Object.entries({ opsHead, opsBody, hookHead, hookBody })) {
        // Cut by the bounds (10 s for the head, 11 s for the whole request), not sooner.
        expect(slow.livedMs, what).toBeGreaterThanOrEqual(9_500);
        expect(slow.livedMs, what).toBeLessThan(SLOW_SOCKET_BOUND_MS);
      }
      expect(opsHead.answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(hookHead.answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(hookBody.answer).toMatch(/^HTTP\/1\.1 408 /);
    },
    GIVE_UP_MS + 10_000,
  );

  it('hold one address to its share, and answer another within 2 s, on both listeners', async () => {
    const ops = await startOps();
    const hooks = await startReceiver();
    for (const [port, request] of [
      [ops.port, healthz],
      [hooks, delivery],
    ] as const) {
      // 500 idle connections from one address, as a client that opens many and sends nothing.
      const flood = await Promise.all(Array.from({ length: 500 }, () => open(port)));
      try {
        await eventually(
          () =>
            flood.filter((c) => c.socket.destroyed).length >= 500 - MAX_CONNECTIONS_PER_SOURCE
              ? true
              : undefined,
          5_000,
          'the connections past its share closed',
        );
        const started = performance.now();
        expect(await ask(port, request, '127.0.0.2')).toMatch(/^HTTP\/1\.1 200 /);
        expect(performance.now() - started).toBeLessThan(2_000);
        expect(flood.filter((c) => !c.socket.destroyed)).toHaveLength(MAX_CONNECTIONS_PER_SOURCE);
      } finally {
        for (const { socket } of flood) socket.destroy();
      }
    }
    // Its own idle connections closed past its share is no news (a keep-alive pool larger than
    // the share does the same): no warning.
    expect(ops.lines.filter((line) => line.level === LEVEL.warn)).toEqual([]);
  });

  it('make room at the cap by closing the oldest idle connection, and answer a newcomer within 2 s', async () => {
    const ops = await startOps();
    const hooks = await startReceiver();
    for (const [port, request] of [
      [ops.port, healthz],
      [hooks, delivery],
    ] as const) {
      // 600 idle connections from 60 addresses, 10 each: past the cap of 512 in all.
      const flood: Array<Awaited<ReturnType<typeof open>>> = [];
      try {
        for (let i = 0; i < 60; i++) {
          flood.push(
            ...(await Promise.all(Array.from({ length: 10 }, () => open(port, `127.0.0.${10 + i}`)))),
          );
        }
        const started = performance.now();
        expect(await ask(port, request, '127.0.0.3')).toMatch(/^HTTP\/1\.1 200 /);
        expect(performance.now() - started).toBeLessThan(2_000);
        // The oldest went first: the first ones opened are closed, the last ones are open.
        await eventually(
          () => (flood.slice(0, 80).every((c) => c.socket.destroyed) ? true : undefined),
          5_000,
          'the oldest connections closed',
        );
        expect(flood.slice(-400).every((c) => !c.socket.destroyed)).toBe(true);
      } finally {
        for (const { socket } of flood) socket.destroy();
      }
    }
    const lines = ops.lines.filter(
      (line) => line.level === LEVEL.warn && /connection cap/.test(line.msg ?? ''),
    );
    expect(lines).toHaveLength(1);
    expect((lines[0] as { closedForRoom?: number }).closedForRoom).toBeGreaterThan(0);
  });

  it('leave the bound per client to a trusted proxy: 500 of its connections kept, and one more answered', async () => {
    // Behind the operator's proxy (TRUST_PROXY=1) every connection comes from the proxy.
    const hooks = await startReceiver({ hops: 1 });
    const flood = await Promise.all(Array.from({ length: 500 }, () => open(hooks)));
    try {
      expect(await ask(hooks, delivery, LOCALHOST)).toMatch(/^HTTP\/1\.1 200 /);
      expect(flood.filter((c) => c.socket.destroyed)).toEqual([]);
    } finally {
      for (const { socket } of flood) socket.destroy();
    }
  });

  it('serve a bounded number of requests on one keep-alive socket, then only 503', async () => {
    const ops = await startOps();
    const { socket, received } = await open(ops.port);
    const one = `GET /healthz HTTP/1.1\r\nHost: ${LOCALHOST}\r\n\r\n`;
    socket.write(one.repeat(MAX_REQUESTS_PER_SOCKET + 3));
    const statuses = () => received().match(/^HTTP\/1\.1 \d{3}/gm) ?? [];
    const until = Date.now() + 10_000;
    while (statuses().length < MAX_REQUESTS_PER_SOCKET + 3 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    socket.destroy();
    const answers = received().split(/(?=^HTTP\/1\.1 )/m);
    expect(answers.map((answer) => answer.slice(0, 12))).toEqual([
      ...Array<string>(MAX_REQUESTS_PER_SOCKET).fill('HTTP/1.1 200'),
      ...Array<string>(3).fill('HTTP/1.1 503'),
    ]);
    // The last one served tells the client to go.
    expect(answers[MAX_REQUESTS_PER_SOCKET - 1]).toMatch(/^Connection: close\r$/m);
    expect(answers[MAX_REQUESTS_PER_SOCKET - 2]).toMatch(/^Connection: keep-alive\r$/m);
  });
});

describe('the operations endpoint', () => {
  it('listens on 127.0.0.1 unless HTTP_HOST says otherwise', async () => {
    expect(loadConfig({ HTTP_PORT: '0' }).httpHost).toBe('127.0.0.1');
    expect(loadConfig({ HTTP_PORT: '0', HTTP_HOST: '0.0.0.0' }).httpHost).toBe('0.0.0.0');
    const { logger, lines } = captureLogger();
    const server = await startOpsServer({
      port: 0,
      metrics: createMetrics({ defaultMetrics: false }),
      isReady: () => true,
      logger,
    });
    cleanups.push(() => server.close());
    expect(lines.find((line) => line.msg === 'ops server listening')).toMatchObject({
      address: '127.0.0.1',
      port: server.port,
    });
  });
});
