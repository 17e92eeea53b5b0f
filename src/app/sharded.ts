#!/usr/bin/env node
/**
 * `npm run start:sharded`: one process per shard, for bigger bots, with discord.js's own
 * ShardingManager (maintained with the client, speaks its IPC, respawns crashed shard
 * processes). This manager process is the only one that posts statistics and serves the
 * operations endpoint; it gathers every process's shards over IPC.
 */
import { fileURLToPath } from 'node:url';
import { REST } from '@discordjs/rest';
import { type APIGatewayBotInfo, type Client, Routes, ShardingManager } from 'discord.js';
import { secretsOf } from '../config/env.js';
import { DirectoryClient } from '../directory/index.js';
import type { ShardSnapshot, ShardState } from '../discord/shard-stats.js';
import { createLogger } from '../log/logger.js';
import { createMetrics } from '../ops/metrics.js';
import { startOpsServer } from '../ops/server.js';
import { StatsPoster } from '../tasks/stats-poster.js';
import { installShutdown } from './shutdown.js';
import { checkStatsInterval, loadOrExit } from './startup.js';

const config = loadOrExit(['discordToken']);
checkStatsInterval(config);
const logger = createLogger({ level: config.logLevel, secrets: secretsOf(config) }).child({
  role: 'manager',
});
const metrics = createMetrics({ logger });
const token = config.discord.token!;

/** GET /gateway/bot through DISCORD_API_URL (discord.js's own helper always asks discord.com). */
async function gatewayInfo(): Promise<APIGatewayBotInfo> {
  const rest = new REST(config.discord.apiUrl ? { api: config.discord.apiUrl } : {}).setToken(token);
  return (await rest.get(Routes.gatewayBot())) as APIGatewayBotInfo;
}

/** Runs inside each shard process (serialized by broadcastEval): it may use nothing from here. */
function shardStatesInProcess(client: Client): ShardState[] {
  const ids: number[] = Array.isArray(client.options.shards) ? client.options.shards : [];
  const states = ids.map((id) => {
    const shard = client.ws.shards.get(id);
    // Status.Ready is 0.
    return { id, ready: shard?.status === 0, guilds: 0, members: 0, ping: shard?.ping ?? -1 };
  });
  for (const guild of client.guilds.cache.values()) {
    const state = states.find((s) => s.id === guild.shardId);
    if (!state || !guild.available) continue;
    state.guilds += 1;
    state.members += guild.memberCount ?? 0;
  }
  return states;
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
  const message =
    status === 401
      ? 'Discord rejected DISCORD_TOKEN'
      : 'could not ask Discord for the recommended shard count';
  logger.fatal({ err }, message);
  process.stderr.write(`${message}\n`);
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

async function snapshot(): Promise<ShardSnapshot> {
  // Rejects while a process is still spawning or has died: the poster skips that tick.
  const perProcess = await manager.broadcastEval(shardStatesInProcess);
  return { expectedShards: totalShards, shards: perProcess.flat() };
}

let last: { shards: ShardState[] } = { shards: [] };
const refresh = setInterval(() => {
  snapshot().then(
    (s) => {
      last = s;
    },
    () => {
      last = { shards: [] };
    },
  );
}, 2_000);
refresh.unref();

const directory = new DirectoryClient({
  ...config.directory,
  onRequest: metrics.directoryRequest,
  onRateLimitGrant: metrics.rateLimitGrant,
});
const poster = config.directory.token
  ? new StatsPoster({
      directory,
      logger,
      snapshot,
      intervalMs: config.stats.intervalMs,
      firstDelayMs: config.stats.firstDelayMs,
      stopTimeoutMs: 1_500,
    })
  : undefined;
if (poster) poster.onOutcome = (outcome) => metrics.statsPost(outcome);
metrics.setDiscordSource(() => ({
  guilds: last.shards.reduce((n, s) => n + s.guilds, 0),
  shards: last.shards,
}));

const ops =
  config.httpPort !== undefined
    ? await startOpsServer({
        port: config.httpPort,
        host: config.httpHost,
        metrics,
        logger,
        isReady: () => {
          const notReady = last.shards.filter((s) => !s.ready).map((s) => s.id);
          const ready = last.shards.length === totalShards && notReady.length === 0;
          return { ready, detail: { shards: last.shards.length, expected: totalShards, notReady } };
        },
      })
    : undefined;

const shutdown = installShutdown({
  logger,
  hardLimitMs: 9_500,
  steps: [
    async () => {
      clearInterval(refresh);
      await poster?.stop();
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
      await directory.close();
    },
  ],
});

try {
  await manager.spawn({ amount: totalShards, delay: spawnDelayMs, timeout: 60_000 });
  logger.info({ shards: totalShards }, 'every shard process spawned');
  poster?.start();
} catch (err) {
  logger.fatal({ err }, 'could not spawn the shard processes');
  await shutdown.run(1);
}
