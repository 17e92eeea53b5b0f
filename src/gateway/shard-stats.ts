/**
 * Per-shard numbers for the statistics poster, /readyz and /metrics: guilds and the sum of their
 * member counts (not the user cache, which the bot keeps empty), and whether each shard is ready.
 * Counted in one place, shardStates, whether the shards run in this process or in the shard
 * processes of a sharding manager (which asks each process over IPC).
 */
import { type Client, type ShardingManager, Status } from 'discord.js';
import type { Logger } from '../log/logger.js';
import { PeriodicTask } from '../tasks/periodic.js';
import type { StatsSnapshot } from '../tasks/stats-snapshot.js';

export interface ShardState {
  id: number;
  ready: boolean;
  guilds: number;
  members: number;
  /** Last heartbeat round trip in ms, -1 before the first. */
  ping: number;
}

/** What the statistics poster takes, with each shard's ping for the metrics. */
export type ShardSnapshot = StatsSnapshot & { shards: ShardState[] };

/** What /readyz and /metrics read at every probe and scrape: the last known, without waiting. */
export interface LatestShards {
  snapshot: ShardSnapshot;
  /** Whether the Discord client (or every shard process) has finished connecting. */
  connected: boolean;
  /** Guilds the bot is in. */
  guilds: number;
}

/** Where a process sees the bot's shards from: its own client, or the manager's shard processes. */
export interface ShardView {
  /** Every shard, asked afresh (for each statistics post); may reject while a process spawns. */
  snapshot(): Promise<ShardSnapshot> | ShardSnapshot;
  latest(): LatestShards;
}

/** The shards this process runs, in one pass over the guild cache. */
export function shardStates(client: Client): ShardState[] {
  const ids = Array.isArray(client.options.shards) ? client.options.shards : [...client.ws.shards.keys()];
  const states = new Map<number, ShardState>();
  for (const id of ids) {
    const shard = client.ws.shards.get(id);
    states.set(id, {
      id,
      ready: shard?.status === Status.Ready,
      guilds: 0,
      members: 0,
      ping: shard?.ping ?? -1,
    });
  }
  for (const guild of client.guilds.cache.values()) {
    const state = states.get(guild.shardId);
    if (!state || !guild.available) continue;
    state.guilds += 1;
    state.members += guild.memberCount ?? 0;
  }
  return [...states.values()];
}

/** One process with internal shards: it runs every shard of the bot. */
export function localSnapshot(client: Client): ShardSnapshot {
  const shards = shardStates(client);
  const expected = typeof client.options.shardCount === 'number' ? client.options.shardCount : shards.length;
  return { expectedShards: Math.max(expected, shards.length), shards };
}

/** The shards of a process that runs them all (or, in a shard process, its own). */
export function localShards(client: Client): ShardView {
  return {
    snapshot: () => localSnapshot(client),
    latest: () => ({
      snapshot: localSnapshot(client),
      connected: client.isReady(),
      guilds: client.guilds.cache.size,
    }),
  };
}

/** How a shard process answers the manager: a method on its client (see exposeShardStates). */
interface ShardStatesHost {
  shardStatesOfProcess(): ShardState[];
}

/**
 * In a shard process: lets the manager count this process's shards with shardStates. The
 * manager's broadcastEval serializes its function and runs it here, so that function can import
 * nothing; it calls this method of the client instead.
 */
export function exposeShardStates(client: Client): void {
  const value: ShardStatesHost['shardStatesOfProcess'] = () => shardStates(client);
  // Not enumerable: nothing that walks the client's own properties (toJSON) meets it.
  Object.defineProperty(client, 'shardStatesOfProcess' satisfies keyof ShardStatesHost, { value });
}

/** Serialized by broadcastEval and run in each shard process: it may use nothing of this module. */
export function askShardProcess(client: Client): ShardState[] {
  return (client as unknown as ShardStatesHost).shardStatesOfProcess();
}

/** Refresh period of what the manager's /readyz and /metrics read. */
const REFRESH_MS = 2_000;

/**
 * The manager's view of the shard processes it spawned: asked over IPC for each statistics post,
 * and every 2 s for /readyz and /metrics (which cannot wait for an answer): `refresh`, a task
 * of its own.
 */
export function managedShards(
  manager: ShardingManager,
  totalShards: number,
  logger: Logger,
): ShardView & { refresh: PeriodicTask } {
  const none: ShardSnapshot = { expectedShards: totalShards, shards: [] };
  const snapshot = async (): Promise<ShardSnapshot> => {
    // Rejects while a process is still spawning or has died: the poster skips that tick.
    const perProcess = await manager.broadcastEval(askShardProcess);
    return { expectedShards: totalShards, shards: perProcess.flat() };
  };
  let last = none;
  const refresh = new PeriodicTask({
    name: 'shard refresh',
    everyMs: REFRESH_MS,
    firstDelayMs: REFRESH_MS,
    // Not an error worth a line: a process still spawning, or respawning, cannot answer yet.
    run: () =>
      snapshot().then(
        (s) => {
          last = s;
        },
        () => {
          last = none;
        },
      ),
    failure: 'could not count the shard processes',
    logger,
  });
  return {
    snapshot,
    latest: () => ({
      snapshot: last,
      connected: true,
      guilds: last.shards.reduce((n, s) => n + s.guilds, 0),
    }),
    refresh,
  };
}
