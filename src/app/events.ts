import { Events, type Guild } from 'discord.js';
import { watchGuilds } from '../events/guilds.js';
import { onceConnected, watchShards } from '../events/shards.js';
import { recentlyJoined, welcome } from '../features/setup/welcome.js';
import type { InteractionAcknowledger } from '../gateway/acknowledge.js';
import type { ChannelNames } from '../gateway/channel-names.js';
import type { Router } from '../interactions/router.js';
import type { WelcomeRepository } from '../store/welcomes.js';
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
    /** The message posted on joining a server, once per server (features/setup/welcome.ts). */
    welcomes: WelcomeRepository;
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
    // Invited while the bot was not running (the README's order: invite, then start): welcomed now.
    for (const guild of recentlyJoined(client.guilds.cache.values(), deps.now())) greet(guild);
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
  const greet = (guild: Guild): void => {
    void welcome(
      { ...deps, welcomes: o.welcomes },
      {
        guildId: guild.id,
        locale: guild.preferredLocale ?? null,
        botId: client.user?.id ?? guild.client.user.id,
        candidates: channels.postCandidates(guild.id, 5),
      },
    );
  };
  // discord.js emits GuildCreate for a server joined, not for one that becomes available again.
  client.on(Events.GuildCreate, greet);
  watchShards(client, logger, o.onFatal);
  return { router, acknowledger };
}
