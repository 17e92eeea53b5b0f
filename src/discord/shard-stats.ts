/**
 * Per-shard numbers for the statistics poster and /readyz: guilds and the sum of their member
 * counts (not the user cache, which the bot keeps empty), and whether each shard is ready.
 */
import { type Client, Status } from 'discord.js';
import type { StatsSnapshot } from '../tasks/stats-poster.js';

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
