/**
 * The real bot (createBot: discord.js client, directory client, router) between the Discord
 * stand-in and the directory emulator, on 127.0.0.1. Two rigs: `startBotRig` keeps everything in
 * this process, as the end-to-end tests run it; `startIsolatedBotRig` runs the stand-ins in child
 * processes, so this process holds the bot alone (plus the bench's bookkeeping), as in
 * production. Both put the bot on the rig of the tests (test/support/rig.ts), whose wait for the
 * router's "interaction handled" line gives each interaction's outcome.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BotApp } from '../../src/app/bot.js';
import { type Environment, loadConfig } from '../../src/config/env.js';
import { DirectoryClient, type DirectoryClientOptions } from '../../src/directory/index.js';
import {
  DISCORD_GLOBAL_LIMIT,
  type DiscordStandIn,
  type GuildFixture,
  type InteractionHandle,
  snowflake,
} from '../../test/discord/index.js';
import type { Emulator, EmulatorOptions } from '../../test/emulator/index.js';
import {
  type RigBot,
  rigEnvironment,
  START_BOUND_MS,
  startRigBot,
  startStandIns,
} from '../../test/support/rig.js';
import type { Keystroke, StandInStarted, UpCommand } from '../workers/discord-stand-in.js';
import type { EmulatorChildOptions } from '../workers/emulator.js';
import { forkRpc } from './ipc.js';
import { type UpTimings, upTimings } from './records.js';

export interface UpRecord extends UpTimings {
  /** The router's outcome ('success', 'cooldown', 'error:RateLimited', 'unanswered', ...), or 'timeout'. */
  outcome: string;
}

/** The bot's login and READY with every guild of a scenario (thousands), on a busy machine. */
const BENCH_START_BOUND_MS = 5 * START_BOUND_MS;

interface BotUnderTest {
  bot: BotApp;
  /** The outcome the router logs for the interaction of this user, or 'timeout' after `waitMs`. */
  outcome(userId: string, waitMs: number): Promise<string>;
  close(): Promise<void>;
}

