/**
 * What the handlers get (`BotDeps`, interactions/types.ts), built once for the bot (bot.ts): the
 * store's repositories, the features that run beside the commands (features.ts), the Discord
 * boundary (src/discord/) and the suggestions. Wiring only.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Client } from 'discord.js';
import type { Config } from '../config/env.js';
import { CommandMentions } from '../discord/command-mentions.js';
import { guildFactsLookup } from '../discord/guild-posts.js';
import { GuildStatsSource } from '../discord/guild-stats.js';
import { discordLookups } from '../discord/lookups.js';
import { channelMessages } from '../discord/messages.js';
import { channelPermissionsLookup } from '../discord/permissions.js';
import { discordRoles } from '../discord/roles.js';
import type { ChannelNames } from '../gateway/channel-names.js';
import type { ShardOwnership } from '../hosts/ownership.js';
import { LookupSuggestions } from '../interactions/suggestions.js';
import type { BotDeps } from '../interactions/types.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../ops/metrics.js';
import { ChartRenderer } from '../render/charts.js';
import {
  HistoryRepository,
  ReminderRepository,
  SettingsRepository,
  StoreUpJournal,
  UpWatchRepository,
  WebhookRepository,
} from '../store/index.js';
import { type ServerFeatures, serverFeatures } from './features.js';
import type { Services } from './services.js';

/** The deps, and what was built for them that the bot uses beside: tasks, events, shutdown. */
export interface BotParts {
  deps: BotDeps;
  /** The reminders' engines, the announcer, the digests, the rewards, the streaks (features.ts). */
  features: ServerFeatures;
  /** The deps' journal as the store keeps it: a host of several adopts a gone host's ups from it. */
  journal: StoreUpJournal;
  /** An up's guild statistics; its refresher is a background task (tasks.ts). */
  guildStats: GuildStatsSource;
  /** Closed at stop (its worker). */
  charts: ChartRenderer;
}

export function botDeps(o: {
  client: Client;
  channels: ChannelNames;
  config: Config;
  services: Services;
  ownership: ShardOwnership;
  logger: Logger;
  now: () => number;
  metrics: Metrics | undefined;
  /** How long a Discord look-up (an up's guild statistics, a user's name) may take. */
  gatherTimeoutMs: number;
}): BotParts {
  const { client, channels, config, services, ownership, logger, now, metrics, gatherTimeoutMs } = o;
  const { directory, store } = services;

  // The store's repositories, and what the features built on them.
  const settings = new SettingsRepository(store);
  const reminders = new ReminderRepository(store);
  const history = new HistoryRepository(store);
  const webhooks = new WebhookRepository(store, config.webhook.intake);
  const journal = new StoreUpJournal(store, { owner: ownership.journalOwner() });
  const commands = new CommandMentions({
    rest: client.rest,
    applicationId: () => client.application?.id ?? null,
    logger,
  });
  const guild = guildFactsLookup(client, logger);
  const charts = new ChartRenderer();
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const features = serverFeatures({
    client,
    store,
    settings,
    reminders,
    history,
    webhooks,
    commands,
    guild,
    charts,
    owner,
    ownsGuild: ownership.guildFilter(),
    leaseMs: config.reminderClaimMs,
    logger,
    now,
    metrics,
    forget: (guildId) => directory.forget('server', guildId),
    v3: directory.version === 'v3',
  });
  const { engines, postsEngines, rewards, reminderRoles, upRecorded } = features;
  const { scheduler, followUp } = engines;
  const wakeReminders = (dueAt: number): void => scheduler.wake(dueAt);
  // An up's guild statistics from the gateway's cache, the rest refreshed in the background.
  const guildStats = new GuildStatsSource({
    rest: client.rest,
    cached: (guildId) => client.guilds.cache.get(guildId),
    timeoutMs: gatherTimeoutMs,
    logger,
  });
  const deps: BotDeps = {
    directory,
    discord: discordLookups(client, channels, gatherTimeoutMs, (guildId, onError) =>
      guildStats.stats(guildId, onError),
    ),
    logger,
    now,
    journal,
    settings,
    reminders,
    history,
    charts,
    wakeReminders,
    followUp,
    posts: postsEngines.posts,
    rewards,
    upRecorded,
    reminderRoleChosen: (guildId, roleId) => reminderRoles.chosen(guildId, roleId),
    commands,
    messages: channelMessages(client.rest),
    permissions: channelPermissionsLookup(client.rest),
    roles: discordRoles(client.rest),
    webhooks,
    webhookReceiver: { listening: config.webhook.port !== undefined, publicUrl: config.webhook.publicUrl },
    upDirectory: services.upDirectory,
    ...(directory.version === 'v3'
      ? {
          upWatches: new UpWatchRepository(store),
          // The key's WebSocket, or webhooks received here: an up's notification can come.
          notificationsOn: config.directory.notifyUrl !== undefined || config.webhook.port !== undefined,
        }
      : {}),
    suggestions: new LookupSuggestions({
      // The lowest priority: an /up never waits behind a suggestion.
      ownBots: (userId) => directory.getDeveloperBots(userId, { priority: 'background' }),
      // v3 with a key: the directory's search, at the lowest priority, given up after 3 s.
      search:
        directory.version === 'v3' && config.directory.token !== undefined
          ? (kind, query) =>
              directory.search(kind, query, { priority: 'background', limit: 10, deadline: now() + 3_000 })
          : undefined,
      now,
      logger,
    }),
  };
  return { deps, features, journal, guildStats, charts };
}
