/**
 * The REST proxy (src/gateway/rest-proxy.ts, @discordjs/proxy on a @discordjs/rest REST) in front
 * of the Discord stand-in enforcing Discord's global limit, 50 requests a second for the token:
 * what @discordjs/proxy forwards with `auth: false` is held to that limit (queued, never refused);
 * /healthz is the proxy's own; an upstream that cannot be reached is a 502; stopping lets a request
 * in flight finish; the Authorization header is never logged.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startRestProxy } from '../../src/gateway/rest-proxy.js';
import { type DiscordStandIn, makeGuild, snowflake, startDiscordStandIn } from '../discord/index.js';
import { closedPortUrl, LOCALHOST } from '../support/local.js';
import { captureLogger } from '../support/logs.js';
import { ROOT, runScript } from '../support/spawn.js';

const BURST = 150;

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function standIn(options: Parameters<typeof startDiscordStandIn>[0] = {}): Promise<DiscordStandIn> {
  const si = await startDiscordStandIn({ globalRateLimit: { max: 50, windowMs: 1_000 }, ...options });
  closers.push(() => si.close());
  return si;
}

async function proxyFor(upstream: string) {
  const log = captureLogger();
  const proxy = await startRestProxy({ upstream, port: 0, host: LOCALHOST, logger: log.logger });
  closers.push(() => proxy.close());
  return { proxy, log, url: `http://${LOCALHOST}:${proxy.port}/api` };
}

/** `n` bot-token requests at once, each on a route of its own (an unknown channel): their statuses. */
async function burst(api: string, token: string, n: number): Promise<number[]> {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const res = await fetch(`${api}/v10/channels/${snowflake()}`, {
        headers: { authorization: `Bot ${token}` },
      });
      await res.arrayBuffer();
      return res.status;
    }),
  );
}

describe('the REST proxy', () => {
  it(`holds ${BURST} forwarded requests sent at once to the global 50 a second: no 429, none refused`, async () => {
    const si = await standIn();
    const { url, log } = await proxyFor(si.restUrl);
    const started = performance.now();
    const statuses = await burst(url, si.token, BURST);
    const tookMs = Math.round(performance.now() - started);
    console.log(`rest proxy: ${BURST} requests at once took ${tookMs} ms, ${si.globalRateLimited()} × 429`);
    // Every one reached Discord (an unknown channel) and was answered; none was refused.
    expect(statuses.filter((s) => s !== 404)).toEqual([]);
    expect(si.globalCounted()).toBe(BURST);
    expect(si.globalRateLimited()).toBe(0);
    // Three windows of 50: two waits of a second at least.
    expect(tookMs).toBeGreaterThanOrEqual(2_000);
    // Each request logged by method, path and status; the token in none of the lines.
    expect(log.lines.filter((l) => l.msg === 'forwarded')).toHaveLength(BURST);
    expect(log.raw.join('\n')).not.toContain(si.token);
    expect(log.raw.join('\n').toLowerCase()).not.toContain('authorization');
  });

  it(`the same ${BURST} requests sent straight to the stand-in get 429s (the limit the proxy keeps)`, async () => {
    const si = await standIn();
    const statuses = await burst(si.restUrl, si.token, BURST);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(BURST - 50);
    expect(si.globalRateLimited()).toBeGreaterThanOrEqual(BURST - 50);
  });

  it('answers GET and HEAD /healthz itself, without asking Discord', async () => {
    const si = await standIn();
    const { proxy } = await proxyFor(si.restUrl);
    const before = si.requests.length;
    const get = await fetch(`http://${LOCALHOST}:${proxy.port}/healthz`);
    expect(get.status).toBe(200);
    expect(await get.text()).toBe('ok\n');
    const head = await fetch(`http://${LOCALHOST}:${proxy.port}/healthz`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(si.requests.length).toBe(before);
  });

  it("passes the container's health probe, node dist/src/ops/healthcheck.js --rest-proxy", async () => {
    const si = await standIn();
    const { proxy } = await proxyFor(si.restUrl);
    const healthcheck = join(ROOT, 'dist/src/ops/healthcheck.js');
    const env = { DISCORD_REST_PROXY_PORT: String(proxy.port), HTTP_PORT: '9' };
    const check = await runScript(healthcheck, ['--rest-proxy'], { cwd: tmpdir(), env });
    expect(check).toEqual({ code: 0, stdout: 'healthcheck: ok (HTTP 200)\n', stderr: '' });
    // Without the flag it knocks on HTTP_PORT, where nothing listens.
    expect((await runScript(healthcheck, [], { cwd: tmpdir(), env })).code).toBe(1);
  });

  it('answers 502 when Discord cannot be reached', async () => {
    const { url } = await proxyFor(`${await closedPortUrl()}/api`);
    const res = await fetch(`${url}/v10/users/@me`, { headers: { authorization: 'Bot x.y.z' } });
    expect(res.status).toBe(502);
  });

  it('sends a body again whole when Discord answers 429 and the proxy tries again', async () => {
    const guild = makeGuild();
    const channelId = guild.channels[0]?.id as string;
    const si = await standIn({ guilds: [guild] });
    const { url } = await proxyFor(si.restUrl);
    si.failPosts(channelId, { status: 429, retryAfter: 0.2, times: 2 });
    const res = await fetch(`${url}/v10/channels/${channelId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${si.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'sent a third time' }),
    });
    // The host never sees the 429s: the proxy waited them out.
    expect(res.status).toBe(200);
    const posts = si.requests.filter(
      (r) => r.method === 'POST' && r.path === `/channels/${channelId}/messages`,
    );
    expect(posts.map((r) => r.status)).toEqual([429, 429, 200]);
    expect(posts.map((r) => r.body)).toEqual(Array(3).fill({ content: 'sent a third time' }));
    expect(si.channelMessages(channelId).map((m) => m.content)).toEqual(['sent a third time']);
  });

  it('stopping: no new connection, and a request in flight still gets its answer', async () => {
    const guild = makeGuild();
    const channelId = guild.channels[0]?.id as string;
    const si = await standIn({ guilds: [guild] });
    const { proxy, url } = await proxyFor(si.restUrl);
    si.holdPosts(channelId);
    const posted = fetch(`${url}/v10/channels/${channelId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${si.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'in flight' }),
    });
    await si.waitForHeldPost(channelId);
    const closed = proxy.close();
    await expect(fetch(`${url}/v10/users/@me`)).rejects.toThrow();
    si.releasePosts(channelId);
    const res = await posted;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { content: string }).content).toBe('in flight');
    // Its connection closed after the answer: the stop ends then, not at the grace's end (5 s).
    const answeredAt = performance.now();
    await closed;
    expect(performance.now() - answeredAt).toBeLessThan(1_000);
  });
});
