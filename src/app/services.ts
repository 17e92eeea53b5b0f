/**
 * What every process of the bot wires the same way, in one place: the store, the directory client
 * with its metrics hooks, the background tasks (src/tasks/) with theirs, readiness for /readyz and
 * the metrics' view of the shards. A process with a Discord client gets it through createBot
 * (bot.ts); the sharding manager (sharded.ts) directly. A background task every process runs is
 * built and listed here (`tasks`), and each entry point says whether it runs in that process; the
 * entry points add their own to the list, and start and stop them all.
 */
import type { Config } from '../config/env.js';
import { DirectoryClient, type RequestEvent } from '../directory/index.js';
import { RetirementWatch } from '../directory/retired.js';
import { PUBLISHED_LIMITS } from '../directory/versions.js';
import {
  leaseHolder,
  NotificationsService,
  type NotificationsServiceOptions,
} from '../features/notifications/connection.js';
import { notificationIntake } from '../features/notifications/intake.js';
import { keyLease } from '../features/notifications/lease.js';
import { V3_UP_EVERY_MS } from '../features/up/follows.js';
import type { ShardView } from '../gateway/shard-stats.js';
import { Host } from '../hosts/hosts.js';
import type { Logger } from '../log/logger.js';
import { LEDGER_WARN_EVERY_MS, logThrottle } from '../log/throttle.js';
import type { Metrics } from '../ops/metrics.js';
import type { Readiness } from '../ops/server.js';
import {
  isFull,
  NotificationInbox,
  PostgresRateLimitLedger,
  type Store,
  WebhookRepository,
} from '../store/index.js';
import { ServerReporter } from '../tasks/server-reports.js';
import { StatsPoster, type StatsPosterOptions } from '../tasks/stats-poster.js';
import { type BackgroundTask, backgroundTask } from '../tasks/tasks.js';
import { doneWithin } from '../time/bounded.js';
import { openBotStore } from './open-store.js';

export interface ServicesOptions {
  config: Config;
  /** Opened already (openBotStore): taken over, closed with the rest. Default: opened here. */
  store?: Store | undefined;
  logger: Logger;
  metrics?: Metrics | undefined;
  /** Default: a client from the configuration, with the metrics hooks. */
  directory?: DirectoryClient | undefined;
  /** Where this process sees the bot's shards from. */
  shards: ShardView;
  /**
   * Which tasks run in this process: the statistics in the one that sees every shard (the single
   * process, or the manager); the server reports where guilds join and leave (never the manager).
   */
  tasks: { stats: boolean; reports: boolean };
  /**
   * This process is one of several of the bot (the sharding manager, a shard process): the
   * directory's rate limits are kept with the others, in the store (PostgreSQL), not in memory.
   */
  sharedLimits?: boolean | undefined;
  /**
   * One host of several (SHARD_IDS): its shards are claimed in the store before anything
   * connects, the statistics read every shard's numbers from the store, and the host that
   * leads posts them.
   */
  host?: { id: string; shardIds: readonly number[]; shardCount: number } | undefined;
  /** Overrides for the poster (tests shorten its delays). */
  stats?: Partial<Omit<StatsPosterOptions, 'directory' | 'logger' | 'snapshot' | 'onOutcome'>> | undefined;
  /**
   * v3: hold the directory's notifications connection from this process when its lease allows
   * (features/notifications): the process that posts the statistics. `stored` is told of each
   * event stored (the announcer looks at once); a process without an announcer polls.
   */
  notifications?:
    | {
        stored?: () => void;
        /** An up's reminder was restarted as it was stored: due then. */
        scheduled?: (dueAt: number) => void;
        client?: NotificationsServiceOptions['client'];
      }
    | undefined;
}

export interface Services {
  /** Open from the start: the SQLite file in DATA_DIR, or PostgreSQL at DATABASE_URL. */
  store: Store;
  /** One host of several: what it shares with the others. */
  host: Host | undefined;
  directory: DirectoryClient;
  poster: StatsPoster | undefined;
  reporter: ServerReporter | undefined;
  /** v3: the directory's notifications held by this process when its lease allows; else undefined. */
  notifications: NotificationsService | undefined;
  /** v3 with DIRECTORY_UP_TOKEN: a v2 client /up raises through; else undefined. */
  upDirectory: DirectoryClient | undefined;
  /** Every shard of the bot ready (for /readyz), with the shards that are not. */
  readiness(): Readiness;
  /**
   * The tasks of this process that every process has, in the order they start once the bot is
   * connected: the host's (its heartbeat runs from the claim on), the statistics poster, the
   * server reports. Stopped together, each within its own bound.
   */
  tasks: readonly BackgroundTask[];
  /** Closes the directory client and the store (after the tasks have stopped). */
  close(): Promise<void>;
}

