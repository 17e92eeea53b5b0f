/**
 * What every process of the bot wires the same way, in one place: the directory client with its
 * metrics hooks, the background tasks (src/tasks/) with theirs, readiness for /readyz and the
 * metrics' view of the shards. A process with a Discord client gets it through createBot (bot.ts);
 * the sharding manager (sharded.ts) directly. A new background task is built, started and stopped
 * here, and each entry point says whether it runs in that process.
 */
import type { Config } from '../config/env.js';
import { DirectoryClient } from '../directory/index.js';
import type { ShardView } from '../discord/shard-stats.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../ops/metrics.js';
import type { Readiness } from '../ops/server.js';
import { ServerReporter } from '../tasks/server-reports.js';
import { StatsPoster, type StatsPosterOptions } from '../tasks/stats-poster.js';

export interface ServicesOptions {
  config: Config;
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
  /** Overrides for the poster (tests shorten its delays). */
  stats?: Partial<Omit<StatsPosterOptions, 'directory' | 'logger' | 'snapshot' | 'onOutcome'>> | undefined;
}

export interface Services {
  directory: DirectoryClient;
  poster: StatsPoster | undefined;
  reporter: ServerReporter | undefined;
  /** Every shard of the bot ready (for /readyz), with the shards that are not. */
  readiness(): Readiness;
  /** Starts the tasks that wait for the bot to be connected. */
  start(): void;
  /** Stops every task, each within its own bound. */
  stop(): Promise<void>;
  /** Closes the directory client (after stop). */
  close(): Promise<void>;
}

/** Short: the whole shutdown has to fit in Docker's 10 s. */
const TASK_STOP_MS = 1_500;

export function createServices(options: ServicesOptions): Services {
  const { config, logger, metrics, shards } = options;
  const directory =
    options.directory ??
    new DirectoryClient({
      ...config.directory,
      ...(metrics ? { onRequest: metrics.directoryRequest, onRateLimitGrant: metrics.rateLimitGrant } : {}),
    });
  const reporter = options.tasks.reports
    ? new ServerReporter({ directory, logger, stopTimeoutMs: TASK_STOP_MS, onResult: metrics?.serverReport })
    : undefined;
  const poster = options.tasks.stats
    ? new StatsPoster({
        directory,
        logger,
        snapshot: () => shards.snapshot(),
        intervalMs: config.stats.intervalMs,
        firstDelayMs: config.stats.firstDelayMs,
        stopTimeoutMs: TASK_STOP_MS,
        ...options.stats,
        onOutcome: metrics ? (outcome) => metrics.statsPost(outcome) : undefined,
      })
    : undefined;
  metrics?.setDiscordSource(() => {
    const latest = shards.latest();
    return { guilds: latest.guilds, shards: latest.snapshot.shards };
  });

  return {
    directory,
    poster,
    reporter,
    readiness() {
      const { snapshot, connected } = shards.latest();
      const notReady = snapshot.shards.filter((s) => !s.ready).map((s) => s.id);
      const ready = connected && notReady.length === 0 && snapshot.shards.length >= snapshot.expectedShards;
      return {
        ready,
        detail: { shards: snapshot.shards.length, expected: snapshot.expectedShards, notReady },
      };
    },
    start() {
      // The poster checks itself that every shard is ready before it posts.
      poster?.start();
    },
    async stop() {
      await Promise.all([poster?.stop(), reporter?.stop()]);
    },
    close: () => directory.close(),
  };
}
