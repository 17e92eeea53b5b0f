/**
 * The bot assembled: discord.js client, directory client, router and server reports, wired to
 * the gateway events. main.ts, the sandbox and the end-to-end tests all build it through here.
 */
import { type Client, DefaultUserAgent, Events, type Guild } from 'discord.js';
import type { Config } from '../config/env.js';
import { DirectoryClient } from '../directory/index.js';
import { InteractionAcknowledger } from '../discord/acknowledge.js';
import type { ChannelNames, ReportChannel } from '../discord/channel-names.js';
import { createDiscordClient, type DiscordClientOptions } from '../discord/client.js';
import { discordLookups } from '../discord/lookups.js';
import { createDiscordRestAgent } from '../discord/rest-agent.js';
import { localSnapshot, shardStates } from '../discord/shard-stats.js';
import { FileUpJournal, type UpJournal } from '../features/up/journal.js';
import { recoverPendingUps } from '../features/up/recover.js';
import { createRouter, type Router, type RouterHooks } from '../interactions/router.js';
import type { BotDeps, Registry } from '../interactions/types.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../ops/metrics.js';
import type { Readiness } from '../ops/server.js';
import { type GuildReport, ServerReporter } from '../tasks/server-reports.js';
import { StatsPoster, type StatsPosterOptions } from '../tasks/stats-poster.js';

export interface BotOptions {
  config: Config;
  logger: Logger;
  registry: Registry;
  directory?: DirectoryClient;
  discord?: DiscordClientOptions;
  now?: () => number;
  /** How long a Discord look-up (an up's guild statistics, a user's name) may take. */
  gatherTimeoutMs?: number;
  hooks?: RouterHooks;
  /** The token was refused or the session cannot go on: the process should end. */
  onFatal?: (reason: string) => void;
  metrics?: Metrics;
  /** Post statistics from this process (not in a shard process: the manager posts for all). */
  postStats?: boolean;
  /** Where ups in flight are journaled; default: a file in DATA_DIR. */
  journal?: UpJournal;
  /** Overrides for the poster (tests shorten its delays). */
  stats?: Partial<Omit<StatsPosterOptions, 'directory' | 'logger' | 'snapshot'>>;
}

export interface BotApp {
  client: Client;
  /** What the bot keeps of channels, discord.js keeping none (channel-names.ts). */
  channels: ChannelNames;
  directory: DirectoryClient;
  router: Router;
  reporter: ServerReporter;
  poster: StatsPoster | undefined;
  /** Every shard of this process ready (for /readyz), with the shards that are not. */
  readiness(): Readiness;
  start(): Promise<void>;
  /** Stops taking interactions, lets those in flight finish (bounded), stops every task and timer. */
  stop(drainMs?: number): Promise<void>;
}

const DESTROY_BOUND_MS = 2_000;

/** Gateway close codes after which discord.js will not reconnect and the operator must act. */
const FATAL_CLOSE_CODES: Record<number, string> = {
  4004: 'Discord rejected the bot token (gateway close 4004): check DISCORD_TOKEN',
  4010: 'Discord rejected the shard configuration (gateway close 4010): check SHARD_COUNT',
  4011: 'Discord requires sharding for this many guilds (gateway close 4011)',
  4013: 'Discord rejected the intents (gateway close 4013)',
  4014: 'Discord refused the intents as not allowed (gateway close 4014)',
};

/**
 * A server report. `channel` is the one the report names (the system channel, else the first text
 * channel: ChannelNames); without one the report names the guild itself.
 */
export function guildReport(
  guild: Guild,
  botPresent: boolean,
  botUserId: string,
  channel: ReportChannel | undefined,
): GuildReport {
  const icon = guild.iconURL({ size: 512, extension: 'webp' });
  return {
    guildId: guild.id,
    botPresent,
    name: guild.name,
    ...(icon ? { avatar: icon } : {}),
    ...(guild.memberCount ? { membersAll: guild.memberCount } : {}),
    ownerId: guild.ownerId,
    reporterUserId: botUserId,
    channelId: channel?.id ?? guild.id,
    channelName: channel?.name ?? guild.name,
  };
}

