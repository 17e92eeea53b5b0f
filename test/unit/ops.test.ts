import { Agent } from 'node:http';
import { connect, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { Gauge, register as globalRegistry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/directory/rate-limiter.js';
import { parsePort, probe, runHealthcheck } from '../../src/ops/health-probe.js';
import { createMetrics, type DiscordState, type Metrics } from '../../src/ops/metrics.js';
import { type OpsServer, type Readiness, startOpsServer } from '../../src/ops/server.js';
import { httpGet } from '../support/http.js';
import { captureLogger, type LogEntry } from '../support/logs.js';

/** Sends raw bytes and collects everything until the server closes the socket. */
function raw(port: number, data: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(data));
    let out = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      out += chunk;
    });
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

async function start(
  isReady: () => Readiness = () => true,
  extra: { metrics?: Metrics; closeGraceMs?: number } = {},
): Promise<{ server: OpsServer; metrics: Metrics; lines: LogEntry[] }> {
  const { logger, lines } = captureLogger();
  const metrics = extra.metrics ?? createMetrics({ defaultMetrics: false });
  const server = await startOpsServer({
    port: 0,
    host: '127.0.0.1',
    metrics,
    isReady,
    logger,
    ...(extra.closeGraceMs === undefined ? {} : { closeGraceMs: extra.closeGraceMs }),
  });
  cleanups.push(() => server.close());
  return { server, metrics, lines };
}

/** The value of one sample in the registry, or undefined when the series is absent. */
async function sample(
  metrics: Metrics,
  name: string,
  labels: Record<string, string> = {},
  metricName = name,
): Promise<number | undefined> {
  const base = name.replace(/_(bucket|sum|count)$/, '');
  const metric = metrics.registry.getSingleMetric(base);
  if (!metric) throw new Error(`no metric ${base}`);
  const { values } = await metric.get();
  const found = values.find(
    (v) =>
      ('metricName' in v && typeof v.metricName === 'string' ? v.metricName : base) === metricName &&
      Object.entries(labels).every(([k, value]) => String(v.labels[k]) === value) &&
      Object.keys(v.labels).filter((k) => k !== 'le').length === Object.keys(labels).length,
  );
  return found?.value;
}

function feed(metrics: Metrics): void {
  metrics.interaction({ kind: 'command', name: 'bot', outcome: 'ok', durationMs: 420 });
  metrics.directoryRequest({
    method: 'getBot',
    route: 'GET /bot/{ref}',
    status: 200,
    durationMs: 120,
    attempts: 1,
  });
  metrics.rateLimitGrant({ waitedMs: 1500, priority: 'background', buckets: ['global', 'server'] });
  metrics.statsPost('sent', { at: 1_700_000_000_000 });
  metrics.serverReport({ guildId: '722424773233213460', outcome: 'sent' });
  metrics.setDiscordSource(() => ({
    guilds: 12,
    shards: [
      { id: 0, ready: true, ping: 45 },
      { id: 1, ready: false, ping: -1 },
    ],
  }));
}

