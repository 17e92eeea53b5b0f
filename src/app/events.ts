import { watchGuilds } from '../events/guilds.js';
import { onceConnected, watchShards } from '../events/shards.js';
import type { InteractionAcknowledger } from '../gateway/acknowledge.js';
import type { ChannelNames } from '../gateway/channel-names.js';
import type { Router } from '../interactions/router.js';
import type { ServerReporter } from '../tasks/server-reports.js';
import { type BackgroundTask, startTasks } from '../tasks/tasks.js';
import { type InteractionRouting, routeInteractions } from './interactions.js';

export function wireClientEvents(
  o: InteractionRouting & {
    channels: ChannelNames;
    /** Started once connected (tasks.ts). */
    tasks: readonly BackgroundTask[];
    /** Answers the ups from before the restart (features/up/recover.ts). */
    recover: () => Promise<number>;
    reporter: ServerReporter | undefined;
  },
): { router: Router; acknowledger: InteractionAcknowledger } {
  const { client, channels, deps, sessions, tasks, recover, logger } = o;
  const { router, acknowledger } = routeInteractions(o);
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
