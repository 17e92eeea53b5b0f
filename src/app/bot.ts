/**
 * The bot assembled in a process with a Discord client (the single process, or one shard process
 * of several): the discord.js client, the shared services (services.ts) with the store, the
 * handlers' deps, the router, and the gateway's events. main.ts, the sandbox and the end-to-end
 * tests all build it through here.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { IIdentifyThrottler, WebSocketManager } from '@discordjs/ws';
import {
  type APIGatewayBotInfo,
  type APIGuild,
  type Client,
  DefaultUserAgent,
  Events,
  Routes,
  ShardClientUtil,
} from 'discord.js';
import type { Config } from '../config/env.js';
import type { DirectoryClient } from '../directory/index.js';
import { InteractionAcknowledger } from '../discord/acknowledge.js';
import type { ChannelNames } from '../discord/channel-names.js';
import { createDiscordClient, type DiscordClientOptions } from '../discord/client.js';
import { CommandMentions } from '../discord/command-mentions.js';
import type { GuildFacts } from '../discord/guild-posts.js';
import { discordLookups } from '../discord/lookups.js';
import { createDiscordRestAgent } from '../discord/rest-agent.js';
import { exposeShardStates, localShards } from '../discord/shard-stats.js';
import { watchGuilds } from '../events/guilds.js';
import { watchShards } from '../events/shards.js';
import { historyPruner } from '../features/history/prune.js';
import { ReminderRoles } from '../features/reminders/roles.js';
import { ReminderScheduler } from '../features/reminders/scheduler.js';
import { DiscordReminderSender } from '../features/reminders/send.js';
import { recoverPendingUps } from '../features/up/recover.js';
import { WebhookAnnouncer } from '../features/webhooks/announcer.js';
import { DirectoryEventHandler } from '../features/webhooks/handle.js';
import { startWebhookReceiver, type WebhookReceiver } from '../features/webhooks/receiver.js';
import { ADOPT_EVERY_MS, adoptOrphanedUps, hostJournalOwner } from '../hosts/adopt.js';
import { PostgresIdentifyLedger } from '../hosts/identify-ledger.js';
import { SharedIdentifyThrottler, sessionBudgetProblem } from '../hosts/identify-throttle.js';
import { createRouter, type Router, type RouterHooks } from '../interactions/router.js';
import type { BotDeps, Registry } from '../interactions/types.js';
import type { Logger } from '../log/logger.js';
import { logThrottle } from '../log/throttle.js';
import type { Metrics } from '../ops/metrics.js';
import type { Readiness } from '../ops/server.js';
import { ChartRenderer } from '../render/charts.js';
import {
  HistoryRepository,
  ReminderRepository,
  SettingsRepository,
  type Store,
  StoreUpJournal,
  WebhookRepository,
} from '../store/index.js';
import type { PendingUp } from '../store/journal.js';
import { type BackgroundTask, backgroundTask, startTasks, stopTasks } from '../tasks/loop.js';
import type { ServerReporter } from '../tasks/server-reports.js';
import type { StatsPoster } from '../tasks/stats-poster.js';
import { bounded, doneWithin } from '../time/bounded.js';
import { createServices, LEDGER_WARN_EVERY_MS, type ServicesOptions } from './services.js';

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
  /** The port the webhook receiver listens on, once started; undefined without one here. */
  webhookPort(): number | undefined;
  /** Every shard of this process ready (for /readyz), with the shards that are not. */
  readiness(): Readiness;
  start(): Promise<void>;
  /** Stops taking interactions, lets those in flight finish (bounded), stops every task and timer. */
  stop(drainMs?: number): Promise<void>;
}

const DESTROY_BOUND_MS = 2_000;

/**
 * Which guilds' reminders this process sends: all of them in the single process; in a shard
 * process, those of its shards (a guild's shard is (id >> 22) % shard count, Discord's rule).
 */
function guildOwnership(
  client: Client,
  sharding: Config['sharding'],
  orphans: () => ReadonlySet<number>,
): ((guildId: string) => boolean) | undefined {
  const ids = ownShards(sharding);
  if (!ids) return undefined;
  const mine = new Set(ids);
  return (guildId) => {
    const count = client.options.shardCount ?? 1;
    if (!/^\d{1,20}$/.test(guildId)) return false;
    const shard = ShardClientUtil.shardIdForGuildId(guildId, count);
    // And a gone host's (hosts/adopt.ts): any live host may send them, each once (claims).
    return mine.has(shard) || orphans().has(shard);
  };
}

