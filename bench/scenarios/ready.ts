/**
 * Scenario 5: time from login() to ready at 10k guilds over 1, 4 and 16 shards, the bot's
 * client configuration (createDiscordClient), each sample in a fresh process. The stand-in
 * lets every shard identify at once (max_concurrency = shard count), as a large bot's would.
 */
import { startDiscordStandIn } from '../../test/discord/index.js';
import { runWorker } from '../lib/children.js';
import { type Budget, size } from '../lib/env.js';
import { realisticGuilds } from '../lib/guilds.js';
import type { Row, ScenarioResult } from '../lib/report.js';
import { median } from '../lib/stats.js';

const SCENARIO = '5. Time to ready';

export async function readyScenario(budget: Budget): Promise<ScenarioResult> {
  const guildCount = size(10_000, 1_000);
  const shardCounts = size([1, 4, 16], [1, 4]);
  const repeats = size(3, 1);
  const guilds = realisticGuilds(guildCount, 2);
  const samples: Record<number, number[]> = {};
  const errors: string[] = [];
  for (const shards of shardCounts) {
    samples[shards] = [];
    const standIn = await startDiscordStandIn({ guilds, shards });
    try {
      for (let i = 0; i < repeats; i++) {
        try {
          const result = await runWorker(
            {
              config: 'ours',
              restUrl: standIn.restUrl,
              token: standIn.token,
              shards,
              expectedGuilds: guildCount,
              memory: false,
            },
            Math.max(30_000, Math.min(120_000, budget.remainingMs())),
          );
          samples[shards]?.push(result.readyMs);
        } catch (err) {
          errors.push(`${shards} shards: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    } finally {
      await standIn.close();
    }
  }
  const one = median(samples[1] ?? []);
  const rows: Row[] = shardCounts.map((shards) => {
    const list = samples[shards] ?? [];
    const ours = median(list);
    return {
      scenario: SCENARIO,
      metric: `${guildCount.toLocaleString('en-US')} guilds, ${shards} shard${shards === 1 ? '' : 's'}`,
      unit: 'ms',
      ours: list.length > 0 ? ours : undefined,
      ...(shards === 1 ? {} : { baseline: one, ratio: ours / one }),
      target: shards === 1 ? 'baseline' : 'vs 1 shard',
      verdict: list.length > 0 ? 'info' : 'error',
      ...(list.length > 1
        ? { note: `${list.length} runs: ${list.map((v) => Math.round(v)).join(', ')} ms` }
        : {}),
    };
  });
  for (const error of errors) {
    rows.push({
      scenario: SCENARIO,
      metric: 'run failed',
      unit: '',
      ours: undefined,
      verdict: 'error',
      note: error,
    });
  }
  return { rows, data: { guilds: guildCount, repeats, readyMs: samples, errors } };
}
