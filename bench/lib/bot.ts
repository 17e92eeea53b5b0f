/**
 * The real bot (createBot: discord.js client, directory client, router) between the Discord
 * stand-in and the directory emulator, all in this process on 127.0.0.1, as the end-to-end tests
 * run it. The router's "interaction handled" log line gives each interaction's outcome.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Events } from 'discord.js';
import { registry } from '../../commands/index.js';
import { type BotApp, createBot } from '../../src/bot/app.js';
import { type Environment, loadConfig } from '../../src/config/env.js';
import { createLogger } from '../../src/log/logger.js';
import {
  type DiscordStandIn,
  type GuildFixture,
  type InteractionHandle,
  type RecordedRestRequest,
  snowflake,
  startDiscordStandIn,
} from '../../test/discord/index.js';
import { type Emulator, type EmulatorOptions, startEmulator, TOKENS } from '../../test/emulator/index.js';
import { assertLocal } from './env.js';

export interface BotRig {
  emu: Emulator;
  discord: DiscordStandIn;
  bot: BotApp;
  /** Sends /up from a guild as a user of its own; resolves with what happened to it. */
  up(guildId: string, waitMs: number): { handle: InteractionHandle; done: Promise<UpRecord> };
  close(): Promise<void>;
}

export interface UpRecord {
  /** The router's outcome ('success', 'cooldown', 'error:RateLimited', 'unanswered', ...), or 'timeout'. */
  outcome: string;
  /** Deferral as Discord saw it, ms after dispatch; undefined when none was accepted. */
  firstMs: number | undefined;
  /** The final edit of @original or the follow-up, ms after dispatch; undefined when none came. */
  finalMs: number | undefined;
}

/** Editing @original (public outcome) or posting a follow-up (private outcome): the final answer. */
export function isFinalAnswer(request: RecordedRestRequest): boolean {
  if (request.status >= 300) return false;
  if (request.method === 'PATCH') return /^\/webhooks\/\d+\/[^/]+\/messages\/@original$/.test(request.path);
  return request.method === 'POST' && /^\/webhooks\/\d+\/[^/]+$/.test(request.path);
}

export async function startBotRig(options: {
  guilds: GuildFixture[];
  emulator: EmulatorOptions;
  env: Environment;
}): Promise<BotRig> {
  const emu = await startEmulator(options.emulator);
  const discord = await startDiscordStandIn({ guilds: options.guilds });
  assertLocal(emu.url, 'the directory emulator');
  assertLocal(discord.restUrl, 'the Discord stand-in');

  const waiters = new Map<string, (outcome: string) => void>();
  const destination = {
    write(line: string): void {
      if (!line.includes('"interaction handled"')) return;
      const entry = JSON.parse(line) as { userId?: string; outcome?: string };
      if (entry.userId === undefined) return;
      const resolve = waiters.get(entry.userId);
      if (resolve) {
        waiters.delete(entry.userId);
        resolve(String(entry.outcome));
      }
    },
  };
  // The bot's data directory (its journal of ups in flight): a fresh one outside the repository.
  const dataDir = mkdtempSync(join(tmpdir(), 'directory-bot-bench-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    DIRECTORY_API_URL: emu.url,
    DIRECTORY_TOKEN: TOKENS.serviceBot,
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.restUrl,
    SHARD_COUNT: '1',
    LOG_LEVEL: 'info',
    ...options.env,
  });
  const logger = createLogger({ level: config.logLevel, destination });
  const bot = createBot({ config, logger, registry, postStats: false });
  const ready = new Promise<void>((resolve) => bot.client.once(Events.ClientReady, () => resolve()));
  await bot.start();
  await ready;

  const up = (guildId: string, waitMs: number): { handle: InteractionHandle; done: Promise<UpRecord> } => {
    const userId = snowflake();
    let timer: NodeJS.Timeout | undefined;
    const outcome = new Promise<string>((resolve) => {
      waiters.set(userId, resolve);
      timer = setTimeout(() => {
        waiters.delete(userId);
        resolve('timeout');
      }, waitMs);
    });
    const handle = discord.sendCommand({
      guildId,
      name: 'up',
      user: { id: userId, username: `bench_${userId}` },
    });
    const done = outcome.then((result): UpRecord => {
      clearTimeout(timer);
      const requests = handle.requests();
      const first = requests.find((r) => r.path.endsWith('/callback') && r.status < 300);
      const final = requests.find(isFinalAnswer);
      return {
        outcome: result,
        firstMs: first ? first.at - handle.sentAt : undefined,
        finalMs: final ? final.at - handle.sentAt : undefined,
      };
    });
    return { handle, done };
  };

  return {
    emu,
    discord,
    bot,
    up,
    async close() {
      try {
        await bot.stop(5_000);
      } finally {
        await discord.close();
        await emu.close();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/** POST /server requests the directory received, and how many went without the guild's statistics. */
export function serverPosts(emu: Emulator, from = 0): { posts: number; withoutStats: number } {
  const posts = emu.requests
    .slice(from)
    .filter((r) => r.method === 'POST' && /^\/v[12]\/server$/.test(r.path));
  let withoutStats = 0;
  for (const post of posts) {
    try {
      const body = JSON.parse(post.body) as Record<string, unknown>;
      if (body.serverName === undefined) withoutStats++;
    } catch {
      withoutStats++;
    }
  }
  return { posts: posts.length, withoutStats };
}

/** Counts the connections undici (any copy: ours, @discordjs/rest's) opens to a port. */
export function countConnections(port: number): { readonly count: number; reset(): void; stop(): void } {
  let count = 0;
  const onConnected = (message: unknown): void => {
    const params = (message as { connectParams?: { port?: string | number } }).connectParams;
    if (Number(params?.port) === port) count++;
  };
  diagnosticsChannel.subscribe('undici:client:connected', onConnected);
  return {
    get count() {
      return count;
    },
    reset: () => {
      count = 0;
    },
    stop: () => diagnosticsChannel.unsubscribe('undici:client:connected', onConnected),
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
