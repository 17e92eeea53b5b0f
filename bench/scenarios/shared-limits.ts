/**
 * Scenario 7: the directory's limits shared by several processes (PostgreSQL ledger).
 *
 * (a) What a turn at the ledger adds to a request: 300 POST /server one after another through
 *     a client with the in-process limiter, then through one with the shared limiter, against
 *     the emulator with its limits off (nothing waits for a window: what is measured is the
 *     limiter's own cost, from the call to the answer).
 * (b) The ceiling across three "processes" (three clients, each with a store of its own on one
 *     schema) offering 1.5x the emulator's /server limit, scaled to 20 per 1 s, for ~8 s: the
 *     rate they reach together, against the same run with one client, and the 429s.
 */
import { DirectoryClient } from '../../src/directory/index.js';
import { openStore, PostgresRateLimitLedger, type Store } from '../../src/store/index.js';
import { snowflake } from '../../test/discord/index.js';
import { startEmulator, TOKENS } from '../../test/emulator/index.js';
import { freshPlace } from '../../test/store/places.js';
import { size } from '../lib/env.js';
import { atLeast, atMost, type Row, type ScenarioResult } from '../lib/report.js';
import { sleep, summarize } from '../lib/stats.js';

const SCENARIO = '7. Shared rate limits';
const ROUTE_LIMIT = { max: 20, windowMs: 1_000 };
const GLOBAL_LIMIT = { max: 50, windowMs: 1_000 };
const MARGIN_MS = 25;
const OVERLOAD = 1.5;

function up(client: DirectoryClient): Promise<unknown> {
  return client.postServer(
    {
      serverId: snowflake(),
      up: true,
      botPresent: true,
      upUserId: snowflake(),
      upChannelId: snowflake(),
      upChannelName: 'general',
    },
    { priority: 'interactive' },
  );
}

async function turnCost(stores: Store[]): Promise<{ local: number[]; shared: number[] }> {
  const emu = await startEmulator({ rateLimits: false });
  const loose = { global: { max: 100_000, windowMs: 1_000 }, routes: { max: 100_000, windowMs: 1_000 } };
  const base = { baseUrl: emu.url, version: 'v2' as const, token: TOKENS.serviceBot, rateLimits: loose };
  const local = new DirectoryClient(base);
  const shared = new DirectoryClient({
    ...base,
    sharedRateLimits: { ledger: new PostgresRateLimitLedger(stores[0] as Store) },
  });
  const n = size(300, 60);
  const times = { local: [] as number[], shared: [] as number[] };
  try {
    for (let i = 0; i < 20; i++) {
      await up(local);
      await up(shared);
    }
    // Interleaved, so that both see the same machine at the same moments.
    for (let i = 0; i < n; i++) {
      for (const [name, client] of [
        ['local', local],
        ['shared', shared],
      ] as const) {
        const started = performance.now();
        await up(client);
        times[name].push(performance.now() - started);
      }
    }
  } finally {
    await local.close();
    await shared.close();
    await emu.close();
  }
  return times;
}

async function ceiling(
  stores: Store[],
  processes: number,
): Promise<{ rate: number; tooMany: number; posts: number; maxInWindow: number }> {
  const emu = await startEmulator({ rateLimits: { global: GLOBAL_LIMIT, routes: ROUTE_LIMIT } });
  const clients = stores.slice(0, processes).map(
    (store) =>
      new DirectoryClient({
        baseUrl: emu.url,
        token: TOKENS.serviceBot,
        rateLimits: { global: GLOBAL_LIMIT, routes: ROUTE_LIMIT, marginMs: MARGIN_MS },
        ...(processes > 1 ? { sharedRateLimits: { ledger: new PostgresRateLimitLedger(store) } } : {}),
      }),
  );
  const durationMs = size(8_000, 3_000);
  const perSecond = ((ROUTE_LIMIT.max * 1_000) / ROUTE_LIMIT.windowMs) * OVERLOAD;
  const total = Math.round((perSecond * durationMs) / 1_000);
  const pending: Array<Promise<unknown>> = [];
  const started = performance.now();
  try {
    for (let i = 0; i < total; i++) {
      const wait = started + (i * 1_000) / perSecond - performance.now();
      if (wait > 1) await sleep(wait);
      pending.push(up(clients[i % clients.length] as DirectoryClient).catch(() => undefined));
    }
    await Promise.all(pending);
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await emu.close();
  }
  const accepted = emu.requests.filter((r) => r.method === 'POST' && r.status === 200).map((r) => r.at);
  const first = accepted[0] ?? 0;
  const last = accepted.at(-1) ?? 0;
  let maxInWindow = 0;
  for (let i = 0; i < accepted.length; i++) {
    let n = 0;
    for (
      let j = i;
      j < accepted.length && (accepted[j] as number) - (accepted[i] as number) < ROUTE_LIMIT.windowMs;
      j++
    )
      n++;
    maxInWindow = Math.max(maxInWindow, n);
  }
  return {
    rate: accepted.length > 1 ? ((accepted.length - 1) * 1_000) / (last - first) : Number.NaN,
    tooMany: emu.requests.filter((r) => r.status === 429).length,
    posts: accepted.length,
    maxInWindow,
  };
}

export async function sharedLimitsScenario(): Promise<ScenarioResult> {
  const place = await freshPlace('postgres');
  const stores: Store[] = [];
  try {
    for (let i = 0; i < 3; i++) stores.push(await openStore(place.options));
    const cost = await turnCost(stores);
    const local = summarize(cost.local);
    const shared = summarize(cost.shared);
    const one = await ceiling(stores, 1);
    const three = await ceiling(stores, 3);
    const addedP99 = shared.p99 - local.p99;
    const rows: Row[] = [
      {
        scenario: SCENARIO,
        metric: 'POST /server, p50 (in-process limiter → shared)',
        unit: 'ms',
        ours: shared.p50,
        baseline: local.p50,
        ratio: shared.p50 / local.p50,
        verdict: 'info',
        note: `${cost.local.length} requests each, interleaved, emulator limits off`,
      },
      {
        scenario: SCENARIO,
        metric: 'added by the shared limiter, p99',
        unit: 'ms',
        ours: addedP99,
        target: '≤ 50 ms',
        verdict: atMost(addedP99, 50),
        note: `p99 ${local.p99.toFixed(1)} ms in-process, ${shared.p99.toFixed(1)} ms shared`,
      },
      {
        scenario: SCENARIO,
        metric: 'ups/s at the /server ceiling, 3 processes',
        unit: '/s',
        ours: three.rate,
        baseline: one.rate,
        ratio: three.rate / one.rate,
        target: '≥ 0.90x one process',
        verdict: atLeast(three.rate / one.rate, 0.9),
        note: `ceiling ${ROUTE_LIMIT.max} per ${ROUTE_LIMIT.windowMs} ms, ${OVERLOAD}x offered; most in any window: ${three.maxInWindow} (3 processes), ${one.maxInWindow} (1)`,
      },
      {
        scenario: SCENARIO,
        metric: '429 from the directory, 3 processes',
        unit: '',
        ours: three.tooMany,
        baseline: one.tooMany,
        target: '0',
        verdict: atMost(three.tooMany, 0),
      },
    ];
    return { rows, data: { local, shared, one, three } };
  } finally {
    await Promise.all(stores.map((s) => s.close()));
    await place.remove();
  }
}
