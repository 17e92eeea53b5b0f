/**
 * The bot assembled in a process with a Discord client (the single process, or one shard process
 * of several): the discord.js client, the shared services (services.ts) with the store, the
 * handlers' deps, the router, and the gateway's events. main.ts, the sandbox and the end-to-end
 * tests all build it through here.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Client } from 'discord.js';
import type { Config } from '../config/env.js';
import { expectedShards } from '../config/sharding.js';
import type { DirectoryClient } from '../directory/index.js';
import { CommandMentions } from '../discord/command-mentions.js';
import { guildFactsLookup } from '../discord/guild-posts.js';
import { GuildStatsSource } from '../discord/guild-stats.js';
import { discordLookups } from '../discord/lookups.js';
import { channelMessages } from '../discord/messages.js';
import { channelPermissionsLookup } from '../discord/permissions.js';
import { discordRoles } from '../discord/roles.js';
import { watchGuilds } from '../events/guilds.js';
import { onceConnected, watchShards } from '../events/shards.js';
import { historyPruner } from '../features/history/prune.js';
import type { NotificationsService } from '../features/notifications/connection.js';
import type { ReminderScheduler } from '../features/reminders/scheduler.js';
import { recoverPendingUps } from '../features/up/recover.js';
import type { WebhookAnnouncer } from '../features/webhooks/announcer.js';
import { startWebhookReceiver, type WebhookReceiver } from '../features/webhooks/receiver.js';
import type { ChannelNames } from '../gateway/channel-names.js';
import { createDiscordClient, type DiscordClientOptions } from '../gateway/client.js';
import { GatewaySessions } from '../gateway/gateway-sessions.js';
import { type PrestartedThread, prestartGatewayThread } from '../gateway/gateway-thread-start.js';
import { createDiscordRestAgent } from '../gateway/rest-agent.js';
import { exposeShardStates, localShards } from '../gateway/shard-stats.js';
import { ADOPT_EVERY_MS, adoptOrphanedUps } from '../hosts/adopt.js';
import { PostgresIdentifyLedger } from '../hosts/identify-ledger.js';
import { hostIdentifyThrottler } from '../hosts/identify-throttle.js';
import { ShardOwnership } from '../hosts/ownership.js';
import type { Router, RouterHooks } from '../interactions/router.js';
import { LookupSuggestions } from '../interactions/suggestions.js';
import type { BotDeps, Registry, ServerPosts } from '../interactions/types.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../ops/metrics.js';
import type { Readiness } from '../ops/server.js';
import { ChartRenderer } from '../render/charts.js';
import {
  GatewaySessionRepository,
  HistoryRepository,
  ReminderRepository,
  SettingsRepository,
  type Store,
  StoreUpJournal,
  UpWatchRepository,
  WebhookRepository,
} from '../store/index.js';
import type { PendingUp } from '../store/journal.js';
import type { ServerReporter } from '../tasks/server-reports.js';
import type { StatsPoster } from '../tasks/stats-poster.js';
import { type BackgroundTask, backgroundTask, startTasks, stopTasks } from '../tasks/tasks.js';
import { doneWithin } from '../time/bounded.js';
import type { SessionsRead } from './early-resume.js';
import { serverFeatures } from './features.js';
import { routeInteractions } from './interactions.js';
import { createServices, type ServicesOptions } from './services.js';

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
  /** Overrides for the poster (tests shorten its delays). */
  stats?: ServicesOptions['stats'];
  /**
   * Run the webhook receiver here when WEBHOOK_PORT is set (default true; a shard process leaves
   * it to the sharding manager, which has the one port).
   */
  receiveWebhooks?: boolean;
  /** The store, opened already by the entry point (open-store.ts): the bot closes it at stop. */
  store?: Store;
  /** The gateway's thread, started already by the entry point (main.ts). */
  gatewayThread?: PrestartedThread;
  /** The saved sessions the entry point read, and had the thread resume (early-resume.ts). */
  sessions?: SessionsRead;
  /** Overrides for the directory's notifications client (tests shorten its timers). */
  notificationsClient?: NonNullable<ServicesOptions['notifications']>['client'];
}