/**
 * A server's name and language for a reminder: from the cache of this process's shards, else
 * (a gone host's server, hosts/adopt.ts) asked of Discord, which answers any host of the bot.
 */
async function guildFacts(client: Client, guildId: string, logger: Logger): Promise<GuildFacts | undefined> {
  const cached = client.guilds.cache.get(guildId);
  if (cached) return { name: cached.name, preferredLocale: cached.preferredLocale };
  try {
    const guild = (await bounded(
      (signal) => client.rest.get(Routes.guild(guildId), { signal }),
      GUILD_FACTS_BOUND_MS,
    )) as APIGuild;
    return { name: guild.name, preferredLocale: guild.preferred_locale };
  } catch (err) {
    logger.debug({ guildId, err: String(err) }, "a server's name could not be read for its reminder");
    return undefined;
  }
}

const GUILD_FACTS_BOUND_MS = 3_000;

/** The shards this process runs when it does not run them all: a shard process's, or a host's. */
function ownShards(sharding: Config['sharding']): readonly number[] | undefined {
  return sharding.isChild ? sharding.childShards : sharding.hostShards;
}

/**
 * The journal's owner: each shard process recovers the ups of its own shards, whatever it
 * shares; a host, its own (and another's once that one is gone: hosts/adopt.ts).
 */
function journalOwner(sharding: Config['sharding']): string {
  if (sharding.hostShards) return hostJournalOwner(sharding.hostId);
  const ids = ownShards(sharding);
  return ids ? `shards-${ids.join('-')}` : 'main';
}

