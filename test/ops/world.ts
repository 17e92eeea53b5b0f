/**
 * The built bot as child processes in a world of a test's own: a Discord stand-in and a directory
 * emulator on 127.0.0.1, with `postgres` a PostgreSQL schema for the store. When the test
 * finishes, every child process tree is killed, and the test fails if a token showed up in any
 * output or a process outlived the cleanup. The operations tests and the restart bench share it.
 */
import type { onTestFinished } from 'vitest';
import { type DiscordStandIn, startDiscordStandIn } from '../discord/index.js';
import { describeViolations } from '../discord/spec/conformance.js';
import { type Emulator, type EmulatorOptions, IDS, startEmulator, TOKENS } from '../emulator/index.js';
import { freshPlace, type Place } from '../store/places.js';
import { BotProcess, discordLikeToken, guildSet, leaksIn, MANY_PROCESSES_POOL } from './helpers.js';

/** What every child of the bot is given: the stand-ins' addresses and tokens, an ops port of its own. */
export function botEnv(
  discord: Pick<DiscordStandIn, 'token' | 'restUrl'>,
  emu: Pick<Emulator, 'url'>,
): Record<string, string> {
  return {
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.restUrl,
    DIRECTORY_API_URL: emu.url,
    DIRECTORY_API_VERSION: 'v2',
    DIRECTORY_TOKEN: TOKENS.serviceBot,
    HTTP_PORT: '0',
    LOG_LEVEL: 'info',
  };
}

export interface World {
  emu: Emulator;
  discord: DiscordStandIn;
  /** Sum of the member counts of every guild. */
  users: number;
  guilds: number;
  guildIds: string[];
  /** A child process, destroyed (with its whole tree) when the test ends. */
  spawn(script: 'main.js' | 'sharded.js', env: Record<string, string>): BotProcess;
  /** The PostgreSQL schema of the store, with `postgres`. */
  store: Place | undefined;
}

/**
 * A stand-in and an emulator of the test's own, and with `postgres` a PostgreSQL schema for the
 * store (the sharded mode requires it; main.js keeps SQLite in its working directory). When the
 * test finishes, every child process tree is killed, and the test fails if a token showed up in
 * any output or a process outlived the cleanup.
 */
export async function world(
  finished: typeof onTestFinished,
  options: {
    shards: number;
    guilds: number;
    emulator?: EmulatorOptions;
    maxConcurrency?: number;
    postgres?: boolean;
  },
): Promise<World> {
  const store = options.postgres ? await freshPlace('postgres') : undefined;
  const emu = await startEmulator(options.emulator ?? { rateLimits: false });
  const set = guildSet(options.guilds, [{ id: IDS.serverFresh, memberCount: 321 }]);
  const discord = await startDiscordStandIn({
    shards: options.shards,
    guilds: set.guilds,
    token: discordLikeToken(),
    ...(options.maxConcurrency ? { maxConcurrency: options.maxConcurrency } : {}),
  });
  const children: BotProcess[] = [];
  finished(async () => {
    const problems: string[] = [];
    for (const child of children) {
      await child
        .destroy()
        .catch((err: unknown) => problems.push(`cleanup of pid ${child.pid}: ${String(err)}`));
      const leaked = leaksIn(
        [{ where: `pid ${child.pid}`, text: child.output() }],
        [discord.token, TOKENS.serviceBot],
      );
      if (leaked.length > 0) problems.push(`a token appears in the output of pid ${child.pid}`);
      const alive = child.alive();
      if (alive.length > 0) problems.push(`processes left behind: ${alive.join(', ')}`);
    }
    if (discord.specViolations().length > 0) problems.push(describeViolations(discord.specViolations()));
    await discord.close();
    await emu.close();
    await store?.remove();
    if (problems.length > 0) throw new Error(problems.join('\n'));
  }, 30_000);
  return {
    emu,
    discord,
    users: set.users,
    guilds: options.guilds,
    guildIds: set.guilds.map((g) => g.id),
    store,
    spawn(script, env) {
      const pool = store ? MANY_PROCESSES_POOL : {};
      const child = new BotProcess(script, { ...botEnv(discord, emu), ...store?.env, ...pool, ...env });
      children.push(child);
      return child;
    },
  };
}
