/**
 * Two processes with one HOST_ID (cloned machines, whose default HOST_ID, the machine's name, is
 * the same): the second is refused in one line, and the first keeps its shards and the lead. As
 * `npm start` runs on each machine (`node dist/src/app/main.js` with SHARD_IDS), against the
 * Discord stand-in and the directory emulator, on one PostgreSQL schema.
 */
import { describe, it } from 'vitest';
import { startDiscordStandIn } from '../discord/index.js';
import { startEmulator, TOKENS } from '../emulator/index.js';
import { freshPlace } from '../store/places.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import {
  BotProcess,
  discordLikeToken,
  eventually,
  guildSet,
  hostEnv,
  httpGet,
  readyz,
  START_BOUND_MS,
  sample,
  startedReady,
  withTimeout,
} from './helpers.js';

describe.skipIf(!HAS_POSTGRES)('one HOST_ID, two processes (SHARD_IDS)', () => {
  it(
    'refuses the second in one line naming HOST_ID; the first runs on and leads',
    async ({ expect, onTestFinished }) => {
      const store = await freshPlace('postgres');
      const emu = await startEmulator({});
      const discord = await startDiscordStandIn({
        shards: 2,
        guilds: guildSet(10).guilds,
        token: discordLikeToken(),
        maxConcurrency: 16,
      });
      const bots: BotProcess[] = [];
      onTestFinished(async () => {
        for (const bot of bots) await bot.destroy();
        await discord.close();
        await emu.close();
        await store.remove();
      }, 30_000);
      const env = hostEnv({
        discord,
        directoryUrl: emu.url,
        directoryToken: TOKENS.serviceBot,
        store: store.env,
        shardCount: 2,
        shardIds: '0-1',
        hostId: 'cloned-vm',
        statsIntervalMs: 3_000,
      });
      const first = new BotProcess('main.js', env, 'first');
      bots.push(first);
      const { port } = await startedReady(first);
      const leaderOn = async () => sample((await httpGet(port, '/metrics')).body, 'bot_stats_leader') === 1;
      await eventually(
        async () => ((await leaderOn()) ? true : undefined),
        15_000,
        'the first process to lead',
      );

      const second = new BotProcess('main.js', env, 'second');
      bots.push(second);
      const exit = await withTimeout(second.exited, START_BOUND_MS, 'the second process to exit');
      expect(exit.code).toBe(1);
      expect(second.stderr.trim()).toMatch(
        /^This host \(HOST_ID=cloned-vm\) may not start: another live process holds that name \(it wrote its shards \d+ s ago\)\. Give each host its own HOST_ID \(by default the machine's name, which cloned machines share\)$/,
      );
      // It connected nothing: every IDENTIFY is the first process's.
      expect(discord.gatewayLog.filter((e) => e.kind === 'identify')).toHaveLength(2);

      // The first runs on, ready, leading, and never lost its shards or the lead.
      expect(first.exit).toBeUndefined();
      expect((await readyz(port)).status).toBe(200);
      expect(await leaderOn()).toBe(true);
      const said = first.entries().map((e) => e.msg);
      expect(said).not.toContain('this host no longer leads the statistics posts');
      expect(
        said.filter((m) => m?.startsWith('another host (or another process with this HOST_ID)')),
      ).toEqual([]);
    },
    START_BOUND_MS + 90_000,
  );
});
