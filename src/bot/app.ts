/**
 * The bot assembled: discord.js client, directory client, router and server reports, wired to
 * the gateway events. main.ts, the sandbox and the end-to-end tests all build it through here.
 */
import { ChannelType, type Client, Events, type Guild, type GuildBasedChannel } from 'discord.js';
import type { Config } from '../config/env.js';
import { DirectoryClient } from '../directory/client.js';
import type { Logger } from '../log/logger.js';
import { type GuildReport, ServerReporter } from '../tasks/server-reports.js';
import { createDiscordClient, type DiscordClientOptions } from './discord-client.js';
import { createRouter, type Router, type RouterHooks } from './router.js';
import type { BotDeps, Registry } from './types.js';

export interface BotOptions {
  config: Config;
  logger: Logger;
  registry: Registry;
  directory?: DirectoryClient;
  discord?: DiscordClientOptions;
  now?: () => number;
  gatherTimeoutMs?: number;
  hooks?: RouterHooks;
  /** The token was refused or the session cannot go on: the process should end. */
  onFatal?: (reason: string) => void;
}

export interface BotApp {
  client: Client;
  directory: DirectoryClient;
  router: Router;
  reporter: ServerReporter;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Gateway close codes after which discord.js will not reconnect and the operator must act. */
const FATAL_CLOSE_CODES: Record<number, string> = {
  4004: 'Discord rejected the bot token (gateway close 4004): check DISCORD_TOKEN',
  4010: 'Discord rejected the shard configuration (gateway close 4010): check SHARD_COUNT',
  4011: 'Discord requires sharding for this many guilds (gateway close 4011)',
  4013: 'Discord rejected the intents (gateway close 4013)',
  4014: 'Discord refused the intents as not allowed (gateway close 4014)',
};

/** A channel the report can name: the system channel, or the first text channel. */
function reportChannel(guild: Guild): { id: string; name: string } {
  const system = guild.systemChannel;
  if (system) return { id: system.id, name: system.name };
  const text = guild.channels.cache.find((c: GuildBasedChannel) => c.type === ChannelType.GuildText);
  return text ? { id: text.id, name: text.name } : { id: guild.id, name: guild.name };
}

export function guildReport(guild: Guild, botPresent: boolean, botUserId: string): GuildReport {
  const channel = reportChannel(guild);
  const icon = guild.iconURL({ size: 512, extension: 'webp' });
  return {
    guildId: guild.id,
    botPresent,
    name: guild.name,
    ...(icon ? { avatar: icon } : {}),
    ...(guild.memberCount ? { membersAll: guild.memberCount } : {}),
    ownerId: guild.ownerId,
    reporterUserId: botUserId,
    channelId: channel.id,
    channelName: channel.name,
  };
}

export function createBot(options: BotOptions): BotApp {
  const { config, logger } = options;
  const directory =
    options.directory ??
    new DirectoryClient({
      baseUrl: config.directory.baseUrl,
      version: config.directory.version,
      token: config.directory.token,
      tokenKind: config.directory.tokenKind,
      timeoutMs: config.directory.timeoutMs,
      maxRetries: config.directory.maxRetries,
      rateLimits: config.directory.rateLimits,
    });
  const client = createDiscordClient({ apiUrl: config.discord.apiUrl, ...options.discord });
  const deps: BotDeps = {
    directory,
    logger,
    now: options.now ?? Date.now,
    gatherTimeoutMs: options.gatherTimeoutMs ?? 2_000,
  };
  const router = createRouter(options.registry, deps, options.hooks);
  const reporter = new ServerReporter({ directory, logger: logger.child({ task: 'server-reports' }) });

  client.on(Events.InteractionCreate, (interaction) => {
    void router.handle(interaction);
  });
  client.once(Events.ClientReady, (ready) => {
    logger.info(
      { user: ready.user.tag, guilds: ready.guilds.cache.size, shards: ready.ws.shards.size },
      'connected to Discord',
    );
  });
  client.on(Events.GuildCreate, (guild) => {
    logger.info({ guildId: guild.id, members: guild.memberCount }, 'joined a guild');
    reporter.report(guildReport(guild, true, client.user?.id ?? guild.client.user.id));
  });
  client.on(Events.GuildDelete, (guild) => {
    // discord.js emits GuildUnavailable, not GuildDelete, for an outage: this is a real leave.
    logger.info({ guildId: guild.id }, 'left a guild');
    reporter.report(guildReport(guild, false, client.user?.id ?? guild.client.user.id));
  });
  client.on(Events.ShardDisconnect, (event, shardId) => {
    const fatal = FATAL_CLOSE_CODES[event.code];
    if (fatal) {
      logger.fatal({ shardId, code: event.code }, fatal);
      options.onFatal?.(fatal);
    } else {
      logger.warn({ shardId, code: event.code }, 'shard disconnected');
    }
  });
  client.on(Events.ShardResume, (shardId, replayed) => logger.info({ shardId, replayed }, 'shard resumed'));
  client.on(Events.ShardReconnecting, (shardId) => logger.info({ shardId }, 'shard reconnecting'));
  client.on(Events.Warn, (message) => logger.warn({ source: 'discord.js' }, message));
  client.on(Events.Error, (err) => logger.error({ err }, 'discord.js error'));

  let stopped = false;
  return {
    client,
    directory,
    router,
    reporter,
    async start() {
      if (!config.discord.token) throw new Error('DISCORD_TOKEN is not set');
      await client.login(config.discord.token);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await reporter.stop();
      await client.destroy();
      await directory.close();
    },
  };
}
