/**
 * A restart's sessions resumed before the bot has loaded (src/app/early-resume.ts), step by step
 * as the entry point takes them (main.ts, run.ts), in this process against the stand-ins, through
 * the unmodified discord.js client: the gateway's thread started first, the store opened, the
 * sessions read and resumed, and only then the bot built. Between the two, the thread holds the
 * shards alone: a command sent then is deferred by the thread itself (DEFERRAL_RULES, commands/definitions.ts)
 * within Discord's 3 s, and answered once the bot has taken the thread over; the guilds come from
 * the snapshot, a guild joined meanwhile is one join.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { resumeEarly } from '../../src/app/early-resume.js';
import { openBotStore } from '../../src/app/open-store.js';
import { loadConfig } from '../../src/config/env.js';
import { prestartGatewayThread } from '../../src/gateway/gateway-thread-start.js';
import { createLogger } from '../../src/log/logger.js';
import { GatewaySessionRepository } from '../../src/store/index.js';
import { type DiscordStandIn, discordLikeToken, makeGuild, snowflake } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { createRigBot, HandledLines, type RigBot, startRigBot, startStandIns } from '../support/rig.js';
import { tempDir } from '../support/temp.js';
import { eventually } from '../support/wait.js';
import { botEnvironment } from './harness.js';

const SHARDS = 2;
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const resumedAfter = (discord: DiscordStandIn, after: number) =>
  discord.gatewayLog.filter((e) => e.kind === 'resumed' && e.at >= after);

describe('a restart resumes its sessions before the bot has loaded', () => {
  it('the thread alone resumes, defers a command and keeps it; the bot then answers it once, with the guilds restored', async () => {
    const guilds = [
      makeGuild({ id: IDS.serverFresh, name: 'Fresh', memberCount: 321 }),
      ...Array.from({ length: 11 }, (_, i) => makeGuild({ id: snowflake(), name: `Guild ${i}` })),
    ];
    const standIns = await startStandIns({
      emulator: { rateLimits: false },
      discord: { token: discordLikeToken(), guilds, shards: SHARDS },
    });
    cleanups.push(() => standIns.close());
    const { emu, discord } = standIns;
    const data = tempDir('early-resume');
    cleanups.push(() => data.remove());
    const env = botEnvironment(emu, discord, { SHARD_COUNT: String(SHARDS), DATA_DIR: data.path });

    // The first process: ready, its sessions saved, then stopped as SIGTERM stops it.
    const first = await startRigBot({ env });
    const sessions = new GatewaySessionRepository(first.app.store);
    await eventually(
      async () =>
        (await sessions.load([0, 1], SHARDS, 60_000, Date.now())).size === SHARDS ? true : undefined,
      15_000,
      'both sessions to be saved',
    );
    const stoppedAt = performance.now();
    await first.app.stop();
    const joined = makeGuild({ id: snowflake(), name: 'Joined while down' });
    discord.addGuild(joined);

    // The next process, as its entry point starts: the thread first, then the store and the sessions.
    const thread = prestartGatewayThread();
    let second: RigBot | undefined;
    cleanups.push(async () => {
      if (second) await second.app.stop();
      else await thread.close();
    });
    const config = loadConfig(env);
    const log = new HandledLines();
    const logger = createLogger({ level: 'silent', destination: log });
    const store = await openBotStore({ config, logger });
    const read = await resumeEarly({ config, store, logger, thread });
    expect(read?.loaded.size).toBe(SHARDS);
    await eventually(
      () => (resumedAfter(discord, stoppedAt).length === SHARDS ? true : undefined),
      15_000,
      'both shards to resume, with no bot built yet',
    );
    expect(discord.gatewayLog.filter((e) => e.kind === 'identify' && e.at >= stoppedAt)).toEqual([]);

    // No bot yet: the thread defers the command by itself, within Discord's 3 s.
    const user = { id: snowflake(), username: 'early_riser' };
    const handled = log.waitFor(user.id, 20_000);
    const up = discord.sendCommand({ guildId: IDS.serverFresh, name: 'up', user });
    expect(up.delivery).toBe('sent');
    const deferral = await up.firstResponse(3_000);
    expect(deferral.type).toBe(5);

    // The bot, built on what the entry point opened and read, takes the thread over.
    second = await createRigBot({ env, log, store, gatewayThread: thread, sessions: read });
    await second.start();
    const line = await handled;
    expect(line.outcome).toBe('success');
    const ups = emu.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/v2/server'));
    expect(ups.filter((r) => (JSON.parse(r.body) as { up?: number }).up === 1)).toHaveLength(1);

    // The guilds of the snapshot, the one joined meanwhile replayed once.
    const client = second.app.client;
    expect(client.guilds.cache.size).toBe(guilds.length + 1);
    expect(client.guilds.cache.get(joined.id)?.name).toBe('Joined while down');
    expect(
      resumedAfter(discord, stoppedAt)
        .map((e) => e.shardId)
        .sort(),
    ).toEqual([0, 1]);
    expect(discord.gatewayLog.filter((e) => e.kind === 'identify' && e.at >= stoppedAt)).toEqual([]);
  }, 60_000);
});
