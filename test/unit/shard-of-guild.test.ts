/**
 * Which process sends a guild's reminders (ShardOwnership, src/hosts/ownership.ts): the guild's
 * shard is discord.js's ShardClientUtil.shardIdForGuildId, checked here against Discord's formula,
 * written out apart (test/discord/fixtures.ts), on the IDs at the edges of the 64-bit range.
 */
import { ShardClientUtil } from 'discord.js';
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/env.js';
import { ShardOwnership } from '../../src/hosts/ownership.js';
import { shardForGuild } from '../discord/fixtures.js';

const IDS = ['0', '4194303', '4194304', '81384788765712384', '1234567890123456789', '18446744073709551615'];

describe('ShardClientUtil.shardIdForGuildId', () => {
  it("is Discord's (guild_id >> 22) % shard count, to the largest snowflake", () => {
    for (const id of IDS) {
      for (const count of [1, 2, 3, 7, 16, 1000]) {
        expect(ShardClientUtil.shardIdForGuildId(id, count), `${id} on ${count}`).toBe(
          shardForGuild(id, count),
        );
      }
    }
    expect(ShardClientUtil.shardIdForGuildId('18446744073709551615', 1000)).toBe(
      Number((18446744073709551615n >> 22n) % 1000n),
    );
  });
});

describe('ShardOwnership', () => {
  const base: Config['sharding'] = {
    shardCount: 4,
    isChild: false,
    childShards: [],
    hostShards: undefined,
    hostId: 'host-a',
    hostGoneAfterMs: 60_000,
  } as unknown as Config['sharding'];
  /** A guild on each of the 4 shards. */
  const guildOn = (shard: number) =>
    IDS_BY_SHARD.find((id) => ShardClientUtil.shardIdForGuildId(id, 4) === shard) as string;
  const IDS_BY_SHARD = Array.from({ length: 64 }, (_, i) => String((BigInt(i) << 22n) + 7n));

  it('the single process sends every guild and journals as "main"', () => {
    const ownership = new ShardOwnership(base, () => 4);
    expect(ownership.guildFilter()).toBeUndefined();
    expect(ownership.journalOwner()).toBe('main');
  });

  it("a shard process sends its shards' guilds only; a bad id is nobody's", () => {
    const ownership = new ShardOwnership({ ...base, isChild: true, childShards: [1, 2] }, () => 4);
    const owns = ownership.guildFilter();
    expect([0, 1, 2, 3].map((shard) => owns?.(guildOn(shard)))).toEqual([false, true, true, false]);
    expect(owns?.('not-an-id')).toBe(false);
    expect(ownership.journalOwner()).toBe('shards-1-2');
  });

  it("a host of several takes a gone host's shards while it is gone, and journals under its id", () => {
    const ownership = new ShardOwnership({ ...base, hostShards: [0] }, () => 4);
    const owns = ownership.guildFilter();
    expect(owns?.(guildOn(3))).toBe(false);
    ownership.setOrphans([3]);
    expect(owns?.(guildOn(3))).toBe(true);
    ownership.setOrphans([]);
    expect(owns?.(guildOn(3))).toBe(false);
    expect(ownership.journalOwner()).toBe('host:host-a');
  });
});
