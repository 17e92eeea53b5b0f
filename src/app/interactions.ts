/**
 * How interactions reach the handlers (bot.ts builds it once): the router, the acknowledger that
 * sends the first responses, and what the bot hooks into the gateway for them (gateway-tap.ts):
 * the deferral table and address the gateway's thread defers by, the sessions it resumes, the
 * identify budget, and what is said when the thread is lost.
 */
import { type Client, Events } from 'discord.js';
import type { Config } from '../config/env.js';
import { deferralAddress, InteractionAcknowledger } from '../gateway/acknowledge.js';
import type { GatewaySessions } from '../gateway/gateway-sessions.js';
import type { InteractionTap } from '../gateway/gateway-tap.js';
import type { PrestartedThread } from '../gateway/gateway-thread-start.js';
import { identifyBudgetRefusal } from '../gateway/identify-budget.js';
import { IdentifyPace } from '../gateway/identify-pace.js';
import { createRouter, type Router, type RouterHooks } from '../interactions/router.js';
import type { BotDeps, Registry } from '../interactions/types.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../ops/metrics.js';

export interface InteractionRouting {
  client: Client;
  interactions: InteractionTap;
  registry: Registry;
  deps: BotDeps;
  /** Discord's API root for the deferrals, never the REST proxy (client.ts). */
  directApi: string;
  sessions: GatewaySessions;
  gatewayThread: PrestartedThread;
  config: Config;
  logger: Logger;
  metrics: Metrics | undefined;
  onHandled: RouterHooks['onHandled'];
  onFatal: ((reason: string) => void) | undefined;
}

export function routeInteractions(o: InteractionRouting): {
  router: Router;
  acknowledger: InteractionAcknowledger;
} {
  const { client, interactions, registry, metrics, logger } = o;
  const hooks: RouterHooks = {
    onHandled: (event) => {
      metrics?.interaction(event);
      o.onHandled?.(event);
    },
  };
  // Deferrals go out from the gateway packet on connections of their own (acknowledge.ts), straight
  // to Discord even when the rest goes through the REST proxy.
  const address = deferralAddress(o.directApi, client.rest.options);
  const acknowledger = new InteractionAcknowledger(address);
  const router = createRouter(registry, o.deps, hooks, acknowledger);

  // The gateway's thread sends each slash command's deferral itself (gateway-thread.ts); the
  // router takes it from the acknowledger as if sent here. A button's is sent here, from its
  // packet, before discord.js builds the interaction.
  interactions.deferrals = {
    rules: registry.deferrals,
    acknowledger: address,
  };
  interactions.onDeferral = (id, deferral, done) => acknowledger.track(id, deferral, done);
  interactions.onInteraction = (data) => router.acknowledge(data);
  interactions.onError = (err, event) => logger.error({ err, event }, 'discord.js failed on a gateway event');
  // Identifies while running: paced when a shard keeps losing its session, and never below the floor.
  const pace = new IdentifyPace({
    floor: o.config.discord.identifyFloor,
    logger: logger.child({ component: 'discord-gateway' }),
  });
  interactions.beforeIdentify = (shardId, signal) => pace.before(shardId, signal);
  interactions.onSessionStartLimit = (limit) => {
    pace.told(limit);
    metrics?.sessionStartLimit(limit);
  };
  if (metrics) interactions.onSession = (shardId, kind) => metrics.gatewaySession(shardId, kind);
  interactions.sessions = o.sessions;
  interactions.prestarted = o.gatewayThread;
  o.sessions.start();
  interactions.identifyBudgetRefusal = (limit, shards) =>
    identifyBudgetRefusal(limit, shards, o.config.discord.identifyFloor);
  interactions.onThreadLost = (err) => {
    logger.fatal({ err }, 'the gateway thread stopped: the bot no longer hears Discord');
    o.onFatal?.('the gateway thread stopped');
  };
  client.on(Events.InteractionCreate, (interaction) => {
    void router.handle(interaction);
  });
  return { router, acknowledger };
}
