/**
 * The features that run beside the commands, built once for the bot (app/deps.ts): the reminders'
 * engines and the watch of their roles, the directory's webhook announcements, the digests and live
 * leaderboards, the reward roles, and what an up recorded tells them (`upRecorded`). Wiring only.
 */
import type { Client, REST } from 'discord.js';
import type { CommandMentions } from '../discord/command-mentions.js';
import type { GuildFactsLookup } from '../discord/guild-posts.js';
import { discordRoles } from '../discord/roles.js';
import { type PostEngines, postEngines } from '../features/digests/engines.js';
import { StreakWatch } from '../features/history/streak-watch.js';
import { type ReminderEngines, reminderEngines } from '../features/reminders/engines.js';
import { ReminderRoles } from '../features/reminders/roles.js';
import { RewardEngine } from '../features/rewards/engine.js';
import { discordRewardGranter } from '../features/rewards/grant.js';
import { V3_UP_EVERY_MS } from '../features/up/follows.js';
import { WebhookAnnouncer } from '../features/webhooks/announcer.js';
import { DirectoryEventHandler } from '../features/webhooks/handle.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from '../ops/metrics.js';
import type { ChartRenderer } from '../render/charts.js';
import type {
  HistoryRepository,
  ReminderRepository,
  SettingsRepository,
  Store,
  WebhookRepository,
} from '../store/index.js';
import { CommentPostRepository, UpWatchRepository } from '../store/notifications.js';
import { RewardRepository } from '../store/rewards.js';
import { StreakNoticeRepository } from '../store/streak-notices.js';

export interface ServerFeatures {
  engines: ReminderEngines;
  reminderRoles: ReminderRoles;
  announcer: WebhookAnnouncer;
  postsEngines: PostEngines;
  rewards: RewardRepository;
  rewardEngine: RewardEngine;
  streakWatch: StreakWatch;
  /** What follows from an up recorded (the bot's /up, the directory's webhook). Never throws. */
  upRecorded(guildId: string, userId: string, at: number): Promise<void>;
}

export function serverFeatures(options: {
  client: Client;
  store: Store;
  settings: SettingsRepository;
  reminders: ReminderRepository;
  history: HistoryRepository;
  webhooks: WebhookRepository;
  commands: CommandMentions;
  guild: GuildFactsLookup;
  charts: ChartRenderer;
  owner: string;
  ownsGuild: ((guildId: string) => boolean) | undefined;
  leaseMs: number;
  logger: Logger;
  now: () => number;
  metrics: Metrics | undefined;
  /** The directory's record of a server is stale once it was upped (DirectoryClient.forget). */
  forget: (guildId: string) => void;
  /** The directory's interface is v3: its cadence restarts reminders, its /up answers wait for ups. */
  v3: boolean;
}): ServerFeatures {
  const { client, store, settings, reminders, history, webhooks, commands, guild, charts } = options;
  const { owner, ownsGuild, leaseMs, logger, now, metrics } = options;
  const rest: REST = client.rest;
  /** What every outbox engine here runs with: this process's claims, its guilds, its clock. */
  const running = { owner, ownsGuild, leaseMs, logger, now };
  const reminderRoles = new ReminderRoles({ settings, logger });
  reminderRoles.watch(client);
  const engines = reminderEngines({
    store,
    reminders,
    settings,
    rest,
    commands,
    guild,
    roles: reminderRoles,
    ...running,
    metrics,
  });
  const { scheduler, followUp } = engines;
  const wakeReminders = (dueAt: number): void => scheduler.wake(dueAt);
  // Each server's digests and live leaderboard (features/digests).
  const postsEngines = postEngines({
    store,
    settings,
    history,
    rest,
    charts,
    guild,
    ...running,
  });
  // Each server's reward roles (features/rewards).
  const rewards = new RewardRepository(store);
  const rewardEngine = new RewardEngine({
    rewards,
    settings,
    history,
    granter: discordRewardGranter({ roles: discordRoles(rest), botUserId: () => client.user?.id }),
    ...running,
  });
  /** What follows from an up recorded (the bot's /up, the directory's webhook). Never throws. */
  const upRecorded = async (guildId: string, userId: string, at: number): Promise<void> => {
    await Promise.all([
      postsEngines.posts.upRecorded(guildId, at),
      rewardEngine.afterUp(guildId, userId, at),
    ]);
  };
  const announcer = new WebhookAnnouncer({
    webhooks,
    owner,
    onDone: metrics ? (event) => metrics.webhookEvent(event) : undefined,
    leaseMs,
    logger,
    now,
    handler: new DirectoryEventHandler({
      rest,
      webhooks,
      settings,
      history,
      reminders,
      wakeReminders,
      followUp,
      upRecorded,
      forget: options.forget,
      comments: new CommentPostRepository(store),
      ...(options.v3 ? { watches: new UpWatchRepository(store), cadenceMs: V3_UP_EVERY_MS } : {}),
      guild,
      logger,
      now,
    }),
  });
  // Each server's streak said when a window's grace runs out with no up.
  const streakWatch = new StreakWatch({
    notices: new StreakNoticeRepository(store),
    history,
    settings,
    rest,
    guild,
    ...running,
  });
  return { engines, reminderRoles, announcer, postsEngines, rewards, rewardEngine, streakWatch, upRecorded };
}
