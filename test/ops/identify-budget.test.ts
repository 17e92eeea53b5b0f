/**
 * Discord's daily identify budget at start (src/gateway/identify-budget.ts) as an operator meets
 * it: a bot killed at start again and again (a crash loop) starts while identifying its shards
 * leaves IDENTIFY_BUDGET_FLOOR identifies, then refuses in one line, exit 1, before any IDENTIFY;
 * the metrics showed what each start spent.
 */
import { describe, expect, it } from 'vitest';
import { type DiscordStandIn, startDiscordStandIn } from '../discord/index.js';
import { tempDir } from '../support/temp.js';
import {
  BotProcess,
  discordLikeToken,
  eventually,
  httpGet,
  sample,
  startedReady,
  withTimeout,
} from './helpers.js';

const SHARDS = 2;
const BUDGET = 8;
const FLOOR = 3;
const STACK_LINE = /^\s+at /m;

function identifies(discord: DiscordStandIn): number {
  return discord.gatewayLog.filter((e) => e.kind === 'identify').length;
}

describe('the identify budget at start', () => {
  it('a crash loop starts while the floor holds, then refuses in one line before identifying', async () => {
    const discord = await startDiscordStandIn({
      shards: SHARDS,
      token: discordLikeToken(),
      sessionStartLimit: BUDGET,
    });
    const data = tempDir('identify-budget');
    const env = {
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.restUrl,
      SHARD_COUNT: String(SHARDS),
      IDENTIFY_BUDGET_FLOOR: String(FLOOR),
      DATA_DIR: data.path,
      HTTP_PORT: '0',
      LOG_LEVEL: 'info',
    };
    const started: BotProcess[] = [];
    try {
      // 8 left: 6 after this start; 6 left: 4 after this one. Each is killed once ready.
      for (const remainingBefore of [BUDGET, BUDGET - SHARDS]) {
        const bot = new BotProcess('main.js', env);
        started.push(bot);
        const ready = await startedReady(bot);
        const metrics = (await httpGet(ready.port, '/metrics')).body;
        expect(sample(metrics, 'discord_identify_budget_remaining')).toBe(remainingBefore - SHARDS);
        expect(sample(metrics, 'discord_identify_budget_total')).toBe(BUDGET);
        bot.kill('SIGKILL');
        await withTimeout(bot.exited, 10_000, 'the killed bot to exit');
        // Sessions a crash loop leaves resumable spend nothing (gateway-sessions.ts): here Discord has
        // dropped them meanwhile, so every start identifies.
        await eventually(
          () => (discord.connectedShards().length === 0 ? true : undefined),
          10_000,
          'the stand-in to see the connections drop',
        );
        discord.expireDroppedSessions();
      }
      expect(identifies(discord)).toBe(2 * SHARDS);

      // 4 left: identifying 2 would leave 2, under the floor of 3.
      const refused = new BotProcess('main.js', env);
      started.push(refused);
      const exit = await withTimeout(refused.exited, 30_000, 'the refused start to exit');
      expect(exit.code).toBe(1);
      expect(refused.stderr).toBe(
        `Discord allows ${BUDGET - 2 * SHARDS} more gateway identifies of ${BUDGET} until its budget resets in ` +
          `24 h; identifying ${SHARDS} shard(s) would leave ${BUDGET - 3 * SHARDS}, under ` +
          `IDENTIFY_BUDGET_FLOOR=${FLOOR}: not starting (lower it to start anyway)`,
      );
      expect(refused.stderr).not.toMatch(STACK_LINE);
      expect(identifies(discord)).toBe(2 * SHARDS);
      expect(refused.stderr).not.toContain(discord.token);
    } finally {
      await Promise.all(started.map((bot) => bot.destroy()));
      await discord.close();
      data.remove();
    }
  }, 90_000);
});