async function startBot(options: {
  discordRestUrl: string;
  discordToken: string;
  directoryUrl: string;
  env: Environment;
  onRateLimitGrant?: DirectoryClientOptions['onRateLimitGrant'];
}): Promise<BotUnderTest> {
  // The bot's data directory (its store): a fresh one outside the repository.
  const dataDir = mkdtempSync(join(tmpdir(), 'directory-bot-bench-'));
  const env = rigEnvironment(
    {
      directoryUrl: options.directoryUrl,
      discordRestUrl: options.discordRestUrl,
      discordToken: options.discordToken,
      dataDir,
    },
    { SHARD_COUNT: '1', LOG_LEVEL: 'info', ...options.env },
  );
  let rig: RigBot;
  try {
    const directory = options.onRateLimitGrant
      ? new DirectoryClient({ ...loadConfig(env).directory, onRateLimitGrant: options.onRateLimitGrant })
      : undefined;
    // The store opens here, as in production: a SQLite file in the fresh data directory. The log
    // keeps nothing but the waits (no secret scrubbing: the bench's numbers stay those of before).
    rig = await startRigBot(
      { env, scrubSecrets: false, postStats: false, ...(directory ? { directory } : {}) },
      BENCH_START_BOUND_MS,
    );
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const bot = rig.app;
  return {
    bot,
    outcome: (userId, waitMs) =>
      rig.handled.waitFor(userId, waitMs).then(
        (line) => String(line.outcome),
        () => 'timeout',
      ),
    async close() {
      try {
        await bot.stop(5_000);
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

export interface BotRig {
  emu: Emulator;
  discord: DiscordStandIn;
  bot: BotApp;
  /** Sends /up from a guild as a user of its own; resolves with what happened to it. */
  up(guildId: string, waitMs: number): { handle: InteractionHandle; done: Promise<UpRecord> };
  close(): Promise<void>;
}

/** Everything in this process: the bot competes with the stand-ins for one event loop. */
export async function startBotRig(options: {
  guilds: GuildFixture[];
  emulator: EmulatorOptions;
  env: Environment;
  /** Told each time the bot's directory client lets a request go. */
  onRateLimitGrant?: DirectoryClientOptions['onRateLimitGrant'];
  /** Dispatches each gateway session of the stand-in keeps for a RESUME (a long run keeps fewer). */
  sessionReplayMax?: number;
}): Promise<BotRig> {
  const {
    emu,
    discord,
    close: closeStandIns,
  } = await startStandIns({
    emulator: options.emulator,
    discord: {
      guilds: options.guilds,
      globalRateLimit: DISCORD_GLOBAL_LIMIT,
      ...(options.sessionReplayMax ? { sessionReplayMax: options.sessionReplayMax } : {}),
    },
  });
  let botUnderTest: BotUnderTest;
  try {
    botUnderTest = await startBot({
      discordRestUrl: discord.restUrl,
      discordToken: discord.token,
      directoryUrl: emu.url,
      env: options.env,
      ...(options.onRateLimitGrant ? { onRateLimitGrant: options.onRateLimitGrant } : {}),
    });
  } catch (err) {
    await closeStandIns();
    throw err;
  }

  const up = (guildId: string, waitMs: number): { handle: InteractionHandle; done: Promise<UpRecord> } => {
    const userId = snowflake();
    const outcome = botUnderTest.outcome(userId, waitMs);
    const handle = discord.sendCommand({
      guildId,
      name: 'up',
      user: { id: userId, username: `bench_${userId}` },
    });
    const done = outcome.then((result): UpRecord => ({ outcome: result, ...upTimings(handle) }));
    return { handle, done };
  };

  return {
    emu,
    discord,
    bot: botUnderTest.bot,
    up,
    async close() {
      try {
        await botUnderTest.close();
      } finally {
        await closeStandIns();
      }
    },
  };
}

export interface IsolatedBotRig {
  bot: BotApp;
  /** The Discord stand-in's REST base (its origin is Discord's, for the traces' Discord spans). */
  discordRestUrl: string;
  /**
   * Sends /up from a guild as a user of its own; resolves with the router's outcome as soon as it
   * is logged (the times are read afterwards, with `records`). Calls made in one turn of the event
   * loop reach the stand-in together and are dispatched in one go.
   */
  up(guildId: string, waitMs: number): Promise<{ userId: string; outcome: string }>;
  /** Sends /bot `ref` from a guild, as up() does /up. */
  lookUp(guildId: string, ref: string, waitMs: number): Promise<{ userId: string; outcome: string }>;
  /** The times of these ups, from the stand-in, in one call. */
  records(ups: ReadonlyArray<{ userId: string; outcome: string }>): Promise<UpRecord[]>;
  /**
   * One keystroke for each of these users at once (autocomplete of /bot's `ref`); resolves when
   * every one is answered; `timings(keys)` gives their times after.
   */
  type(keystrokes: Keystroke[]): Promise<void>;
  /** The times of these interactions (by `userId` for ups, by `key` for keystrokes). */
  timings(keys: readonly string[]): Promise<UpTimings[]>;
  /** Connections the Discord stand-in has accepted for REST so far. */
  restConnections(): Promise<number>;
  /** 429s the Discord stand-in has answered so far (Discord's global limit, 50 a second). */
  discordTooMany(): Promise<number>;
  /** Requests the directory has received so far (a mark for serverPosts). */
  directoryRequests(): Promise<number>;
  /** `METHOD /path` of the directory's requests from the `from`th on. */
  directoryRequestPaths(from: number): Promise<string[]>;
  serverPosts(from: number): Promise<{ posts: number; withoutStats: number }>;
  close(): Promise<void>;
}

/** The Discord stand-in and the emulator each in a child process; the bot in this one. */
export async function startIsolatedBotRig(options: {
  guilds: GuildFixture[];
  emulator: EmulatorChildOptions;
  env: Environment;
}): Promise<IsolatedBotRig> {
  const forked = await Promise.allSettled([
    forkRpc('bench/workers/discord-stand-in.js'),
    forkRpc('bench/workers/emulator.js'),
  ]);
  const [discordChild, directoryChild] = forked;
  if (discordChild.status === 'rejected' || directoryChild.status === 'rejected') {
    await Promise.all(forked.map((f) => (f.status === 'fulfilled' ? f.value.stop() : undefined)));
    throw forked.find((f) => f.status === 'rejected')?.reason;
  }
  const discord = discordChild.value;
  const directory = directoryChild.value;
  let botUnderTest: BotUnderTest;
  let discordRestUrl: string;
  try {
    const [standIn, directoryUrl] = await Promise.all([
      discord.call<StandInStarted>('start', options.guilds),
      directory.call<string>('start', options.emulator),
    ]);
    discordRestUrl = standIn.restUrl;
    botUnderTest = await startBot({
      discordRestUrl: standIn.restUrl,
      discordToken: standIn.token,
      directoryUrl,
      env: options.env,
    });
  } catch (err) {
    await Promise.all([discord.stop(), directory.stop()]);
    throw err;
  }

  // One IPC message per turn: the calls pooled() makes at once stay one burst at the stand-in.
  let batch: UpCommand[] = [];
  let batchSent: Promise<void> | undefined;
  const send = (command: UpCommand): Promise<void> => {
    if (!batchSent) {
      batchSent = new Promise<void>((resolve, reject) => {
        setImmediate(() => {
          const commands = batch;
          batch = [];
          batchSent = undefined;
          discord.call<void>('send', commands).then(resolve, reject);
        });
      });
    }
    batch.push(command);
    return batchSent;
  };

  return {
    bot: botUnderTest.bot,
    discordRestUrl,
    async up(guildId, waitMs) {
      const userId = snowflake();
      const outcome = botUnderTest.outcome(userId, waitMs);
      await send({ guildId, userId });
      return { userId, outcome: await outcome };
    },
    async lookUp(guildId, ref, waitMs) {
      const userId = snowflake();
      const outcome = botUnderTest.outcome(userId, waitMs);
      await send({ guildId, userId, bot: ref });
      return { userId, outcome: await outcome };
    },
    async records(ups) {
      const timings = await discord.call<UpTimings[]>(
        'timings',
        ups.map((u) => u.userId),
      );
      return ups.map((u, i) => ({
        outcome: u.outcome,
        firstMs: undefined,
        firstReadMs: undefined,
        finalMs: undefined,
        ...timings[i],
      }));
    },
    type: (keystrokes) => discord.call<void>('type', keystrokes),
    timings: (keys) => discord.call<UpTimings[]>('timings', [...keys]),
    restConnections: () => discord.call<number>('restConnections'),
    discordTooMany: () => discord.call<number>('tooMany'),
    directoryRequests: () => directory.call<number>('requestCount'),
    directoryRequestPaths: (from) => directory.call<string[]>('requestPaths', from),
    serverPosts: (from) => directory.call<{ posts: number; withoutStats: number }>('serverPosts', from),
    async close() {
      try {
        await botUnderTest.close();
      } finally {
        await Promise.allSettled([discord.call('close'), directory.call('close')]);
        await Promise.all([discord.stop(), directory.stop()]);
      }
    },
  };
}

/** Runs `total` jobs with at most `inFlight` at a time. */
export async function pooled(
  total: number,
  inFlight: number,
  job: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) await job(next++);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, total) }, worker));
}
