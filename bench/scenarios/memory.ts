/**
 * Scenario 4: memory after ready at 1k, 10k and 50k guilds, the bot's client configuration
 * (createDiscordClient: trimmed caches) against discord.js's defaults, each sample in a fresh
 * process. MB per 1k guilds is the slope of a least-squares line through the samples, so the
 * fixed cost of the process (node, discord.js, the modules) is left out of it.
 */
import { startDiscordStandIn } from '../../test/discord/index.js';
import { runWorker, type WorkerResult } from '../lib/children.js';
import { type Budget, size } from '../lib/env.js';
import { GUILD_MIX, realisticGuilds } from '../lib/guilds.js';
import { atMost, type Row, type ScenarioResult } from '../lib/report.js';
import { fmt, linearFit, MB } from '../lib/stats.js';

const SCENARIO = '4. Memory after ready';
const CONFIGS = ['ours', 'default'] as const;
type Config = (typeof CONFIGS)[number];

interface Sample {
  guilds: number;
  config: Config;
  result: WorkerResult;
  wallMs: number;
}

export async function memoryScenario(budget: Budget, reserveMs: number): Promise<ScenarioResult> {
  const counts = size([1_000, 10_000, 50_000], [500, 2_000]);
  const samples: Sample[] = [];
  const skipped: Array<{ guilds: number; reason: string }> = [];
  let lastPointMs = 0;
  let lastCount = 0;
  for (const count of counts) {
    // The next point costs about (count / lastCount) times the last one; skip it if it cannot fit.
    const estimateMs = lastCount === 0 ? 0 : (lastPointMs * count) / lastCount;
    const available = budget.remainingMs() - reserveMs;
    if (estimateMs > available) {
      skipped.push({
        guilds: count,
        reason:
          `would take ~${Math.round(estimateMs / 1000)} s, ` +
          `${Math.max(0, Math.round(available / 1000))} s left in the run's budget`,
      });
      continue;
    }
    const pointStarted = performance.now();
    const standIn = await startDiscordStandIn({ guilds: realisticGuilds(count), shards: 1 });
    try {
      for (const config of CONFIGS) {
        const started = performance.now();
        try {
          const result = await runWorker(
            {
              config,
              restUrl: standIn.restUrl,
              token: standIn.token,
              shards: 1,
              expectedGuilds: count,
              memory: true,
            },
            Math.max(30_000, Math.min(180_000, budget.remainingMs() - reserveMs)),
          );
          samples.push({ guilds: count, config, result, wallMs: performance.now() - started });
        } catch (err) {
          skipped.push({
            guilds: count,
            reason: `${config}: ${err instanceof Error ? err.message : String(err)}`,
          });
        }
      }
    } finally {
      await standIn.close();
    }
    lastPointMs = performance.now() - pointStarted;
    lastCount = count;
  }

  const rows: Row[] = [];
  const perK: Record<string, Record<Config, number>> = {};
  for (const metric of ['heapUsed', 'rss'] as const) {
    const slope = (config: Config): number => {
      const points = samples
        .filter((s) => s.config === config)
        .map((s) => ({ x: s.guilds / 1_000, y: s.result[metric] / MB }));
      return points.length >= 2 ? linearFit(points).slope : Number.NaN;
    };
    const ours = slope('ours');
    const base = slope('default');
    perK[metric] = { ours, default: base };
    const ratio = ours / base;
    rows.push({
      scenario: SCENARIO,
      metric: `${metric === 'rss' ? 'RSS' : 'heap used'} per 1k guilds`,
      unit: 'MB',
      ours,
      baseline: base,
      ratio,
      target: '≤ 0.5x default',
      verdict: Number.isFinite(ratio) ? atMost(ratio, 0.5) : 'error',
      ...(metric === 'heapUsed'
        ? { note: `slope of a least-squares fit over ${describeCounts(samples)}; payloads: ${GUILD_MIX}` }
        : {}),
    });
  }
  for (const count of counts) {
    const ours = samples.find((s) => s.guilds === count && s.config === 'ours');
    const base = samples.find((s) => s.guilds === count && s.config === 'default');
    if (!ours && !base) {
      const why = skipped.filter((s) => s.guilds === count).map((s) => s.reason);
      rows.push({
        scenario: SCENARIO,
        metric: `heap / RSS at ${count.toLocaleString('en-US')} guilds`,
        unit: 'MB',
        ours: undefined,
        verdict: 'skipped',
        note: `not measured at ${count.toLocaleString('en-US')} guilds: ${why.join('; ') || 'no sample'}`,
      });
      continue;
    }
    for (const metric of ['heapUsed', 'rss'] as const) {
      const o = ours ? ours.result[metric] / MB : undefined;
      const b = base ? base.result[metric] / MB : undefined;
      rows.push({
        scenario: SCENARIO,
        metric: `${metric === 'rss' ? 'RSS' : 'heap used'} at ${count.toLocaleString('en-US')} guilds`,
        unit: 'MB',
        ours: o,
        baseline: b,
        ratio: o !== undefined && b !== undefined ? o / b : undefined,
        verdict: 'info',
      });
    }
  }
  const largest = Math.max(0, ...samples.map((s) => s.guilds));
  const readyOf = (config: Config): number | undefined =>
    samples.find((s) => s.guilds === largest && s.config === config)?.result.readyMs;
  if (largest > 0) {
    const ours = readyOf('ours');
    const base = readyOf('default');
    rows.push({
      scenario: SCENARIO,
      metric: `time to ready at ${largest.toLocaleString('en-US')} guilds (1 run each)`,
      unit: 'ms',
      ours,
      baseline: base,
      ratio: ours !== undefined && base !== undefined ? ours / base : undefined,
      verdict: 'info',
    });
  }
  for (const s of skipped) {
    if (samples.some((x) => x.guilds === s.guilds)) {
      rows.push({
        scenario: SCENARIO,
        metric: `sample at ${s.guilds.toLocaleString('en-US')} guilds`,
        unit: '',
        ours: undefined,
        verdict: 'error',
        note: s.reason,
      });
    }
  }
  return {
    rows,
    data: {
      guildMix: GUILD_MIX,
      counts,
      perThousandGuildsMb: perK,
      samples: samples.map((s) => ({
        guilds: s.guilds,
        config: s.config,
        wallMs: Math.round(s.wallMs),
        readyMs: Math.round(s.result.readyMs),
        channels: s.result.channels,
        rssMb: round(s.result.rss / MB),
        heapUsedMb: round(s.result.heapUsed / MB),
        heapTotalMb: round(s.result.heapTotal / MB),
        externalMb: round(s.result.external / MB),
      })),
      skipped,
    },
  };
}

function describeCounts(samples: readonly Sample[]): string {
  const counts = [...new Set(samples.map((s) => s.guilds))].sort((a, b) => a - b);
  return `${counts.map((c) => fmt(c)).join(', ')} guilds`;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
