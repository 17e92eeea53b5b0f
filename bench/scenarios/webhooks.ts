/**
 * Scenario 9: the webhook receiver under load on loopback, on each engine. The receiver runs in a
 * process of its own over the bot's store (bench/workers/webhook-receiver.ts); this process is the
 * directory delivering comments for 100 servers, 32 deliveries in flight on keep-alive
 * connections. Each answer is a 200 only once its event is stored, so the rate is the store's.
 * Then a flood: one source delivering to one server with a wrong key as fast as it can, against
 * the default limit (30 refusals per 10 s per source): every key is checked in memory (the store
 * is asked about the server at most once per 5 s); how many are refused before the source is cut
 * off (429), and how fast the rest is turned away.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Pool } from 'undici';
import { freshPlace } from '../../test/store/places.js';
import { size } from '../lib/env.js';
import { forkRpc } from '../lib/ipc.js';
import { atLeast, atMost, type Row, type ScenarioResult } from '../lib/report.js';
import { summarize } from '../lib/stats.js';

const SCENARIO = '9. Webhook receiver';
const KEY = 'bench-webhook-key-9f2c';
const IN_FLIGHT = 32;

function guildIds(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `7224247732332${String(i).padStart(5, '0')}`);
}

/** `total` deliveries, `IN_FLIGHT` at a time; each one's time to its answer, and the statuses. */
async function deliver(
  port: number,
  total: number,
  body: (i: number) => { path: string; json: string; key: string },
): Promise<{ times: number[]; statuses: Map<number, number>; seconds: number }> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: IN_FLIGHT, pipelining: 1 });
  const times: number[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (let i = next++; i < total; i = next++) {
          const { path, json, key } = body(i);
          const t = performance.now();
          const res = await pool.request({
            method: 'POST',
            path,
            headers: { 'content-type': 'application/json', 'x-hook-key': key },
            body: json,
          });
          await res.body.dump();
          times.push(performance.now() - t);
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
        }
      }),
    );
  } finally {
    await pool.close();
  }
  return { times, statuses, seconds: (performance.now() - started) / 1000 };
}

function describeStatuses(statuses: Map<number, number>): string {
  return [...statuses.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([status, n]) => `${n}× ${status}`)
    .join(', ');
}

export async function webhooksScenario(): Promise<ScenarioResult> {
  const total = size(10_000, 1_000);
  const flood = size(10_000, 1_000);
  const guilds = guildIds(100);
  const rows: Row[] = [];
  const data: Record<string, unknown> = { total, flood, inFlight: IN_FLIGHT };
  for (const engine of ['sqlite', 'postgres'] as const) {
    const label = engine === 'sqlite' ? 'SQLite' : 'PostgreSQL';
    const dir = mkdtempSync(`${tmpdir()}/bench-webhooks-`);
    const place = engine === 'postgres' ? await freshPlace('postgres') : undefined;
    const child = await forkRpc('bench/workers/webhook-receiver.js');
    try {
      const ports = await child.call<{ open: number; limited: number }>(
        'start',
        place ? place.options : { dataDir: dir },
        guilds,
        KEY,
      );
      const base = Date.now() - 3_600_000;
      const comment = (i: number) => ({
        path: `/hooks/directory/${guilds[i % guilds.length]}`,
        key: KEY,
        json: JSON.stringify({
          type: 'new_server_comment',
          data: {
            user: '310000000000000001',
            comment: { vote: { old: null, new: 1 }, old: null, new: `Комментарий №${i}: отличный сервер!` },
            at: base + i,
          },
        }),
      });
      // Warm up: connections, the store's first writes, the JIT.
      await deliver(ports.open, 300, (i) => comment(total + i));
      const cpuBefore = await child.call<number>('cpuMs');
      const run = await deliver(ports.open, total, comment);
      const cpuMs = (await child.call<number>('cpuMs')) - cpuBefore;
      const stored = await child.call<number>('stored');
      const answer = summarize(run.times);
      const rate = total / run.seconds;
      const allStored = (run.statuses.get(200) ?? 0) === total && stored === total + 300;

      const storedBefore = stored;
      const floodRun = await deliver(ports.limited, flood, (i) => ({
        ...comment(i),
        path: `/hooks/directory/${guilds[0]}`,
        key: `${KEY}-guess-${i}`,
      }));
      const storedAfter = await child.call<number>('stored');
      const limited = floodRun.statuses.get(429) ?? 0;
      data[engine] = {
        answer,
        rate,
        cpuMsPerDelivery: cpuMs / total,
        statuses: Object.fromEntries(run.statuses),
        flood: { statuses: Object.fromEntries(floodRun.statuses), seconds: floodRun.seconds },
      };
      rows.push(
        {
          scenario: SCENARIO,
          metric: `deliveries stored and answered per second (${label})`,
          unit: '/s',
          ours: rate,
          target: '≥ 500 /s',
          verdict: allStored ? atLeast(rate, 500) : 'FAIL',
          note: `${total} comments for ${guilds.length} servers, ${IN_FLIGHT} in flight: ${describeStatuses(run.statuses)}; ${stored} events in the store; the receiver's CPU ${(cpuMs / total).toFixed(2)} ms a delivery`,
        },
        {
          scenario: SCENARIO,
          metric: `time to the 200, p50 (${label})`,
          unit: 'ms',
          ours: answer.p50,
          verdict: 'info',
        },
        {
          scenario: SCENARIO,
          metric: `time to the 200, p99 (${label})`,
          unit: 'ms',
          ours: answer.p99,
          target: '≤ 100 ms',
          verdict: atMost(answer.p99, 100),
          note: `${IN_FLIGHT} in flight: the time includes waiting behind the others for the store`,
        },
        {
          scenario: SCENARIO,
          // Until 2026-11-25 (issue 23) this counted what reached the key check, then in the store;
          // the key is now checked in memory for every delivery and this counts the refusals
          // answered before the source's limit cut it off (401, not 429).
          metric: `a flood with guessed keys: refused before the source is cut off (${label})`,
          unit: 'deliveries',
          ours: flood - limited,
          target: '≤ 30',
          verdict: storedAfter === storedBefore ? atMost(flood - limited, 30) : 'FAIL',
          note: `${flood} deliveries from one source to one server in ${floodRun.seconds.toFixed(1)} s (${(flood / floodRun.seconds).toFixed(0)}/s): ${describeStatuses(floodRun.statuses)}; keys checked in memory, the store asked at most once per 5 s; nothing stored`,
        },
      );
    } finally {
      await child.call('stop').catch(() => undefined);
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
      await place?.remove();
    }
  }
  return { rows, data };
}
