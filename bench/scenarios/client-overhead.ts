/**
 * Scenario 1: what the typed directory client costs over plain undici. 10,000 GETs of one bot,
 * one at a time and 64 in flight, against the emulator in a child process with its rate limits
 * off (and the client's off too), so the CPU this process spends is the client's alone. Runs
 * alternate ours / undici (A/B/A/B) over 5 rounds; the ratio reported is the median of the
 * rounds' ratios.
 */
import { Pool } from 'undici';
import { DirectoryClient } from '../../src/directory/index.js';
import { IDS } from '../../test/emulator/index.js';
import { startEmulatorChild } from '../lib/children.js';
import { size } from '../lib/env.js';
import { atMost, type Row, type ScenarioResult } from '../lib/report.js';
import { median, percentile } from '../lib/stats.js';

const SCENARIO = '1. Directory client overhead';
const CONNECTIONS = 8;
const USER_AGENT = 'directory-bot-bench';

type Fetcher = () => Promise<unknown>;

interface RunStats {
  cpuUsPerRequest: number;
  wallMs: number;
  p50Ms: number;
  p99Ms: number;
}

/** `total` calls of `fetcher`, `concurrency` at a time; CPU and per-call latency. */
async function measure(fetcher: Fetcher, total: number, concurrency: number): Promise<RunStats> {
  const latencies = new Float64Array(total);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      const i = next++;
      const started = performance.now();
      await fetcher();
      latencies[i] = performance.now() - started;
    }
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return {
    cpuUsPerRequest: (used.user + used.system) / total,
    wallMs,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
}

export async function clientOverheadScenario(): Promise<ScenarioResult> {
  const total = size(10_000, 1_000);
  const rounds = size(5, 1);
  const warmup = size(2_000, 300);
  const modes = [
    { name: 'sequential', concurrency: 1 },
    { name: '64 in flight', concurrency: 64 },
  ] as const;

  const emulator = await startEmulatorChild();
  const client = new DirectoryClient({
    baseUrl: emulator.url,
    version: 'v2',
    rateLimits: false,
    connections: CONNECTIONS,
    userAgent: USER_AGENT,
  });
  const origin = new URL(emulator.url).origin;
  const pool = new Pool(origin, { connections: CONNECTIONS });
  const path = `/v2/bot/${IDS.plainBot}`;

  const ours: Fetcher = () => client.getBot(IDS.plainBot);
  const undici: Fetcher = async () => {
    const { statusCode, body } = await pool.request({
      method: 'GET',
      path,
      headers: { accept: 'application/json', 'user-agent': USER_AGENT },
    });
    const json: unknown = await body.json();
    if (statusCode !== 200) throw new Error(`undici baseline got ${statusCode}`);
    return json;
  };

  const rows: Row[] = [];
  const data: Record<string, unknown> = { requests: total, rounds, connections: CONNECTIONS, path };
  try {
    // Warm both paths up (JIT, connections) before anything is measured.
    for (const mode of modes) {
      await measure(ours, warmup, mode.concurrency);
      await measure(undici, warmup, mode.concurrency);
    }
    for (const mode of modes) {
      const runs: Array<{ round: number; ours: RunStats; undici: RunStats; ratio: number }> = [];
      for (let round = 0; round < rounds; round++) {
        const a = await measure(ours, total, mode.concurrency);
        const b = await measure(undici, total, mode.concurrency);
        runs.push({ round, ours: a, undici: b, ratio: a.cpuUsPerRequest / b.cpuUsPerRequest });
      }
      data[mode.name] = runs;
      const pick = (side: 'ours' | 'undici', key: keyof RunStats): number =>
        median(runs.map((r) => r[side][key]));
      const ratio = median(runs.map((r) => r.ratio));
      rows.push(
        {
          scenario: SCENARIO,
          metric: `CPU per request, ${mode.name}`,
          unit: 'µs',
          ours: pick('ours', 'cpuUsPerRequest'),
          baseline: pick('undici', 'cpuUsPerRequest'),
          ratio,
          target: '≤ 1.25x undici',
          verdict: atMost(ratio, 1.25),
          note:
            `median of ${rounds} interleaved rounds of ${total.toLocaleString('en-US')} GETs; ` +
            `per-round ratios ${runs.map((r) => r.ratio.toFixed(2)).join(', ')}`,
        },
        {
          scenario: SCENARIO,
          metric: `latency p50, ${mode.name}`,
          unit: 'ms',
          ours: pick('ours', 'p50Ms'),
          baseline: pick('undici', 'p50Ms'),
          ratio: pick('ours', 'p50Ms') / pick('undici', 'p50Ms'),
          verdict: 'info',
        },
        {
          scenario: SCENARIO,
          metric: `latency p99, ${mode.name}`,
          unit: 'ms',
          ours: pick('ours', 'p99Ms'),
          baseline: pick('undici', 'p99Ms'),
          ratio: pick('ours', 'p99Ms') / pick('undici', 'p99Ms'),
          verdict: 'info',
        },
      );
    }
  } finally {
    await client.close();
    await pool.close();
    await emulator.stop();
  }
  return { rows, data };
}