/** Short: the whole shutdown has to fit in Docker's 10 s. */
const TASK_STOP_MS = 1_500;
/** A PostgreSQL pool waits for its queries to end before it closes; one that hangs is left. */
const STORE_CLOSE_MS = 1_000;

function sharedLimits(store: Store, logger: Logger) {
  const warn = logThrottle(LEDGER_WARN_EVERY_MS);
  return {
    ledger: new PostgresRateLimitLedger(store),
    onLedgerError(err: unknown, what: string) {
      if (!warn()) return;
      logger.warn(
        { err: err instanceof Error ? err.message : String(err), what },
        "the directory's shared rate limits cannot be read from the store; directory requests wait for it",
      );
    },
  };
}

/**
 * Opens the store first, and builds the rest only once it is open: a store that cannot be opened
 * or migrated (a StoreError, one line) leaves nothing running behind it.
 */
export async function createServices(options: ServicesOptions): Promise<Services> {
  const { config, logger, metrics } = options;
  const store = options.store ?? (await openBotStore({ config, logger, metrics }));
  let host: Host | undefined;
  if (options.host) {
    try {
      host = new Host({
        store,
        host: options.host.id,
        shardIds: options.host.shardIds,
        shardCount: options.host.shardCount,
        local: options.shards,
        logger,
        statsIntervalMs: config.stats.intervalMs,
      });
      await host.claim();
      host.startWriting();
    } catch (err) {
      await store.close();
      throw err;
    }
  }
  // The statistics see every shard: from the store on one host of several, else from here.
  const shards = host ? host.view() : options.shards;
  const retirement = new RetirementWatch();
  const version = config.directory.version;
  const onRequest = (event: RequestEvent): void => {
    metrics?.directoryRequest(event);
    if (version === 'v3' || !retirement.observe(event)) return;
    metrics?.directoryRetired(version);
    logger.error(
      { version, route: event.route, status: event.status },
      `the directory answers as if it had retired API ${version} (its documentation marks v1 and v2 Inactive): ` +
        'set DIRECTORY_API_VERSION=v3 (and remove DIRECTORY_TOKEN_KIND), with a v3 API key in DIRECTORY_TOKEN; see docs/directory-v3.md',
    );
  };
  const directory =
    options.directory ??
    new DirectoryClient({
      ...config.directory,
      cache: config.directory.cache.maxEntries > 0 ? config.directory.cache : false,
      onRequest,
      ...(metrics ? { onRateLimitGrant: metrics.rateLimitGrant } : {}),
      ...(options.sharedLimits ? { sharedRateLimits: sharedLimits(store, logger) } : {}),
    });
  metrics?.setDirectoryCache(() => directory.cacheStats());
  // v3 has no route for a server's statistics (POST /v2/server): nothing to report there.
  const reporter =
    options.tasks.reports && version !== 'v3'
      ? new ServerReporter({
          directory,
          logger,
          stopTimeoutMs: TASK_STOP_MS,
          onResult: metrics?.serverReport,
        })
      : undefined;
  const poster = options.tasks.stats
    ? new StatsPoster({
        directory,
        botId: config.discord.botId,
        logger,
        snapshot: () => shards.snapshot(),
        intervalMs: config.stats.intervalMs,
        firstDelayMs: config.stats.firstDelayMs,
        stopTimeoutMs: TASK_STOP_MS,
        ...options.stats,
        ...(host ? { gate: host.gate } : {}),
        onOutcome: metrics ? (outcome) => metrics.statsPost(outcome) : undefined,
      })
    : undefined;
  const notifications = notificationsService(options, store, directory.version, metrics);
  const upDirectory =
    version === 'v3' && config.directory.upToken !== undefined
      ? new DirectoryClient({
          baseUrl: config.directory.baseUrl,
          version: 'v2',
          token: config.directory.upToken,
          tokenKind: config.directory.upTokenKind,
          timeoutMs: config.directory.timeoutMs,
          maxRetries: config.directory.maxRetries,
          rateLimits: { ...PUBLISHED_LIMITS.v2, marginMs: config.directory.rateLimits.marginMs },
          ...(options.sharedLimits ? { sharedRateLimits: sharedLimits(store, logger) } : {}),
        })
      : undefined;
  if (host && options.host) {
    const { id, shardIds } = options.host;
    const leading = host;
    metrics?.setHost({ id, shardIds, leading: () => leading.leading });
  }
  metrics?.setStoreHealth(store.engine === 'sqlite' ? store.health : undefined);
  metrics?.setDiscordSource(() => {
    const latest = shards.latest();
    return { guilds: latest.guilds, shards: latest.snapshot.shards };
  });

  const claimed = host;
  const tasks: BackgroundTask[] = [
    // The host's heartbeat and lease; it hands the lead over once the poster, which posts under
    // it, has stopped.
    claimed &&
      backgroundTask('host', {
        start: () => claimed.start(),
        stop: async () => {
          await poster?.stop();
          await claimed.stop();
        },
      }),
    // The poster checks itself that every shard is ready before it posts.
    poster && backgroundTask('stats poster', poster),
    // Reporting from its construction on: guilds join before the bot is connected.
    reporter && backgroundTask('server reports', reporter),
    // The directory's notifications (v3): one connection per key, whichever process holds its lease.
    notifications && backgroundTask('directory notifications', notifications),
  ].filter((task) => task !== undefined);

  return {
    store,
    host,
    directory,
    poster,
    reporter,
    notifications,
    upDirectory,
    readiness() {
      const { snapshot, connected } = shards.latest();
      const notReady = snapshot.shards.filter((s) => !s.ready).map((s) => s.id);
      // A store file that cannot be written (or is damaged) loses what must survive a restart.
      const storeProblem = store.health.problem();
      const ready =
        connected &&
        notReady.length === 0 &&
        snapshot.shards.length >= snapshot.expectedShards &&
        storeProblem === undefined;
      const detail = {
        shards: snapshot.shards.length,
        expected: snapshot.expectedShards,
        notReady,
        ...(storeProblem ? { store: storeProblem.problem } : {}),
      };
      // One host of several names itself and the shards it runs.
      return {
        ready,
        detail: options.host
          ? { ...detail, host: options.host.id, shardIds: [...options.host.shardIds] }
          : detail,
      };
    },
    tasks,
    async close() {
      const storeClosed = doneWithin(store.close(), STORE_CLOSE_MS).then((closed) => {
        if (!closed) logger.warn('the store did not close in time; going on');
      });
      await Promise.all([directory.close(), upDirectory?.close(), storeClosed]);
    },
  };
}

