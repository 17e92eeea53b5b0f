#!/usr/bin/env node
/**
 * `npm run start:sharded`: one process per shard, for bigger bots, with discord.js's own
 * ShardingManager (maintained with the client, speaks its IPC, respawns crashed shard
 * processes). This manager process is the only one that posts statistics and serves the
 * operations endpoint; it gathers every process's shards over IPC (shard-stats.ts) and, as one
 * host of several would (hosts/hosts.ts), claims them all in the store, writes their numbers
 * there and posts under the statistics lease. Its store,
 * directory client, tasks and readiness are wired as in every process (services.ts): the store,
 * on PostgreSQL (every process shares it), is opened and migrated here before any shard process
 * starts, so that one that cannot be is one line, not one per shard process.
 */
import { fileURLToPath } from 'node:url';
import { REST } from '@discordjs/rest';
import { type APIGatewayBotInfo, Routes, ShardingManager } from 'discord.js';
import { secretsOf } from '../config/env.js';
import { startWebhookReceiver } from '../features/webhooks/receiver.js';
import { managedShards } from '../gateway/shard-stats.js';
import { say } from '../i18n/operator.js';
import { createLogger } from '../log/logger.js';
import { createMetrics } from '../ops/metrics.js';
import { startTracing, tracingOptions } from '../ops/tracing.js';
import { WebhookRepository } from '../store/index.js';
import { type BackgroundTask, startTasks, stopTasks } from '../tasks/tasks.js';
import { traceFields } from '../trace/spans.js';
import { createServices } from './services.js';
import { installShutdown, SHUTDOWN_HARD_LIMIT_MS } from './shutdown.js';
import { loadOrExit, openOrExit, operatorT, startOpsOrExit } from './startup.js';

const config = loadOrExit(['discordToken', 'databaseUrl']);
const logger = createLogger({
  level: config.logLevel,
  secrets: secretsOf(config),
  ...(config.tracing ? { mixin: traceFields } : {}),
}).child({ role: 'manager' });
const tracing = await startTracing(config.tracing, tracingOptions(config, logger));
const metrics = createMetrics({ logger });
const token = config.discord.token!;

/**
 * GET /gateway/bot through the REST proxy when there is one, else DISCORD_API_URL (discord.js's own
 * helper always asks discord.com).
 */
async function gatewayInfo(): Promise<APIGatewayBotInfo> {
  const api = config.discord.restProxyUrl ?? config.discord.apiUrl;
  const rest = new REST(api ? { api } : {}).setToken(token);
  return (await rest.get(Routes.gatewayBot())) as APIGatewayBotInfo;
}

let totalShards: number;
let spawnDelayMs: number;
try {
  const info = await gatewayInfo();
  totalShards = config.sharding.shardCount === 'auto' ? Math.max(1, info.shards) : config.sharding.shardCount;
  // Discord lets max_concurrency shards identify per 5 s: spawn that fast and no faster.
  const concurrency = Math.max(1, info.session_start_limit.max_concurrency);
  spawnDelayMs = Math.ceil(5_500 / concurrency);
} catch (err) {
  const status = typeof err === 'object' && err !== null && 'status' in err ? Number(err.status) : 0;
  const key = status === 401 ? 'start.tokenRejected' : 'start.shardCountFailed';
  // The log line stays English (it is read by machines and searched for); the terminal's line is the operator's.
  logger.fatal({ err }, say('en', key));
  process.stderr.write(`${operatorT()(key)}\n`);
  process.exit(1);
}

const manager = new ShardingManager(fileURLToPath(new URL('./main.js', import.meta.url)), {
  token,
  totalShards,
  mode: 'process',
  respawn: true,
});
manager.on('shardCreate', (shard) => {
  logger.info({ shard: shard.id }, 'shard process started');
  shard.on('death', () => {
    if (manager.respawn) logger.warn({ shard: shard.id }, 'shard process died; respawning');
    else logger.info({ shard: shard.id }, 'shard process exited');
  });
  shard.on('ready', () => logger.info({ shard: shard.id }, 'shard ready'));
});

const shards = managedShards(manager, totalShards, logger);
// Counted while the processes spawn already: the host's heartbeat writes what it sees.
shards.refresh.start();
// The shard processes report their own guilds' joins and leaves.
const services = await openOrExit(() =>
  createServices({
    config,
    logger,
    metrics,
    shards,
    sharedLimits: true,
    // One host of the design of several (hosts/hosts.ts) that runs every shard: its shards are
    // claimed (a second manager, or a host with SHARD_IDS, on the same store is refused), and
    // it posts the statistics under the lease, so that no period is posted twice whatever runs.
    host: {
      id: config.sharding.hostId,
      shardIds: Array.from({ length: totalShards }, (_, id) => id),
      shardCount: totalShards,
    },
    tasks: { stats: config.directory.token !== undefined, reports: false },
  }),
);

const ops =
  config.httpPort !== undefined
    ? await startOpsOrExit({
        port: config.httpPort,
        host: config.httpHost,
        metrics,
        logger,
        isReady: () => services.readiness(),
      })
    : undefined;

// The directory's webhooks come to this process's one port; the shard processes announce what it
// stores (they look at the store every few seconds: store/webhooks.ts, features/webhooks/).
const receiver =
  config.webhook.port !== undefined
    ? await startWebhookReceiver({
        port: config.webhook.port,
        host: config.webhook.host,
        webhooks: new WebhookRepository(services.store, config.webhook.intake),
        logger,
        rateLimit: config.webhook.rateLimit,
        trustProxy: config.webhook.trustProxy,
        botId: config.discord.botId,
        onDelivery: (outcome, seconds) => metrics.webhookDelivery(outcome, seconds),
      }).catch(async (err: unknown) => {
        process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
        await services.close();
        process.exit(1);
      })
    : undefined;

/**
 * Every background task of the manager, started in this order once every shard process is spawned
 * and stopped together at shutdown: a new one is added here (or, for every process, in services.ts).
 */
const tasks: BackgroundTask[] = [...services.tasks, shards.refresh];

const shutdown = installShutdown({
  logger,
  hardLimitMs: SHUTDOWN_HARD_LIMIT_MS,
  steps: [
    async () => {
      await receiver?.close();
      await stopTasks(tasks, logger);
    },
    async () => {
      manager.respawn = false;
      // Each shard process gets SIGTERM and shuts down gracefully on its own.
      await Promise.all(
        [...manager.shards.values()].map(
          (shard) =>
            new Promise<void>((resolve) => {
              const process = shard.process;
              if (!process || process.exitCode !== null) {
                resolve();
                return;
              }
              process.once('exit', () => resolve());
              process.kill('SIGTERM');
            }),
        ),
      );
    },
    async () => {
      await ops?.close();
      await services.close();
      await tracing?.shutdown();
    },
  ],
});

try {
  await manager.spawn({ amount: totalShards, delay: spawnDelayMs, timeout: 60_000 });
  logger.info({ shards: totalShards }, 'every shard process spawned');
  startTasks(tasks, logger);
} catch (err) {
  logger.fatal({ err }, 'could not spawn the shard processes');
  await shutdown.run(1);
}