export function createBot(options: BotOptions): BotApp {
  const { config, logger } = options;
  const { metrics } = options;
  const directory =
    options.directory ??
    new DirectoryClient({
      ...config.directory,
      ...(metrics ? { onRequest: metrics.directoryRequest, onRateLimitGrant: metrics.rateLimitGrant } : {}),
    });
  const sharding = config.sharding;
  // Ours, so that stop() can close its keep-alive connections.
  const restAgent = createDiscordRestAgent();
  const { client, channels, interactions } = createDiscordClient({
    apiUrl: config.discord.apiUrl,
    // A shard process takes its shards from the manager (discord.js reads them itself).
    shards: sharding.isChild ? 'managed' : sharding.shardCount,
    onChannelNamesError: (err, event) => logger.warn({ err, event }, 'gateway dispatch not understood'),
    restAgent,
    ...options.discord,
  });
  // Shard processes share DATA_DIR: each keeps the journal of its own shards.
  const journal =
    options.journal ??
    new FileUpJournal(
      config.dataDir,
      sharding.isChild ? `pending-ups-shards-${sharding.childShards.join('-')}` : 'pending-ups',
    );
  const deps: BotDeps = {
    directory,
    discord: discordLookups(client, channels, options.gatherTimeoutMs ?? 2_000),
    logger,
    now: options.now ?? Date.now,
    journal,
  };
  const hooks: RouterHooks = {
    onHandled: (event) => {
      metrics?.interaction(event);
      options.hooks?.onHandled?.(event);
    },
  };
  // Deferrals go out from the gateway packet on connections of their own (acknowledge.ts).
  const rest = client.rest.options;
  const acknowledger = new InteractionAcknowledger({
    api: rest.api,
    version: rest.version,
    userAgent: `${DefaultUserAgent} ${rest.userAgentAppendix}`.trim(),
  });
  const router = createRouter(options.registry, deps, hooks, acknowledger);
  // Short stop bounds: the whole shutdown has to fit in Docker's 10 s.
  const reporter = new ServerReporter({
    directory,
    logger,
    stopTimeoutMs: 1_500,
  });
  if (metrics) reporter.onResult = metrics.serverReport;
  const poster =
    options.postStats === false
      ? undefined
      : new StatsPoster({
          directory,
          logger,
          snapshot: () => localSnapshot(client),
          intervalMs: config.stats.intervalMs,
          firstDelayMs: config.stats.firstDelayMs,
          stopTimeoutMs: 1_500,
          ...options.stats,
        });
  if (poster && metrics) poster.onOutcome = (outcome) => metrics.statsPost(outcome);
  metrics?.setDiscordSource(() => ({ guilds: client.guilds.cache.size, shards: shardStates(client) }));

  // Each interaction's packet, as soon as its shard has read it, before discord.js builds it.
  interactions.onInteraction = (data) => router.acknowledge(data);
  interactions.onError = (err, event) => logger.error({ err, event }, 'discord.js failed on a gateway event');
  client.on(Events.InteractionCreate, (interaction) => {
    void router.handle(interaction);
  });
  client.once(Events.ClientReady, (ready) => {
    logger.info(
      { user: ready.user.tag, guilds: ready.guilds.cache.size, shards: ready.ws.shards.size },
      'connected to Discord',
    );
    // The poster checks itself that every shard is ready before it posts.
    poster?.start();
    void recoverPendingUps({ journal, directory, rest: client.rest, logger, now: deps.now });
  });
  // Server reports need the directory token; without one they would only fill the log with refusals.
  const reports = config.directory.token !== undefined;
  /** Joins whose statistics are being gathered; a leave (or a newer join) takes the entry away. */
  const joining = new Map<string, symbol>();
  client.on(Events.GuildCreate, (guild) => {
    logger.info({ guildId: guild.id, members: guild.memberCount }, 'joined a guild');
    if (!reports) return;
    const botUserId = client.user?.id ?? guild.client.user.id;
    // Read now: a leave while the statistics are gathered makes ChannelNames forget the guild.
    const report = guildReport(guild, true, botUserId, channels.reportChannel(guild.id));
    const join = Symbol(guild.id);
    joining.set(guild.id, join);
    // The same statistics an up sends (approximate counts, icon, owner tag), bounded in time.
    void deps.discord
      .guildStats(guild.id, (err) =>
        logger.debug({ err, guildId: guild.id }, 'guild statistics not gathered for the report'),
      )
      .then((stats) => {
        if (joining.get(guild.id) !== join) {
          // Left (or joined again) meanwhile: this report would follow the leave and undo it.
          logger.debug({ guildId: guild.id }, 'join report dropped: the guild was left meanwhile');
          return;
        }
        joining.delete(guild.id);
        reporter.report({ ...report, ...stats });
      });
  });
  client.on(Events.GuildDelete, (guild) => {
    // discord.js emits GuildUnavailable, not GuildDelete, for an outage: this is a real leave.
    logger.info({ guildId: guild.id }, 'left a guild');
    // discord.js has dropped the guild's channels by now; ChannelNames still knows its channel.
    const channel = channels.reportChannel(guild.id);
    channels.forget(guild.id);
    joining.delete(guild.id);
    if (reports) reporter.report(guildReport(guild, false, client.user?.id ?? guild.client.user.id, channel));
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

  let stopping: Promise<void> | undefined;
  return {
    client,
    channels,
    directory,
    router,
    reporter,
    poster,
    readiness() {
      const snapshot = localSnapshot(client);
      const notReady = snapshot.shards.filter((s) => !s.ready).map((s) => s.id);
      const ready =
        client.isReady() && notReady.length === 0 && snapshot.shards.length >= snapshot.expectedShards;
      return {
        ready,
        detail: { shards: snapshot.shards.length, expected: snapshot.expectedShards, notReady },
      };
    },
    async start() {
      if (!config.discord.token) throw new Error('DISCORD_TOKEN is not set');
      await client.login(config.discord.token);
    },
    stop(drainMs = config.shutdownTimeoutMs) {
      stopping ??= (async () => {
        router.close();
        const drained = await router.drain(drainMs);
        if (!drained) logger.warn({ inFlight: router.inFlight }, 'interactions still running at shutdown');
        await Promise.all([poster?.stop(), reporter.stop()]);
        // @discordjs/ws 1.2 can leave destroy() pending forever when a shard waits for READY
        // (its abort handler starts a second destroy): never let that hold the shutdown.
        let timer: NodeJS.Timeout | undefined;
        const destroyed = await Promise.race([
          client.destroy().then(() => true),
          new Promise<false>((resolve) => {
            timer = setTimeout(() => resolve(false), DESTROY_BOUND_MS);
          }),
        ]);
        clearTimeout(timer);
        if (!destroyed) logger.warn('the Discord client did not close in time; going on');
        // Its idle keep-alive connections; a request still on its way has no one left to answer.
        await Promise.all([restAgent.destroy(), acknowledger.close()]);
        await directory.close();
      })();
      return stopping;
    },
  };
}
