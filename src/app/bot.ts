/**
 * The bot assembled in a process with a Discord client (the single process, or one shard process
 * of several): createBot builds, in this order, the discord.js client, the shared services
 * (services.ts) with the store, the handlers' deps (deps.ts), the background tasks (tasks.ts) and
 * the client's events (events.ts), and gives start and stop (lifecycle.ts). main.ts, the sandbox
 * and the end-to-end tests all build it through here.
 */
import type { Client } from 'discord.js';
import type { Dispatcher } from 'undici';
import type { Config } from '../config/env.js';
import { expectedShards } from '../config/sharding.js';
import type { DirectoryClient } from '../directory/index.js';
import type { NotificationsService } from '../features/notifications/connection.js';
import type { ReminderScheduler } from '../features/reminders/scheduler.js';
import { recoverPendingUps } from '../features/up/recover.js';
import type { WebhookAnnouncer } from '../features/webhooks/announcer.js';
import type { ChannelNames } from '../gateway/channel-names.js';
import { createDiscordClient, type DiscordClientOptions } from '../gateway/client.js';
import { GatewayHealth } from '../gateway/gateway-health.js';
import { GatewaySessions } from '../gateway/gateway-sessions.js';
import { type PrestartedThread, prestartGatewayThread } from '../gateway/gateway-thread-start.js';
import { createDiscordRestAgent } from '../gateway/rest-agent.js';
import { RestHealth } from '../gateway/rest-health.js';
import { exposeShardStates, localShards } from '../gateway/shard-stats.js';
import { PostgresIdentifyLedger } from '../hosts/identify-ledger.js';
import { hostIdentifyThrottler } from '../hosts/identify-throttle.js';
import { ShardOwnership } from '../hosts/ownership.js';
import type { Router, RouterHooks } from '../interactions/router.js';
import type { Registry, ServerPosts } from '../interactions/types.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../ops/metrics.js';
import type { Readiness } from '../ops/server.js';
import { GatewaySessionRepository, type Store } from '../store/index.js';
import type { PendingUp } from '../store/journal.js';
import { WelcomeRepository } from '../store/welcomes.js';
import type { ServerReporter } from '../tasks/server-reports.js';
import type { StatsPoster } from '../tasks/stats-poster.js';
import { botDeps } from './deps.js';
import type { SessionsRead } from './early-resume.js';
import { wireClientEvents } from './events.js';
import { type BotRun, startBot, stopBot } from './lifecycle.js';
import { createServices, type Services, type ServicesOptions } from './services.js';
import { botTasks } from './tasks.js';

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
  const { client, directApi, channels, interactions, answers } = discordClient(
    options,
    restAgent,
    () => identifyLedger as PostgresIdentifyLedger,
  );
  // The manager counts a shard process's shards by asking it (shard-stats.ts).
  if (sharding.isChild) exposeShardStates(client);
  // Each notification stored wakes the announcer (built below, once the store is open).
  const services = await openServices(options, client, {
    stored: () => wakeAnnouncer(),
    scheduled: (dueAt) => wakeScheduler(dueAt),
  }).catch(async (err: unknown) => {
    await Promise.all([restAgent.destroy(), gatewayThread.close()]);
    throw err;
  });
  const { directory, poster, reporter, store } = services;
  if (sharding.hostShards) identifyLedger = new PostgresIdentifyLedger(store);
  const ownership = new ShardOwnership(sharding, () => client.options.shardCount ?? 1);

  const parts = botDeps({
    client,
    channels,
    config,
    services,
    ownership,
    logger,
    now,
    metrics,
    gatherTimeoutMs: options.gatherTimeoutMs ?? 2_000,
  });
  const { deps, features, charts } = parts;
  const { engines, announcer, postsEngines } = features;
  wakeAnnouncer = () => announcer.wake();
  wakeScheduler = (dueAt) => engines.scheduler.wake(dueAt);
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

  const tasks = botTasks({ services, parts, sessions, recover, sharding, ownership });

  const { router, acknowledger } = wireClientEvents({
    client,
    channels,
    interactions,
    directApi,
    registry: options.registry,
    deps,
    sessions,
    gatewayThread,
    tasks,
    recover,
    reporter,
    welcomes: new WelcomeRepository(store),
    config,
    logger,
    metrics,
    onHandled: options.hooks?.onHandled,
    onFatal: options.onFatal,
  });

  const run: BotRun = { receiver: undefined, stopping: undefined };
  return {
    client,
    channels,
    directory,
    store,
    router,
    reporter,
    poster,
    reminders: engines.scheduler,
    announcer,
    posts: postsEngines.posts,
    notifications: services.notifications,
    webhookPort: () => run.receiver?.port,
    readiness: () => services.readiness(),
    start: () =>
      startBot(
        { config, client, receiveWebhooks: options.receiveWebhooks, deps, announcer, logger, metrics },
        run,
      ),
    stop: (drainMs = config.shutdownTimeoutMs) =>
      stopBot(
        {
          client,
          interactions,
          answers,
          router,
          acknowledger,
          sessions,
          gatewayThread,
          tasks,
          restAgent,
          charts,
          services,
          logger,
        },
        run,
        drainMs,
      ),
  };
}

/**
 * The discord.js client: its shards (the manager's in a shard process, this host's of several, or
 * SHARD_COUNT), our REST agent, and, one host of several, IDENTIFY turns shared through the store.
 */
function discordClient(
  options: BotOptions,
  restAgent: Dispatcher,
  identifyLedger: () => PostgresIdentifyLedger,
) {
  const { config, logger, metrics } = options;
  const sharding = config.sharding;
  // Discord's REST trouble, one line and one metric change per state change (rest-health.ts).
  const restHealth = new RestHealth({
    logger: logger.child({ component: 'discord-rest' }),
    onChange: metrics ? (conditions) => metrics.discordRest(conditions) : undefined,
  });
  const made = createDiscordClient({
    apiUrl: config.discord.apiUrl,
    restProxyUrl: config.discord.restProxyUrl,
    globalPerSecond: config.discord.globalPerSecond,
    // A shard process takes its shards from the manager (discord.js reads them itself).
    shards: sharding.isChild
      ? 'managed'
      : sharding.hostShards && typeof sharding.shardCount === 'number'
        ? { ids: sharding.hostShards, count: sharding.shardCount }
        : sharding.shardCount,
    onChannelNamesError: (err, event) => logger.warn({ err, event }, 'gateway dispatch not understood'),
    restAgent,
    restHealth,
    // One host of several: IDENTIFY turns shared through the store.
    ...(sharding.hostShards ? { identifyThrottler: hostIdentifyThrottler(identifyLedger, logger) } : {}),
    ...options.discord,
  });
  // The gateway's trouble, the same way: one line and one metric change per state change.
  made.interactions.gateway = new GatewayHealth({
    logger: logger.child({ component: 'discord-gateway' }),
    onChange: metrics ? (state) => metrics.discordGateway(state) : undefined,
    onDisconnection: metrics ? (cause) => metrics.gatewayDisconnection(cause) : undefined,
  });
  return made;
}

/** The shared services (services.ts) as this process runs them; the store opens first. */
function openServices(
  options: BotOptions,
  client: Client,
  notifications: { stored: () => void; scheduled: (dueAt: number) => void },
): Promise<Services> {
  const { config } = options;
  const sharding = config.sharding;
  return createServices({
    config,
    store: options.store,
    logger: options.logger,
    metrics: options.metrics,
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
    notifications: {
      ...notifications,
      ...(options.notificationsClient ? { client: options.notificationsClient } : {}),
    },
  });
}