describe('ops server', () => {
  it('answers /healthz with 200 ok and logs its address once', async () => {
    const { server, lines } = await start();
    expect(server.port).toBeGreaterThan(0);
    const res = await httpGet(server.port, '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toBe('ok\n');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['cache-control']).toBe('no-store');
    const started = lines.filter((l) => l.msg === 'ops server listening');
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ level: 30, address: '127.0.0.1', port: server.port });
  });

  it('ignores the query string', async () => {
    const { server } = await start();
    expect((await httpGet(server.port, '/healthz?probe=1')).status).toBe(200);
  });

  it('answers HEAD like GET without a body', async () => {
    const { server } = await start();
    const res = await httpGet(server.port, '/healthz', { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.body).toBe('');
    expect(res.headers['content-length']).toBe('3');
    const metrics = await httpGet(server.port, '/metrics', { method: 'HEAD' });
    expect(metrics.status).toBe(200);
    expect(metrics.body).toBe('');
  });

  it('follows isReady: 200, then 503 with the detail, then 200 again', async () => {
    let state: Readiness = true;
    const { server } = await start(() => state);
    const first = await httpGet(server.port, '/readyz');
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(JSON.parse(first.body)).toEqual({ ready: true });

    state = { ready: false, detail: { notReadyShards: [1, 3] } };
    const second = await httpGet(server.port, '/readyz');
    expect(second.status).toBe(503);
    expect(JSON.parse(second.body)).toEqual({ ready: false, detail: { notReadyShards: [1, 3] } });

    state = { ready: true, detail: { shards: 4 } };
    const third = await httpGet(server.port, '/readyz');
    expect(third.status).toBe(200);
    expect(JSON.parse(third.body)).toEqual({ ready: true, detail: { shards: 4 } });

    state = false;
    expect((await httpGet(server.port, '/readyz')).status).toBe(503);
    expect((await httpGet(server.port, '/readyz', { method: 'HEAD' })).status).toBe(503);
  });

  it('reads a throwing readiness check as not ready and logs it at error', async () => {
    const { server, lines } = await start(() => {
      throw new Error('gateway state unreadable');
    });
    const res = await httpGet(server.port, '/readyz');
    expect(res.status).toBe(503);
    expect(JSON.parse(res.body)).toEqual({ ready: false, detail: 'readiness check failed' });
    expect(lines.find((l) => l.msg === 'readiness check failed')).toMatchObject({ level: 50 });
  });

  it('still answers when the detail cannot be serialized', async () => {
    const detail: Record<string, unknown> = { big: 1n };
    const { server } = await start(() => ({ ready: false, detail }));
    const res = await httpGet(server.port, '/readyz');
    expect(res.status).toBe(503);
    expect(JSON.parse(res.body)).toMatchObject({ ready: false });
  });

  it('serves every metric, with labels, in the Prometheus format', async () => {
    const metrics = createMetrics();
    cleanups.push(() => metrics.registry.clear());
    feed(metrics);
    const { server } = await start(() => true, { metrics });
    const res = await httpGet(server.port, '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(metrics.registry.contentType);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const expected = [
      'bot_interactions_total{kind="command",name="bot",outcome="ok"} 1',
      'bot_interaction_duration_seconds_count{kind="command",name="bot"} 1',
      'directory_requests_total{method="getBot",route="GET /bot/{ref}",status="200"} 1',
      'directory_request_duration_seconds_count{method="getBot",route="GET /bot/{ref}"} 1',
      'directory_ratelimit_wait_seconds_count{priority="background",bucket="server"} 1',
      'directory_stats_posts_total{outcome="sent"} 1',
      'directory_stats_last_success_timestamp_seconds 1700000000',
      'directory_server_reports_total{outcome="sent"} 1',
      'discord_guilds 12',
      'discord_shards{status="ready"} 1',
      'discord_shards{status="not_ready"} 1',
      'discord_gateway_ping_seconds{shard="0"} 0.045',
    ];
    for (const line of expected) expect(res.body).toContain(line);
    // Unknown ping (discord.js reports -1) is left out rather than shown as a number.
    expect(res.body).not.toContain('discord_gateway_ping_seconds{shard="1"}');
    // Default process metrics.
    expect(res.body).toContain('process_cpu_user_seconds_total');
    expect(res.body).toContain('nodejs_eventloop_lag_seconds');
  });

  it('answers 404 for other paths and 405 for other methods', async () => {
    const { server } = await start();
    for (const path of ['/', '/nope', '/healthz/', '/metricsx', '/HEALTHZ']) {
      const res = await httpGet(server.port, path);
      expect(res.status, path).toBe(404);
    }
    for (const method of ['POST', 'PUT', 'DELETE', 'OPTIONS']) {
      const res = await httpGet(server.port, '/metrics', { method });
      expect(res.status, method).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
    }
    expect((await httpGet(server.port, '/nope', { method: 'POST' })).status).toBe(404);
  });

  it('answers a malformed request with 400 and keeps serving', async () => {
    const { server } = await start();
    const answer = await raw(server.port, 'THIS IS NOT HTTP\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    const reset = connect(server.port, '127.0.0.1');
    await new Promise<void>((resolve) => reset.on('connect', () => resolve()));
    reset.resetAndDestroy();
    expect((await httpGet(server.port, '/healthz')).status).toBe(200);
  });

  it('answers 500 and logs at error when collecting metrics fails', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    new Gauge({
      name: 'broken_gauge',
      help: 'throws on collect',
      registers: [metrics.registry],
      collect() {
        throw new Error('collector broke');
      },
    });
    const { server, lines } = await start(() => true, { metrics });
    const res = await httpGet(server.port, '/metrics');
    expect(res.status).toBe(500);
    expect(lines.find((l) => l.msg === 'metrics collection failed')).toMatchObject({ level: 50 });
    expect((await httpGet(server.port, '/healthz')).status).toBe(200);
  });

  it('close() closes an idle keep-alive connection at once', async () => {
    const { server } = await start(() => true, { closeGraceMs: 10_000 });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(() => agent.destroy());
    expect((await httpGet(server.port, '/healthz', { agent })).status).toBe(200);
    // The socket is kept for the next request.
    const sockets = Object.values(agent.freeSockets).flat();
    expect(sockets).toHaveLength(1);
    const socket = sockets[0]!;
    const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));

    const started = Date.now();
    await server.close();
    await socketClosed;
    expect(Date.now() - started).toBeLessThan(2_000);
    await server.close(); // idempotent
    await expect(httpGet(server.port, '/healthz')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('close() cuts a request still in progress after the grace period', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    new Gauge({
      name: 'never_answers',
      help: 'a collect that never ends',
      registers: [metrics.registry],
      collect: () => new Promise<void>(() => undefined),
    });
    const { server } = await start(() => true, { metrics, closeGraceMs: 50 });
    const pending = httpGet(server.port, '/metrics').catch((err: unknown) => err);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await server.close();
    expect(await pending).toMatchObject({ code: 'ECONNRESET' });
  });

  it('rejects when the port is taken', async () => {
    const { server } = await start();
    const { logger } = captureLogger();
    await expect(
      startOpsServer({
        port: server.port,
        host: '127.0.0.1',
        metrics: createMetrics({ defaultMetrics: false }),
        isReady: () => true,
        logger,
      }),
    ).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});

describe('metrics', () => {
  it('counts each event once, by its labels', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const { interaction } = metrics; // adapters work detached, as hooks
    interaction({ kind: 'command', name: 'up', outcome: 'ok', durationMs: 100 });
    expect(
      await sample(metrics, 'bot_interactions_total', { kind: 'command', name: 'up', outcome: 'ok' }),
    ).toBe(1);
    interaction({ kind: 'command', name: 'up', outcome: 'ok', durationMs: 300 });
    interaction({ kind: 'button', name: 'comments-page', outcome: 'error:NotFound', durationMs: 50 });
    expect(
      await sample(metrics, 'bot_interactions_total', { kind: 'command', name: 'up', outcome: 'ok' }),
    ).toBe(2);
    expect(
      await sample(metrics, 'bot_interactions_total', {
        kind: 'button',
        name: 'comments-page',
        outcome: 'error:NotFound',
      }),
    ).toBe(1);
    const labels = { kind: 'command', name: 'up' };
    expect(
      await sample(
        metrics,
        'bot_interaction_duration_seconds',
        labels,
        'bot_interaction_duration_seconds_count',
      ),
    ).toBe(2);
    expect(
      await sample(
        metrics,
        'bot_interaction_duration_seconds',
        labels,
        'bot_interaction_duration_seconds_sum',
      ),
    ).toBeCloseTo(0.4);
  });

  it('labels directory requests by method, route and status, error codes included', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const { directoryRequest } = metrics;
    const route = 'POST /server';
    directoryRequest({ method: 'postServer', route, status: 429, durationMs: 2500, attempts: 3 });
    directoryRequest({ method: 'postServer', route, status: 'Timeout', durationMs: 10_000, attempts: 1 });
    directoryRequest({ method: 'postServer', route, status: 429, durationMs: 100, attempts: 1 });
    expect(
      await sample(metrics, 'directory_requests_total', { method: 'postServer', route, status: '429' }),
    ).toBe(2);
    expect(
      await sample(metrics, 'directory_requests_total', { method: 'postServer', route, status: 'Timeout' }),
    ).toBe(1);
    const labels = { method: 'postServer', route };
    const name = 'directory_request_duration_seconds';
    expect(await sample(metrics, name, labels, `${name}_count`)).toBe(3);
    expect(await sample(metrics, name, labels, `${name}_sum`)).toBeCloseTo(12.6);
  });

  it('records limiter waits by priority and route bucket, else global (real limiter)', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const limiter = new RateLimiter({
      global: { max: 5, windowMs: 5000 },
      routes: { max: 1, windowMs: 2000 },
      marginMs: 0,
      now: () => 0,
    });
    limiter.onGrant = metrics.rateLimitGrant;
    (await limiter.acquire({ buckets: ['server'], priority: 'background' })).settle();
    (await limiter.acquire({ priority: 'interactive' })).settle();
    metrics.rateLimitGrant({ waitedMs: 1750, priority: 'interactive', buckets: ['global', 'stats'] });
    const name = 'directory_ratelimit_wait_seconds';
    const count = `${name}_count`;
    expect(await sample(metrics, name, { priority: 'background', bucket: 'server' }, count)).toBe(1);
    expect(await sample(metrics, name, { priority: 'interactive', bucket: 'global' }, count)).toBe(1);
    expect(await sample(metrics, name, { priority: 'interactive', bucket: 'stats' }, count)).toBe(1);
    expect(await sample(metrics, name, { priority: 'interactive', bucket: 'stats' }, `${name}_sum`)).toBe(
      1.75,
    );
    expect(await sample(metrics, name, { priority: 'background', bucket: 'global' }, count)).toBeUndefined();
  });

  it('counts stats posts and moves the last-success time only on success', async () => {
    let now = 1_700_000_000_000;
    const metrics = createMetrics({ defaultMetrics: false, now: () => now });
    const { statsPost } = metrics;
    expect(await sample(metrics, 'directory_stats_last_success_timestamp_seconds')).toBe(0);
    statsPost('sent');
    expect(await sample(metrics, 'directory_stats_last_success_timestamp_seconds')).toBe(1_700_000_000);
    now += 60_000;
    statsPost('failed');
    statsPost('failed');
    expect(await sample(metrics, 'directory_stats_last_success_timestamp_seconds')).toBe(1_700_000_000);
    statsPost('sent', { at: new Date(1_700_000_030_000) });
    expect(await sample(metrics, 'directory_stats_last_success_timestamp_seconds')).toBe(1_700_000_030);
    expect(await sample(metrics, 'directory_stats_posts_total', { outcome: 'sent' })).toBe(2);
    expect(await sample(metrics, 'directory_stats_posts_total', { outcome: 'failed' })).toBe(2);
  });

  it('counts server reports by outcome', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const { serverReport } = metrics;
    serverReport({ guildId: '1', outcome: 'sent' });
    serverReport({ guildId: '2', outcome: 'retry', error: 'Unavailable' });
    serverReport({ guildId: '2', outcome: 'dropped', error: 'Stopped' });
    serverReport({ guildId: '3', outcome: 'sent' });
    expect(await sample(metrics, 'directory_server_reports_total', { outcome: 'sent' })).toBe(2);
    expect(await sample(metrics, 'directory_server_reports_total', { outcome: 'retry' })).toBe(1);
    expect(await sample(metrics, 'directory_server_reports_total', { outcome: 'dropped' })).toBe(1);
  });

  it('reads guilds and shards from the source once per scrape, at scrape time', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    let reads = 0;
    let state: DiscordState = { guilds: 3, shards: [{ id: 0, ready: false, ping: -1 }] };
    metrics.setDiscordSource(() => {
      reads += 1;
      return state;
    });
    let text = await metrics.registry.metrics();
    expect(reads).toBe(1);
    expect(text).toContain('discord_guilds 3');
    expect(text).toContain('discord_shards{status="ready"} 0');
    expect(text).toContain('discord_shards{status="not_ready"} 1');
    expect(text).not.toContain('discord_gateway_ping_seconds{');

    state = {
      guilds: 2500,
      shards: [
        { id: 0, ready: true, ping: 40 },
        { id: 1, ready: true, ping: 120 },
      ],
    };
    text = await metrics.registry.metrics();
    expect(reads).toBe(2);
    expect(text).toContain('discord_guilds 2500');
    expect(text).toContain('discord_shards{status="ready"} 2');
    expect(text).toContain('discord_shards{status="not_ready"} 0');
    expect(text).toContain('discord_gateway_ping_seconds{shard="0"} 0.04');
    expect(text).toContain('discord_gateway_ping_seconds{shard="1"} 0.12');

    // A shard that went away leaves no stale series behind.
    state = { guilds: 2500, shards: [{ id: 0, ready: true, ping: 41 }] };
    text = await metrics.registry.metrics();
    expect(text).not.toContain('discord_gateway_ping_seconds{shard="1"}');

    metrics.setDiscordSource(undefined);
    text = await metrics.registry.metrics();
    expect(text).not.toMatch(/^discord_guilds /m);
    expect(text).not.toMatch(/^discord_shards\{/m);
  });

  it('leaves the gauges out, and logs, when the source throws or answers nonsense', async () => {
    const { logger, lines } = captureLogger();
    const metrics = createMetrics({ defaultMetrics: false, logger });
    metrics.setDiscordSource(() => {
      throw new Error('client destroyed');
    });
    let text = await metrics.registry.metrics();
    expect(text).not.toMatch(/^discord_guilds /m);
    expect(lines.filter((l) => l.msg === 'discord metrics source failed')).toHaveLength(1);
    metrics.setDiscordSource(() => ({ guilds: 1, shards: [null] }) as unknown as DiscordState);
    text = await metrics.registry.metrics();
    expect(text).not.toMatch(/^discord_shards\{/m);
    expect(lines.filter((l) => l.msg === 'discord metrics source failed')).toHaveLength(2);
  });

  it('never throws at the hook caller', () => {
    const { logger, lines } = captureLogger();
    const metrics = createMetrics({ defaultMetrics: false, logger });
    expect(() =>
      metrics.interaction({ kind: 'command', name: 'up', outcome: 'ok', durationMs: Number.NaN }),
    ).not.toThrow();
    expect(() =>
      metrics.rateLimitGrant(null as unknown as Parameters<Metrics['rateLimitGrant']>[0]),
    ).not.toThrow();
    expect(lines.find((l) => l.msg === 'metrics adapter failed')).toMatchObject({
      adapter: 'rateLimitGrant',
    });
  });

  it('keeps each instance in its own registry, away from the global one', async () => {
    const a = createMetrics();
    const b = createMetrics();
    cleanups.push(() => a.registry.clear());
    cleanups.push(() => b.registry.clear());
    a.serverReport({ guildId: '1', outcome: 'sent' });
    expect(await sample(a, 'directory_server_reports_total', { outcome: 'sent' })).toBe(1);
    expect(await sample(b, 'directory_server_reports_total', { outcome: 'sent' })).toBeUndefined();
    expect(globalRegistry.getSingleMetric('directory_server_reports_total')).toBeUndefined();
    expect(globalRegistry.getSingleMetric('process_cpu_user_seconds_total')).toBeUndefined();
  });
});