/** Opens the store (services.ts) before anything connects: throws its StoreError when it cannot. */
export async function createBot(options: BotOptions): Promise<BotApp> {
  const { config, logger, metrics } = options;
  const sharding = config.sharding;
  // Ours, so that stop() can close its keep-alive connections.
  const restAgent = createDiscordRestAgent();
  const { client, channels, interactions } = createDiscordClient({
    apiUrl: config.discord.apiUrl,
    // A shard process takes its shards from the manager (discord.js reads them itself).
    shards: sharding.isChild
      ? 'managed'
      : sharding.hostShards && typeof sharding.shardCount === 'number'
        ? { ids: sharding.hostShards, count: sharding.shardCount }
        : sharding.shardCount,
    onChannelNamesError: (err, event) => logger.warn({ err, event }, 'gateway dispatch not understood'),
    restAgent,
    // One host of several: IDENTIFY turns shared through the store.
    ...(sharding.hostShards ? { identifyThrottler: (manager) => hostIdentify(manager) } : {}),
    ...options.discord,
  });
  // Set once the store is open (below); discord.js asks for the throttle only when it connects.
  let identifyLedger: PostgresIdentifyLedger | undefined;
  const ledgerWarn = logThrottle(LEDGER_WARN_EVERY_MS);
  async function hostIdentify(manager: WebSocketManager): Promise<IIdentifyThrottler> {
    const info = await manager.fetchGatewayInformation();
    return new SharedIdentifyThrottler({
      // Opened before login (below), and only login asks for the throttle.
      ledger: identifyLedger as PostgresIdentifyLedger,
      maxConcurrency: info.session_start_limit.max_concurrency,
      onLedgerError: (err) => {
        if (!ledgerWarn()) return;
        logger.warn({ err: String(err) }, 'cannot take an IDENTIFY turn from the store; the shard waits');
      },
    });
  }
  // The manager counts a shard process's shards by asking it (shard-stats.ts).
  if (sharding.isChild) exposeShardStates(client);
  const services = await createServices({
    config,
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
  }).catch(async (err: unknown) => {
    await restAgent.destroy();
    throw err;
  });
  const { directory, poster, reporter, store } = services;
  if (sharding.hostShards) identifyLedger = new PostgresIdentifyLedger(store);
  const journal = new StoreUpJournal(store, { owner: journalOwner(sharding) });
  const charts = new ChartRenderer();
  const deps: BotDeps = {
    directory,
    discord: discordLookups(client, channels, options.gatherTimeoutMs ?? 2_000),
    logger,
    now: options.now ?? Date.now,
    journal,
    settings: new SettingsRepository(store),
    reminders: new ReminderRepository(store),
    history: new HistoryRepository(store),
    charts,
    wakeReminders: (dueAt) => scheduler.wake(dueAt),
    reminderRoleChosen: (guildId, roleId) => reminderRoles.chosen(guildId, roleId),
    commands: new CommandMentions({
      rest: client.rest,
      applicationId: () => client.application?.id ?? null,
      logger,
    }),
    rest: client.rest,
    webhooks: new WebhookRepository(store),
    webhookReceiver: { listening: config.webhook.port !== undefined, publicUrl: config.webhook.publicUrl },
  };
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const announcer = new WebhookAnnouncer({
    webhooks: deps.webhooks,
    owner,
    onDone: metrics ? (event) => metrics.webhookEvent(event) : undefined,
    leaseMs: config.reminderClaimMs,
    logger,
    now: deps.now,
    handler: new DirectoryEventHandler({
      rest: client.rest,
      webhooks: deps.webhooks,
      settings: deps.settings,
      history: deps.history,
      reminders: deps.reminders,
      wakeReminders: (dueAt) => scheduler.wake(dueAt),
      guild: (id) => guildFacts(client, id, logger),
      logger,
      now: deps.now,
    }),
  });
  let receiver: WebhookReceiver | undefined;
  const reminderRoles = new ReminderRoles({ settings: deps.settings, logger });
  reminderRoles.watch(client);
  const scheduler = new ReminderScheduler({
    reminders: deps.reminders,
    owner,
    ownsGuild: guildOwnership(client, sharding, () => orphanShards),
    leaseMs: config.reminderClaimMs,
    logger,
    now: deps.now,
    sender: new DiscordReminderSender({
      rest: client.rest,
      settings: deps.settings,
      commands: deps.commands,
      guild: (id) => guildFacts(client, id, logger),
      roleDeleted: (guildId, roleId) => reminderRoles.isDeleted(guildId, roleId),
      logger,
      now: deps.now,
    }),
    onDone: metrics ? (event) => metrics.reminder(event) : undefined,
  });
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
    startTasks(tasks, logger);
    const recover = (entries?: PendingUp[]) =>
      recoverPendingUps({ ...deps, rest: client.rest, ...(entries ? { entries } : {}) });
    void recover().then((answered) =>
      logger.debug({ answered }, 'the ups from before the restart are dealt with'),
    );
    // A gone host's ups are answered the same way (orphan adoption, below).
    answerAdopted = recover;
  });
  /** Set once connected (above), before the adoption's first look. */
  let answerAdopted: (entries: PendingUp[]) => Promise<number> = async () => 0;
  /**
   * Every background task of this process, started in this order once connected and stopped
   * together at shutdown: a new one is added here (or, for every process, in services.ts).
   */
  const tasks: BackgroundTask[] = [
    ...services.tasks,
    // Reminders that fell due while the bot was down go out now.
    backgroundTask('reminders', scheduler),
    // And webhook events stored but not announced before a restart.
    backgroundTask('webhook announcer', announcer),
    // The history keeps UP_HISTORY_DAYS: what is older goes now and every few hours.
    historyPruner({ history: deps.history, webhooks: deps.webhooks, logger, now: deps.now }),
    // One host of several answers the ups of hosts that are gone (hosts/adopt.ts).
    ...(services.host
      ? [
          adoptOrphanedUps({
            hosts: services.host,
            journal,
            answer: (entries) => answerAdopted(entries),
            logger,
            silentMs: sharding.hostGoneAfterMs,
            // Looked for twice within the silence, so a gone host's ups wait at most one and a half of it.
            everyMs: Math.min(ADOPT_EVERY_MS, Math.round(sharding.hostGoneAfterMs / 2)),
            onOrphans: (shards) => {
              orphanShards = new Set(shards);
            },
          }),
        ]
      : []),
  ];
  /** Shards of hosts that are gone: their guilds' reminders are sent from here too. */
  let orphanShards: ReadonlySet<number> = new Set();
  watchGuilds({
    client,
    channels,
    discord: deps.discord,
    reporter,
    settings: deps.settings,
    logger,
  });
  watchShards(client, logger, options.onFatal);

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
          now: deps.now,
          onStored: () => announcer.wake(),
          ...(metrics ? { onDelivery: (outcome, seconds) => metrics.webhookDelivery(outcome, seconds) } : {}),
        });
      }
      if (sharding.hostShards) {
        // One host of several: refuse to start rather than use up the day's gateway sessions.
        client.rest.setToken(config.discord.token);
        const info = (await client.rest.get(Routes.gatewayBot())) as APIGatewayBotInfo;
        const problem = sessionBudgetProblem(info, sharding.hostShards.length);
        if (problem) throw new Error(problem);
      }
      await client.login(config.discord.token);
    },
    stop(drainMs = config.shutdownTimeoutMs) {
      stopping ??= (async () => {
        router.close();
        const drained = await router.drain(drainMs);
        if (!drained) logger.warn({ inFlight: router.inFlight }, 'interactions still running at shutdown');
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
