/**
 * Which shard sends a guild's reminders and announcements (guildOwnership, src/app/bot.ts) is
 * discord.js's ShardClientUtil.shardIdForGuildId: checked here against Discord's formula, written
 * out apart (test/discord/fixtures.ts), on the IDs at the edges of the 64-bit range.
 */
import { ShardClientUtil } from 'discord.js';
import { describe, expect, it } from 'vitest';
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
