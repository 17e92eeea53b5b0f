/**
 * Rate-limit compliance: a burst against the emulator enforcing the same limits as the client
 * must see zero 429 answers and reach at least 90% of the ceiling.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { DirectoryClient } from '../../src/directory/client.js';
import { type Emulator, IDS, startEmulator, TOKENS } from '../emulator/index.js';
import { eventually } from '../support/wait.js';
import { clientFor } from './helpers.js';

let emu: Emulator | undefined;
let client: DirectoryClient | undefined;

afterEach(async () => {
  await client?.close();
  await emu?.close();
});

/** Throughput against the ceiling: the ideal time for n requests over the actual time. */
function ceilingRatio(n: number, max: number, windowMs: number, elapsedMs: number): number {
  const ideal = Math.floor((n - 1) / max) * windowMs;
  return ideal / elapsedMs;
}

const up = (i: number) => ({
  serverId: IDS.serverFresh,
  up: i % 2 === 0,
  botPresent: true,
  upUserId: '525366699969478676',
  upChannelId: '722424773233213461',
  upChannelName: 'general',
});

describe('rate-limit compliance', () => {
  it('tells the caller when a request that waited its turn went out (onSend)', async () => {
    emu = await startEmulator({ rateLimits: false });
    client = clientFor(emu, { rateLimits: { global: { max: 1, windowMs: 1_000 }, marginMs: 0 } });
    const sent: number[][] = [[], []];
    const asked = Date.now();
    await Promise.all([0, 1].map((i) => client!.getBot('kerdoku', { onSend: (at) => sent[i]!.push(at) })));
    expect(sent.map((s) => s.length)).toEqual([1, 1]);
    const [first, second] = sent.map((s) => s[0]!);
    // The second waited for the first's window: it went out a second after it, not when asked.
    expect(second! - asked).toBeGreaterThanOrEqual(950);
    expect(second! - first!).toBeGreaterThanOrEqual(950);
    expect(emu.requests.map((r) => r.at - asked).at(-1)).toBeGreaterThanOrEqual(950);
  });

  it('a burst of look-ups at the published 5 per 5 s: zero 429, at least 90% of the ceiling', async () => {
    emu = await startEmulator();
    client = clientFor(emu, { rateLimits: {} });
    const n = 11;
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: n }, () => client!.getBot('kerdoku')));
    const elapsed = Date.now() - started;
    expect(results).toHaveLength(n);
    const rejected = emu.requests.filter((r) => r.status === 429).length;
    const ratio = ceilingRatio(n, 5, 5000, elapsed);
    console.log(
      `burst at 5/5 s: ${n} look-ups in ${elapsed} ms, ${(ratio * 100).toFixed(1)}% of the ceiling, ${rejected} × 429`,
    );
    expect(rejected).toBe(0);
    expect(ratio).toBeGreaterThanOrEqual(0.9);
  }, 20_000);

  it('a sustained burst of POST /server at a scaled ceiling: zero 429, at least 90% of it', async () => {
    const limits = { global: { max: 40, windowMs: 1000 }, routes: { max: 10, windowMs: 1000 } };
    emu = await startEmulator({ rateLimits: limits, cooldownMs: 1 });
    client = clientFor(emu, { token: TOKENS.serviceBot, rateLimits: { ...limits, marginMs: 25 } });
    const n = 41;
    const started = Date.now();
    const results = await Promise.all(Array.from({ length: n }, (_, i) => client!.postServer(up(i))));
    const elapsed = Date.now() - started;
    expect(results.every((r) => r.updated)).toBe(true);
    const statuses = emu.requests.map((r) => r.status);
    const ratio = ceilingRatio(n, 10, 1000, elapsed);
    console.log(
      `burst at 10/1 s on POST /server: ${n} posts in ${elapsed} ms, ${(ratio * 100).toFixed(1)}% of the ceiling, ` +
        `${statuses.filter((s) => s === 429).length} × 429`,
    );
    expect(statuses.filter((s) => s === 429)).toHaveLength(0);
    expect(statuses).toHaveLength(n);
    expect(ratio).toBeGreaterThanOrEqual(0.9);
  }, 20_000);

  it('mixed traffic: ups and stats (critical) queued after look-ups and background work still go first, zero 429', async () => {
    const limits = { global: { max: 4, windowMs: 1000 }, routes: { max: 4, windowMs: 1000 } };
    emu = await startEmulator({ rateLimits: limits, cooldownMs: 1 });
    client = clientFor(emu, { token: TOKENS.serviceBot, rateLimits: { ...limits, marginMs: 25 } });
    // The global bucket is full for one window; then background reports, look-ups, stats and ups queue.
    const first = Array.from({ length: 4 }, () => client!.getBot('kerdoku'));
    // Those four hold the window before the rest arrive (else the critical ones go first of all).
    await eventually(
      () => (emu?.requests.length === 4 ? true : undefined),
      5_000,
      'the first four look-ups sent',
    );
    const background = Array.from({ length: 2 }, () =>
      client!.getProfile(IDS.profileUser, { priority: 'background' }),
    );
    const lookups = Array.from({ length: 2 }, () => client!.getServer(IDS.serverFresh));
    const stats = client!.postBotStats({ servers: 1, shards: 1, users: 1 });
    // As the bot's /up asks (features/up/up.ts); the statistics are critical by default.
    const ups = Array.from({ length: 3 }, (_, i) => client!.postServer(up(i), { priority: 'critical' }));
    await Promise.all([...first, ...background, ...lookups, stats, ...ups]);
    expect(emu.requests.filter((r) => r.status === 429)).toHaveLength(0);
    const order = emu.requests.map((r) => r.path.replace(/^\/v2/, '').split('/')[1]);
    // Window by window (4 requests each; within one window they are let go at the same moment, so
    // their order of arrival is the network's): statistics and /up first (critical), then the
    // look-ups, then the background work.
    const windows = [0, 4, 8].map((i) => order.slice(i, i + 4).sort());
    expect(windows).toEqual([
      ['bot', 'bot', 'bot', 'bot'],
      ['server', 'server', 'server', 'stats'],
      ['profile', 'profile', 'server', 'server'],
    ]);
    // Which of the 'server' requests were ups (POST) and which look-ups (GET).
    const methods = emu.requests.slice(4).map((r) => `${r.method} ${r.path.split('/')[2]}`);
    expect(methods.slice(0, 4).filter((m) => m === 'POST server')).toHaveLength(3);
    expect(methods.slice(4).filter((m) => m === 'GET server')).toHaveLength(2);
  }, 20_000);
});
