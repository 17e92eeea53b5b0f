/**
 * Several hosts of one bot, as `npm start` runs on each machine (`node dist/src/app/main.js` with
 * SHARD_COUNT and SHARD_IDS of its own, HOST_ID host-i), sharing one PostgreSQL schema, against the
 * Discord stand-in and the directory emulator enforcing its published limits. When the test
 * finishes, every host is stopped (a frozen one woken first), and the test fails if a token showed
 * up in a host's output or a request to the stand-in broke Discord's API description. Shared by
 * test/ops/hosts.test.ts and test/ops/hosts-postgres-outage.test.ts.
 */
import type { onTestFinished } from 'vitest';
import { type DiscordStandIn, startDiscordStandIn } from '../discord/index.js';
import { describeViolations } from '../discord/spec/conformance.js';
import { type Emulator, startEmulator, TOKENS } from '../emulator/index.js';
import { freshPlace, type Place } from '../store/places.js';
import { BotProcess, discordLikeToken, guildSet, hostEnv, leaksIn, startedReady } from './helpers.js';

export interface HostsOptions {
  shardCount: number;
  /** Each host's SHARD_IDS, e.g. ['0-1', '2-3', '4-5']: host i takes ranges[i]. */
  ranges: readonly string[];
  guilds: number;
  statsIntervalMs: number;
  /** Where the hosts reach PostgreSQL (a proxy in front of it, to cut it); the shared server by default. */
  databaseUrl?: string;
  extraEnv?: Record<string, string>;
  /** Before the hosts are stopped at the end (say, a cut proxy restored, so that they stop cleanly). */
  beforeStop?: () => void;
  /** After everything of the world is closed. */
  afterStop?: () => Promise<void>;
}

export interface Hosts {
  emu: Emulator;
  discord: DiscordStandIn;
  guildIds: string[];
  /** The guilds' names and channels. */
  guilds: Map<string, { name: string; channels: Array<{ id: string }> }>;
  users: number;
  /** Starts host `i` (HOST_ID host-i, SHARD_IDS ranges[i]); resolves once its /readyz is 200. */
  start(i: number): Promise<{ bot: BotProcess; port: number }>;
  /** Host `i`'s environment. */
  envFor(i: number): Record<string, string>;
  bots: BotProcess[];
  /** The hosts' store, for the test to open (directly, not through a proxy). */
  place: Place;
}

export async function hosts(finished: typeof onTestFinished, options: HostsOptions): Promise<Hosts> {
  const store = await freshPlace('postgres', options.databaseUrl);
  // The directory's own limits stay on: a 429 would be a failure of the shared limiter.
  const emu = await startEmulator({});
  const set = guildSet(options.guilds);
  const discord = await startDiscordStandIn({
    shards: options.shardCount,
    guilds: set.guilds,
    token: discordLikeToken(),
    maxConcurrency: 16,
  });
  const bots: BotProcess[] = [];
  finished(async () => {
    const problems: string[] = [];
    options.beforeStop?.();
    for (const bot of bots) {
      // A host frozen by a test is woken, so that it can be stopped.
      bot.kill('SIGCONT');
      await bot.destroy().catch((err: unknown) => problems.push(`cleanup of pid ${bot.pid}: ${String(err)}`));
      if (
        leaksIn([{ where: `pid ${bot.pid}`, text: bot.output() }], [discord.token, TOKENS.serviceBot])
          .length > 0
      ) {
        problems.push(`a token appears in the output of pid ${bot.pid}`);
      }
    }
    if (discord.specViolations().length > 0) problems.push(describeViolations(discord.specViolations()));
    await discord.close();
    await emu.close();
    await store.remove();
    await options.afterStop?.();
    if (problems.length > 0) throw new Error(problems.join('\n'));
  }, 30_000);
  const envFor = (i: number): Record<string, string> =>
    hostEnv({
      discord,
      directoryUrl: emu.url,
      directoryToken: TOKENS.serviceBot,
      store: store.env,
      shardCount: options.shardCount,
      shardIds: options.ranges[i] as string,
      hostId: `host-${i}`,
      statsIntervalMs: options.statsIntervalMs,
      extra: options.extraEnv ?? {},
    });
  return {
    emu,
    discord,
    guildIds: set.guilds.map((g) => g.id),
    guilds: new Map(set.guilds.map((g) => [g.id, g])),
    users: set.users,
    bots,
    envFor,
    place: store,
    async start(i) {
      const bot = new BotProcess('main.js', envFor(i), `host-${i}`);
      bots.push(bot);
      const { port } = await startedReady(bot);
      return { bot, port };
    },
  };
}
