/**
 * The bot's process, started by main.ts once the configuration is read and the gateway's thread is
 * on its way: the logger and metrics, the store, a restart's sessions resumed (early-resume.ts),
 * then the bot, its operations endpoint and its shutdown.
 */
import { type Config, secretsOf } from '../config/env.js';
import type { PrestartedThread } from '../gateway/gateway-thread-start.js';
import { createLogger } from '../log/logger.js';
import { createMetrics } from '../ops/metrics.js';
import { startTracing, tracingOptions } from '../ops/tracing.js';
import { traceFields } from '../trace/spans.js';
import { resumeEarly } from './early-resume.js';
import { openBotStore } from './open-store.js';
import { installShutdown, SHUTDOWN_HARD_LIMIT_MS } from './shutdown.js';
import { openOrExit, startOpsOrExit } from './startup.js';

export async function runBot(config: Config, gatewayThread: PrestartedThread): Promise<void> {
  const child = config.sharding.isChild;
  const logger = createLogger({
    level: config.logLevel,
    secrets: secretsOf(config),
    ...(config.tracing ? { mixin: traceFields } : {}),
  });
  const tracing = await startTracing(config.tracing, tracingOptions(config, logger));
  if (!config.directory.token) {
    logger.warn('DIRECTORY_TOKEN is not set: look-ups work; /up, comments, server reports and stats do not');
  }

  // A shard process leaves statistics and the operations endpoint to the manager.
  const metrics = child ? undefined : createMetrics({ logger });
  // A restart's shards resume first (early-resume.ts), and the bot's modules load meanwhile: only
  // what opens the store and reads the sessions is loaded above.
  const store = await openOrExit(() => openBotStore({ config, logger, metrics }));
  const early = await resumeEarly({ config, store, logger, thread: gatewayThread });
  const [{ createBot }, { registry }, { IdentifyBudgetError }, { WebhookListenError }] = await Promise.all([
    import('./bot.js'),
    import('../../commands/index.js'),
    import('../gateway/identify-budget.js'),
    import('../features/webhooks/receiver.js'),
  ]);
  const bot = await openOrExit(() =>
    createBot({
      config,
      store,
      gatewayThread,
      ...(early ? { sessions: early } : {}),
      logger,
      registry,
      postStats: !child && config.directory.token !== undefined,
      // The sharding manager has the one webhook port.
      receiveWebhooks: !child,
      ...(metrics ? { metrics } : {}),
      onFatal: (reason) => {
        process.stderr.write(`${reason}\n`);
        void shutdown.run(1);
      },
    }),
  );

  const ops =
    metrics && config.httpPort !== undefined
      ? await startOpsOrExit({
          port: config.httpPort,
          host: config.httpHost,
          metrics,
          isReady: () => bot.readiness(),
          logger,
        })
      : undefined;

  const shutdown = installShutdown({
    logger,
    hardLimitMs: SHUTDOWN_HARD_LIMIT_MS,
    steps: [() => bot.stop(), async () => ops?.close(), async () => tracing?.shutdown()],
  });

  if (child) {
    // The manager is gone (killed, crashed): a shard process must not live on without it.
    process.once('disconnect', () => {
      logger.warn('the sharding manager is gone; shutting down');
      void shutdown.run(0);
    });
    // discord.js may still try to report to the dead manager: that must not crash the shutdown.
    process.on('error', (err) => logger.warn({ err }, 'IPC error'));
  }

  try {
    await bot.start();
  } catch (err) {
    const code = err instanceof Error && 'code' in err ? String(err.code) : '';
    const message =
      code === 'TokenInvalid'
        ? 'Discord rejected DISCORD_TOKEN: check the token in the Discord developer portal'
        : err instanceof WebhookListenError || err instanceof IdentifyBudgetError
          ? err.message
          : `could not connect to Discord: ${err instanceof Error ? err.message : String(err)}`;
    logger.fatal({ err }, message);
    process.stderr.write(`${message}\n`);
    await shutdown.run(1);
  }
}
