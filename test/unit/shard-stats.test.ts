/**
 * Shards are counted in one place (shard-stats.ts), in a single process and in each shard process
 * of the sharding manager alike; readiness for /readyz and the metrics' shard gauges come from one
 * view of them (services.ts), whichever process holds it.
 */
import type { Client, ShardingManager } from 'discord.js';
import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { createServices } from '../../src/app/services.js';
import { loadConfig } from '../../src/config/env.js';
import {
  askShardProcess,
  exposeShardStates,
  type LatestShards,
  managedShards,
  type ShardSnapshot,
  shardStates,
} from '../../src/gateway/shard-stats.js';
import { createLogger } from '../../src/log/logger.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { tempDir } from '../support/temp.js';

/** The parts of a discord.js client that shardStates reads: shards 0 and 1, guilds on both. */
function fakeClient(): Client {
  const guild = (shardId: number, memberCount: number, available = true) => ({
    shardId,
    memberCount,
    available,
  });
  return {
    options: { shards: [0, 1] },
    ws: {
      shards: new Map([
        [0, { status: 0, ping: 42 }],
        [1, { status: 5, ping: -1 }],
      ]),
    },
    guilds: { cache: new Map([1, 2, 3, 4].map((i) => [String(i), guild(i % 2, i * 10, i !== 4)])) },
  } as unknown as Client;
}

// Guild 4 (shard 0) is unavailable: it counts neither as a guild nor for its members.
const EXPECTED = [
  { id: 0, ready: true, guilds: 1, members: 20, ping: 42 },
  { id: 1, ready: false, guilds: 2, members: 10 + 30, ping: -1 },
];

describe('shard states', () => {
  it('counts available guilds and their members per shard, with readiness and ping', () => {
    expect(shardStates(fakeClient())).toEqual(EXPECTED);
  });

  it("a shard process answers the manager's serialized question with the same count", () => {
    const client = fakeClient();
    exposeShardStates(client);
    // broadcastEval sends the function's source to the shard process and evaluates it there.
    const asked = new Function(`return (${askShardProcess.toString()});`)() as typeof askShardProcess;
    expect(asked(client)).toEqual(EXPECTED);
  });
});

describe("the manager's view of its shard processes", () => {
  it('refreshes what /readyz and /metrics read every 2 s, quietly empty while a process cannot answer', async () => {
    vi.useFakeTimers();
    try {
      let answer: ShardSnapshot['shards'][] | Error = [[EXPECTED[0]!], [EXPECTED[1]!]];
      let asked = 0;
      const manager = {
        broadcastEval: async () => {
          asked += 1;
          if (answer instanceof Error) throw answer;
          return answer;
        },
      } as unknown as ShardingManager;
      const lines: string[] = [];
      const shards = managedShards(
        manager,
        2,
        pino({ level: 'debug' }, { write: (l: string) => void lines.push(l) }),
      );
      shards.refresh.start();
      expect(shards.latest()).toEqual({
        snapshot: { expectedShards: 2, shards: [] },
        connected: true,
        guilds: 0,
      });
      await vi.advanceTimersByTimeAsync(2_000);
      expect(shards.latest()).toEqual({
        snapshot: { expectedShards: 2, shards: EXPECTED },
        connected: true,
        guilds: 3,
      });
      // A process respawning: nothing known, and nothing logged.
      answer = new Error('Shard 1 is not ready');
      await vi.advanceTimersByTimeAsync(2_000);
      expect(shards.latest().snapshot.shards).toEqual([]);
      expect(lines).toEqual([]);
      expect(asked).toBe(2);
      await shards.refresh.stop();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(asked).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('readiness and the metrics, from one view of the shards', () => {
  const snapshot = (ready: boolean[], expectedShards = ready.length): ShardSnapshot => ({
    expectedShards,
    shards: ready.map((r, id) => ({ id, ready: r, guilds: 3, members: 30, ping: 5 })),
  });

  /** The services of a process whose shards are `latest` (their store in a directory of their own). */
  async function servicesSeeing(latest: () => LatestShards) {
    const metrics = createMetrics({ defaultMetrics: false });
    const data = tempDir('shard-stats-data-');
    const services = await createServices({
      config: loadConfig({ DATA_DIR: data.path }),
      logger: createLogger({ level: 'silent' }),
      metrics,
      shards: { snapshot: () => latest().snapshot, latest },
      tasks: { stats: false, reports: false },
    });
    return {
      services,
      metrics,
      close: async () => {
        await services.close();
        data.remove();
      },
    };
  }

  it('is ready only when connected with every expected shard ready, and says which are not', async () => {
    let latest: LatestShards = { snapshot: snapshot([true, true]), connected: false, guilds: 6 };
    const { services, close } = await servicesSeeing(() => latest);
    try {
      expect(services.readiness()).toEqual({
        ready: false,
        detail: { shards: 2, expected: 2, notReady: [] },
      });
      latest = { ...latest, connected: true };
      expect(services.readiness()).toEqual({ ready: true, detail: { shards: 2, expected: 2, notReady: [] } });
      latest = { ...latest, snapshot: snapshot([true, false, true]) };
      expect(services.readiness()).toEqual({
        ready: false,
        detail: { shards: 3, expected: 3, notReady: [1] },
      });
      // A shard process not heard from yet.
      latest = { ...latest, snapshot: snapshot([true], 2) };
      expect(services.readiness()).toEqual({
        ready: false,
        detail: { shards: 1, expected: 2, notReady: [] },
      });
    } finally {
      await close();
    }
  });

  it('gives the metrics the guilds and shards of the same view', async () => {
    const { metrics, close } = await servicesSeeing(() => ({
      snapshot: snapshot([true, false]),
      connected: true,
      guilds: 7,
    }));
    try {
      const text = await metrics.registry.metrics();
      expect(text).toMatch(/^discord_guilds 7$/m);
      expect(text).toMatch(/^discord_shards\{status="ready"\} 1$/m);
      expect(text).toMatch(/^discord_shards\{status="not_ready"\} 1$/m);
    } finally {
      await close();
    }
  });
});
