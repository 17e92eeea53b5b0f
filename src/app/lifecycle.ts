/**
 * The bot's start and stop (bot.ts's start() and stop()): start opens the webhook receiver and
 * logs in; stop closes everything in order, each step bounded, and is the same promise however
 * often it is asked for. The signals that call stop are shutdown.ts's.
 */
import type { Client } from 'discord.js';
import type { Dispatcher } from 'undici';
import type { Config } from '../config/env.js';
import { startWebhookReceiver, type WebhookReceiver } from '../features/webhooks/receiver.js';
import type { InteractionAcknowledger } from '../gateway/acknowledge.js';
import type { AnswersApart } from '../gateway/answers-rest.js';
import type { GatewaySessions } from '../gateway/gateway-sessions.js';
import type { InteractionTap } from '../gateway/gateway-tap.js';
import type { PrestartedThread } from '../gateway/gateway-thread-start.js';
import type { Router } from '../interactions/router.js';
import type { BotDeps } from '../interactions/types.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../ops/metrics.js';
import type { ChartRenderer } from '../render/charts.js';
import { type BackgroundTask, stopTasks } from '../tasks/tasks.js';
import { doneWithin } from '../time/bounded.js';
import type { Services } from './services.js';

const DESTROY_BOUND_MS = 2_000;

/** What start() opened and stop() closes, kept between the calls. */
export interface BotRun {
  /** The webhook receiver, once started; undefined without one here. */
  receiver: WebhookReceiver | undefined;
  /** The shutdown, once asked for. */
  stopping: Promise<void> | undefined;
}

/** Opens the webhook receiver when WEBHOOK_PORT is set and this process receives them, then logs in. */
export async function startBot(
  o: {
    config: Config;
    client: Client;
    /** False: the sharding manager has the one port. */
    receiveWebhooks: boolean | undefined;
    deps: BotDeps;
    /** Woken by each event stored. */
    announcer: { wake(): void };
    logger: Logger;
    metrics: Metrics | undefined;
  },
  run: BotRun,
): Promise<void> {
  const { config, deps, logger, metrics } = o;
  if (!config.discord.token) throw new Error('DISCORD_TOKEN is not set');
  if (config.webhook.port !== undefined && o.receiveWebhooks !== false && !run.receiver) {
    run.receiver = await startWebhookReceiver({
      port: config.webhook.port,
      host: config.webhook.host,
      webhooks: deps.webhooks,
      logger,
      rateLimit: config.webhook.rateLimit,
      trustProxy: config.webhook.trustProxy,
      now: deps.now,
      onStored: () => o.announcer.wake(),
      botId: config.discord.botId,
      ...(metrics ? { onDelivery: (outcome, seconds) => metrics.webhookDelivery(outcome, seconds) } : {}),
    });
  }
  // The day's identify budget is checked as the shards start (IDENTIFY_BUDGET_FLOOR, every mode).
  await o.client.login(config.discord.token);
}

export interface StopParts {
  client: Client;
  interactions: InteractionTap;
  /** The interaction answers' REST: answers still being tried again end at the client's close. */
  answers: AnswersApart;
  router: Router;
  acknowledger: InteractionAcknowledger;
  sessions: GatewaySessions;
  gatewayThread: PrestartedThread;
  tasks: readonly BackgroundTask[];
  /** The Discord REST agent (gateway/rest-agent.ts): its keep-alive connections. */
  restAgent: Dispatcher;
  charts: ChartRenderer;
  services: Services;
  logger: Logger;
}

/** Stops once: a second call gets the first one's promise. */
export function stopBot(o: StopParts, run: BotRun, drainMs: number): Promise<void> {
  run.stopping ??= shutDown(o, run, drainMs);
  return run.stopping;
}

/**
 * Stops taking interactions, lets those in flight finish (bounded), closes the shards keeping
 * their sessions, then the receiver, the tasks, the client and what is left.
 */
async function shutDown(o: StopParts, run: BotRun, drainMs: number): Promise<void> {
  const { router, interactions, logger } = o;
  router.close();
  interactions.stopDeferring?.();
  const drained = await router.drain(drainMs);
  if (!drained) logger.warn({ inFlight: router.inFlight }, 'interactions still running at shutdown');
  // While the interactions in flight finished, those that came were told "restarting". From
  // here what Discord sends is replayed to the next process, which resumes the sessions saved
  // here (gateway-sessions.ts) instead of identifying: the shards close keeping them.
  const suspended = await doneWithin(interactions.suspend?.() ?? Promise.resolve(), DESTROY_BOUND_MS);
  if (!suspended) logger.warn('the shards did not close in time; going on');
  await o.sessions.close();
  // Never taken: the bot stopped before it logged in.
  await o.gatewayThread.close();
  // Deliveries stop first: an event stored from here on is announced at the next start.
  await run.receiver?.close();
  await stopTasks(o.tasks, logger);
  // @discordjs/ws 1.2 can leave destroy() pending forever when a shard waits for READY
  // (its abort handler starts a second destroy): never let that hold the shutdown.
  o.answers.close();
  const destroyed = await doneWithin(o.client.destroy(), DESTROY_BOUND_MS);
  if (!destroyed) logger.warn('the Discord client did not close in time; going on');
  // Its idle keep-alive connections; a request still on its way has no one left to answer.
  await Promise.all([o.restAgent.destroy(), o.acknowledger.close(), o.charts.close()]);
  await o.services.close();
}