describe('healthcheck', () => {
  it('validates HTTP_PORT', () => {
    expect(parsePort('8080')).toEqual({ ok: true, port: 8080 });
    expect(parsePort(' 1 ')).toEqual({ ok: true, port: 1 });
    expect(parsePort('65535')).toEqual({ ok: true, port: 65535 });
    for (const bad of ['0', '65536', '-1', '80.5', '1e3', 'abc', '0x50', '8080abc']) {
      const result = parsePort(bad);
      expect(result.ok, bad).toBe(false);
      expect(result).toMatchObject({ problem: expect.stringContaining('HTTP_PORT') });
    }
    expect(parsePort(undefined)).toEqual({ ok: false, problem: 'HTTP_PORT is not set' });
    expect(parsePort('')).toEqual({ ok: false, problem: 'HTTP_PORT is not set' });
  });

  it('exits 0 when /healthz answers 200, 1 otherwise', async () => {
    const { server } = await start(() => false);
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
    expect(await runHealthcheck({ HTTP_PORT: String(server.port) }, io)).toBe(0);
    expect(out).toEqual(['healthcheck: ok (HTTP 200)']);
    // Liveness only: a server that is not ready is still alive.
    expect(await runHealthcheck({ HTTP_PORT: String(server.port) }, io, { path: '/nope' })).toBe(1);
    expect(err.at(-1)).toBe('healthcheck: unhealthy: HTTP 404');
    expect(await runHealthcheck({ HTTP_PORT: 'http' }, io)).toBe(1);
    expect(err.at(-1)).toBe('healthcheck: HTTP_PORT: expected a port from 0 to 65535 (got "http")');
    expect(await runHealthcheck({}, io)).toBe(1);
    expect(err.at(-1)).toBe('healthcheck: HTTP_PORT is not set');
    const port = server.port;
    await server.close();
    expect(await runHealthcheck({ HTTP_PORT: String(port) }, io)).toBe(1);
    expect(err.at(-1)).toBe('healthcheck: unhealthy: ECONNREFUSED');
  });

  it('gives up after the timeout when nothing answers', async () => {
    const silent: TcpServer = createTcpServer(() => undefined);
    const sockets: Array<{ destroy(): void }> = [];
    silent.on('connection', (s) => sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          silent.close(() => resolve());
        }),
    );
    const address = silent.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    const started = Date.now();
    const result = await probe({ port: address.port, timeoutMs: 150 });
    expect(result).toEqual({ ok: false, error: 'no answer within 150 ms' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
