/**
 * What the bot does on the Discord client's events (bot.ts wires them once): interactions routed
 * to the handlers (interactions.ts), the background tasks started and the ups from before a
 * restart answered once connected, the guilds watched (events/guilds.ts), the shards watched
 * (events/shards.ts).
 */
import type { Client } from 'discord.js';
import type { Config } from '../config/env.js';
import { watchGuilds } from '../events/guilds.js';
import { onceConnected, watchShards } from '../events/shards.js';
import type { InteractionAcknowledger } from '../gateway/acknowledge.js';
import type { ChannelNames } from '../gateway/channel-names.js';
import type { GatewaySessions } from '../gateway/gateway-sessions.js';
import type { InteractionTap } from '../gateway/gateway-tap.js';
import type { PrestartedThread } from '../gateway/gateway-thread-start.js';
import type { Router, RouterHooks } from '../interactions/router.js';
import type { BotDeps, Registry } from '../interactions/types.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../ops/metrics.js';
import type { ServerReporter } from '../tasks/server-reports.js';
import { type BackgroundTask, startTasks } from '../tasks/tasks.js';
import { routeInteractions } from './interactions.js';

export function wireClientEvents(o: {
  client: Client;
  channels: ChannelNames;
  interactions: InteractionTap;
  /** Discord's API root for the deferrals, never the REST proxy (client.ts). */
  directApi: string;
  registry: Registry;
  deps: BotDeps;
  sessions: GatewaySessions;
  gatewayThread: PrestartedThread;
  /** Started once connected (tasks.ts). */
  tasks: readonly BackgroundTask[];
  /** Answers the ups from before the restart (features/up/recover.ts). */
  recover: () => Promise<number>;
  reporter: ServerReporter | undefined;
  config: Config;
  logger: Logger;
  metrics: Metrics | undefined;
  onHandled: RouterHooks['onHandled'];
  onFatal: ((reason: string) => void) | undefined;
}): { router: Router; acknowledger: InteractionAcknowledger } {
  const { client, channels, deps, sessions, tasks, recover, logger } = o;
  const { router, acknowledger } = routeInteractions({
    client,
    interactions: o.interactions,
    registry: o.registry,
    deps,
    directApi: o.directApi,
    sessions,
    gatewayThread: o.gatewayThread,
    config: o.config,
    logger,
    metrics: o.metrics,
    onHandled: o.onHandled,
    onFatal: o.onFatal,
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
  watchGuilds({
    client,
    channels,
    discord: deps.discord,
    reporter: o.reporter,
    settings: deps.settings,
    logger,
  });
  watchShards(client, logger, o.onFatal);
  return { router, acknowledger };
}
