/**
 * The bounds both HTTP listeners share (src/http/listener.ts), on the real operations endpoint and
 * webhook receiver on 127.0.0.1: a socket that drips its head or its body is cut within about 12 s
 * (Node's own check every 30 s let one live 30 s and more), connections past the cap are closed
 * straight away and the endpoint answers again once they go, a keep-alive socket serves a bounded
 * number of requests, and the operations endpoint is local unless HTTP_HOST says otherwise.
 */
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { startWebhookReceiver } from '../../src/features/webhooks/receiver.js';
import { MAX_CONNECTIONS, MAX_REQUESTS_PER_SOCKET } from '../../src/http/listener.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { startOpsServer } from '../../src/ops/server.js';
import { httpGet } from '../support/http.js';
import { LOCALHOST } from '../support/local.js';
import { captureLogger, LEVEL } from '../support/logs.js';

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

async function startReceiver(): Promise<number> {
  const { logger } = captureLogger();
  const receiver = await startWebhookReceiver({
    port: 0,
    host: LOCALHOST,
    logger,
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

/** A socket to 127.0.0.1:port, connected, with what the server sends and when it closes. */
function open(port: number): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, LOCALHOST);
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

  it('close connections past the cap straight away, and answer again once they go', async () => {
    const ops = await startOps();
    // Idle connections, as a client that opens many and sends nothing holds them.
    const held = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, () => open(ops.port)));
    try {
      const extra = await open(ops.port);
      extra.socket.write(`GET /healthz HTTP/1.1\r\nHost: ${LOCALHOST}\r\n\r\n`);
      await extra.closed;
      expect(extra.received()).toBe('');
      await expect(httpGet(ops.port, '/healthz')).rejects.toThrow();
    } finally {
      for (const { socket } of held) socket.destroy();
    }
    await Promise.all(held.map(({ closed }) => closed));
    let answer: number | undefined;
    const until = Date.now() + 5_000;
    while (answer === undefined && Date.now() < until) {
      answer = await httpGet(ops.port, '/healthz').then(
        (res) => res.status,
        () => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 50)),
      );
    }
    expect(answer).toBe(200);
    // One line says so, not one per refused connection.
    const refusals = ops.lines.filter((line) => line.level === LEVEL.warn && /refused/.test(line.msg ?? ''));
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ maxConnections: MAX_CONNECTIONS });
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