export interface BotApp {
  client: Client;
  /** What the bot keeps of channels, discord.js keeping none (channel-names.ts). */
  channels: ChannelNames;
  directory: DirectoryClient;
  /** Open until stop() has finished. */
  store: Store;
  router: Router;
  /** Undefined without a directory token. */
  reporter: ServerReporter | undefined;
  poster: StatsPoster | undefined;
  /** Sends the reminders as they fall due (features/reminders/scheduler.ts). */
  reminders: ReminderScheduler;
  /** Announces the directory's webhook events (features/webhooks/announcer.ts). */
  announcer: WebhookAnnouncer;
  /** The digests and live leaderboards (features/digests), and their engines' wakes. */
  posts: ServerPosts;
  /** v3: the directory's notifications, held here when this process holds their lease. */
  notifications: NotificationsService | undefined;
  /** The port the webhook receiver listens on, once started; undefined without one here. */
  webhookPort(): number | undefined;
  /** Every shard of this process ready (for /readyz), with the shards that are not. */
  readiness(): Readiness;
  start(): Promise<void>;
  /** Stops taking interactions, lets those in flight finish (bounded), stops every task and timer. */
  stop(drainMs?: number): Promise<void>;
}

const DESTROY_BOUND_MS = 2_000;

/** Opens the store (services.ts) before anything connects: throws its StoreError when it cannot. */
export async function createBot(options: BotOptions): Promise<BotApp> {
  const { config, logger, metrics } = options;
  const sharding = config.sharding;
  const now = options.now ?? Date.now;
  let wakeAnnouncer = (): void => undefined;
  let wakeScheduler = (_dueAt: number): void => undefined;
  // Ours, so that stop() can close its keep-alive connections.
  const restAgent = createDiscordRestAgent();
  // The gateway's thread loads its modules while the store opens and the bot is built (or, on a
  // restart, resumes the sessions already: early-resume.ts).
  const gatewayThread = options.gatewayThread ?? prestartGatewayThread();
  // Set once the store is open (below); discord.js asks for the IDENTIFY throttle only at login.
  let identifyLedger: PostgresIdentifyLedger | undefined;
  const { client, directApi, channels, interactions } = createDiscordClient({
    apiUrl: config.discord.apiUrl,
    restProxyUrl: config.discord.restProxyUrl,
    // A shard process takes its shards from the manager (discord.js reads them itself).
    shards: sharding.isChild
      ? 'managed'
      : sharding.hostShards && typeof sharding.shardCount === 'number'
        ? { ids: sharding.hostShards, count: sharding.shardCount }
        : sharding.shardCount,
    onChannelNamesError: (err, event) => logger.warn({ err, event }, 'gateway dispatch not understood'),
    restAgent,
    // One host of several: IDENTIFY turns shared through the store.
    ...(sharding.hostShards
      ? { identifyThrottler: hostIdentifyThrottler(() => identifyLedger as PostgresIdentifyLedger, logger) }
      : {}),
    ...options.discord,
  });
  // The manager counts a shard process's shards by asking it (shard-stats.ts).
  if (sharding.isChild) exposeShardStates(client);
  const services = await createServices({
    config,
    store: options.store,
    logger,
    metrics,
    directory: options.directory,
    shards: localShards(client),
    // A shard process of start:sharded, or a host of several, shares the directory's limits.
    sharedLimits: sharding.isChild || sharding.hostShards !== undefined,
    ...(sharding.hostShards && typeof sharding.shardCount === 'number'
      ? { host: { id: sharding.hostId, shardIds: sharding.hostShards, shardCount: sharding.shardCount } }
      : {}),
    tasks: {
      stats: options.postStats !== false,
      // Server reports need the directory token; without one they would only fill the log with refusals.
      reports: config.directory.token !== undefined,
    },
    stats: options.stats,
    // Each notification stored wakes the announcer (built below, once the store is open).
    notifications: {
      stored: () => wakeAnnouncer(),
      scheduled: (dueAt) => wakeScheduler(dueAt),
      ...(options.notificationsClient ? { client: options.notificationsClient } : {}),
    },
  }).catch(async (err: unknown) => {
    await Promise.all([restAgent.destroy(), gatewayThread.close()]);
    throw err;
  });
  const { directory, poster, reporter, store } = services;
  if (sharding.hostShards) identifyLedger = new PostgresIdentifyLedger(store);
  const ownership = new ShardOwnership(sharding, () => client.options.shardCount ?? 1);

  // The store's repositories, and what the features built on them.
  const settings = new SettingsRepository(store);
  const reminders = new ReminderRepository(store);
  const history = new HistoryRepository(store);
  const webhooks = new WebhookRepository(store, config.webhook.intake);
  const journal = new StoreUpJournal(store, { owner: ownership.journalOwner() });
  const commands = new CommandMentions({
    rest: client.rest,
    applicationId: () => client.application?.id ?? null,
    logger,
  });
  const guild = guildFactsLookup(client, logger);
  const charts = new ChartRenderer();
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const features = serverFeatures({
    client,
    store,
    settings,
    reminders,
    history,
    webhooks,
    commands,
    guild,
    charts,
    owner,
    ownsGuild: ownership.guildFilter(),
    leaseMs: config.reminderClaimMs,
    logger,
    now,
    metrics,
    forget: (guildId) => directory.forget('server', guildId),
    v3: directory.version === 'v3',
  });
  const { engines, announcer, postsEngines, rewards, rewardEngine, streakWatch, reminderRoles, upRecorded } =
    features;
  wakeAnnouncer = () => announcer.wake();
  wakeScheduler = (dueAt) => engines.scheduler.wake(dueAt);
  const { scheduler, followUp } = engines;
  const wakeReminders = (dueAt: number): void => scheduler.wake(dueAt);
  const gatherTimeoutMs = options.gatherTimeoutMs ?? 2_000;
  // An up's guild statistics from the gateway's cache, the rest refreshed in the background.
  const guildStats = new GuildStatsSource({
    rest: client.rest,
    cached: (guildId) => client.guilds.cache.get(guildId),
    timeoutMs: gatherTimeoutMs,
    logger,
  });
  const deps: BotDeps = {
    directory,
    discord: discordLookups(client, channels, gatherTimeoutMs, (guildId, onError) =>
      guildStats.stats(guildId, onError),
    ),
    logger,
    now,
    journal,
    settings,
    reminders,
    history,
    charts,
    wakeReminders,
    followUp,
    posts: postsEngines.posts,
    rewards,
    upRecorded,
    reminderRoleChosen: (guildId, roleId) => reminderRoles.chosen(guildId, roleId),
    commands,
    messages: channelMessages(client.rest),
    permissions: channelPermissionsLookup(client.rest),
    roles: discordRoles(client.rest),
    webhooks,
    webhookReceiver: { listening: config.webhook.port !== undefined, publicUrl: config.webhook.publicUrl },
    upDirectory: services.upDirectory,
    ...(directory.version === 'v3'
      ? {
          upWatches: new UpWatchRepository(store),
          // The key's WebSocket, or webhooks received here: an up's notification can come.
          notificationsOn: config.directory.notifyUrl !== undefined || config.webhook.port !== undefined,
        }
      : {}),
    suggestions: new LookupSuggestions({
      // The lowest priority: an /up never waits behind a suggestion.
      ownBots: (userId) => directory.getDeveloperBots(userId, { priority: 'background' }),
      // v3 with a key: the directory's search, at the lowest priority, given up after 3 s.
      search:
        directory.version === 'v3' && config.directory.token !== undefined
          ? (kind, query) =>
              directory.search(kind, query, { priority: 'background', limit: 10, deadline: now() + 3_000 })
          : undefined,
      now,
      logger,
    }),
  };
  /** Answers ups from before a restart, or a gone host's (features/up/recover.ts). */
  const recover = (entries?: PendingUp[]) =>
    recoverPendingUps({ ...deps, rest: client.rest, ...(entries ? { entries } : {}) });

  // Each shard's session and guilds, kept in the store for the next process to resume.
  const sessions = new GatewaySessions({
    repository: new GatewaySessionRepository(store),
    client,
    channels,
    logger,
    now,
    expected: options.sessions ?? expectedShards(sharding),
  });

  /**
   * Every background task of this process, started in this order once connected and stopped
   * together at shutdown: a new one is added here (or, for every process, in services.ts).
   */
  const tasks: BackgroundTask[] = [
    ...services.tasks,
    // Reminders that fell due while the bot was down go out now.
    backgroundTask('reminders', scheduler),
    // And the follow-ups of reminders upped meanwhile.
    backgroundTask('reminder follow-ups', engines.followups),
    // And webhook events stored but not announced before a restart.
    backgroundTask('webhook announcer', announcer),
    // And the digests of periods that ended meanwhile, and the live leaderboards.
    backgroundTask('digests', postsEngines.digests),
    backgroundTask('live leaderboards', postsEngines.liveBoards),
    // And the reward roles to give or take back (periods that ended meanwhile included).
    ...rewardEngine.tasks,
    // And the streaks whose window's grace ran out (within the last hour, the bot down included).
    ...streakWatch.tasks,
    // What the gateway does not give of a guild's statistics (owner's name, online count).
    guildStats.task,
    // Each shard's session and the guilds changed, saved for the next process (gateway-sessions.ts).
    sessions.task,
    // The history keeps UP_HISTORY_DAYS: what is older goes now and every few hours.
    historyPruner({ history, webhooks, watches: new UpWatchRepository(store), logger, now }),
    // One host of several answers the ups of hosts that are gone (hosts/adopt.ts).
    ...(services.host
      ? [
          adoptOrphanedUps({
            hosts: services.host,
            journal,
            answer: recover,
            logger,
            silentMs: sharding.hostGoneAfterMs,
            // Looked for twice within the silence, so a gone host's ups wait at most one and a half of it.
            everyMs: Math.min(ADOPT_EVERY_MS, Math.round(sharding.hostGoneAfterMs / 2)),
            onOrphans: (shards) => ownership.setOrphans(shards),
          }),
        ]
      : []),
  ];

  const { router, acknowledger } = routeInteractions({
    client,
    interactions,
    registry: options.registry,
    deps,
    directApi,
    sessions,
    gatewayThread,
    config,
    logger,
    metrics,
    onHandled: options.hooks?.onHandled,
    onFatal: options.onFatal,
  });
  onceConnected(client, sessions, () => {
    logger.info(
      { user: client.user?.tag, guilds: client.guilds.cache.size, shards: client.ws.shards.size },
      'connected to Discord',
    );
    startTasks(tasks, logger);
    void recover().then((answered) =>
      logger.debug({ answered }, 'the ups from before the restart are dealt with'),
    );
  });
  watchGuilds({ client, channels, discord: deps.discord, reporter, settings, logger });
  watchShards(client, logger, options.onFatal);

  let receiver: WebhookReceiver | undefined;
  let stopping: Promise<void> | undefined;
  return {
    client,
    channels,
    directory,
    store,
    router,
    reporter,
    poster,
    reminders: scheduler,
    announcer,
    posts: postsEngines.posts,
    notifications: services.notifications,
    webhookPort: () => receiver?.port,
    readiness: () => services.readiness(),
    async start() {
      if (!config.discord.token) throw new Error('DISCORD_TOKEN is not set');
      if (config.webhook.port !== undefined && options.receiveWebhooks !== false && !receiver) {
        receiver = await startWebhookReceiver({
          port: config.webhook.port,
          host: config.webhook.host,
          webhooks: deps.webhooks,
          logger,
          rateLimit: config.webhook.rateLimit,
          trustProxy: config.webhook.trustProxy,
          now: deps.now,
          onStored: () => announcer.wake(),
          botId: config.discord.botId,
          ...(metrics ? { onDelivery: (outcome, seconds) => metrics.webhookDelivery(outcome, seconds) } : {}),
        });
      }
      // The day's identify budget is checked as the shards start (IDENTIFY_BUDGET_FLOOR, every mode).
      await client.login(config.discord.token);
    },
    stop(drainMs = config.shutdownTimeoutMs) {
      stopping ??= (async () => {
        router.close();
        interactions.stopDeferring?.();
        const drained = await router.drain(drainMs);
        if (!drained) logger.warn({ inFlight: router.inFlight }, 'interactions still running at shutdown');
        // While the interactions in flight finished, those that came were told "restarting". From
        // here what Discord sends is replayed to the next process, which resumes the sessions saved
        // here (gateway-sessions.ts) instead of identifying: the shards close keeping them.
        const suspended = await doneWithin(interactions.suspend?.() ?? Promise.resolve(), DESTROY_BOUND_MS);
        if (!suspended) logger.warn('the shards did not close in time; going on');
        await sessions.close();
        // Never taken: the bot stopped before it logged in.
        await gatewayThread.close();
        // Deliveries stop first: an event stored from here on is announced at the next start.
        await receiver?.close();
        await stopTasks(tasks, logger);
        // @discordjs/ws 1.2 can leave destroy() pending forever when a shard waits for READY
        // (its abort handler starts a second destroy): never let that hold the shutdown.
        const destroyed = await doneWithin(client.destroy(), DESTROY_BOUND_MS);
        if (!destroyed) logger.warn('the Discord client did not close in time; going on');
        // Its idle keep-alive connections; a request still on its way has no one left to answer.
        await Promise.all([restAgent.destroy(), acknowledger.close(), charts.close()]);
        await services.close();
      })();
      return stopping;
    },
  };
}