/**
 * The directory's notifications for this process (v3, a key, DIRECTORY_NOTIFY_URL not off, and
 * this the process that posts statistics): stored as webhook events (one outbox), with the lease
 * that keeps one connection per key.
 */
function notificationsService(
  options: ServicesOptions,
  store: Store,
  version: string,
  metrics: Metrics | undefined,
): NotificationsService | undefined {
  const { config, logger } = options;
  const { notifyUrl, token } = config.directory;
  if (version !== 'v3' || !options.tasks.stats || notifyUrl === undefined || token === undefined)
    return undefined;
  const hostId = options.host?.id;
  const now = Date.now;
  return new NotificationsService({
    url: notifyUrl,
    key: token,
    intake: notificationIntake({
      // The directory's own events: not held to a server's delivery limits (those are for webhooks).
      webhooks: new WebhookRepository(store),
      inbox: new NotificationInbox(store),
      cadenceMs: V3_UP_EVERY_MS,
      botId: config.discord.botId,
      now,
      onStored: () => options.notifications?.stored?.(),
      onScheduled: (dueAt) => options.notifications?.scheduled?.(dueAt),
      onOutcome: metrics ? (type, via, outcome) => metrics.notification(type, via, outcome) : undefined,
    }),
    lease: keyLease(store, token, leaseHolder(hostId), now),
    logger,
    now,
    onState: metrics ? (state) => metrics.notificationsState(state) : undefined,
    room: { isFull, hold: (err, key, write) => store.holdUntilRoom(err, key, write) },
    ...(options.notifications?.client ? { client: options.notifications.client } : {}),
  });
}
