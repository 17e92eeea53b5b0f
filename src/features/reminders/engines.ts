/**
 * The reminders' two engines, built once for the bot (app/deps.ts): the scheduler that posts them
 * and the follow-ups that edit a posted reminder once the server is upped. `followUp` is what an
 * up calls (the bot's /up, the directory's bump webhook): never throws, a store that fails costs
 * the edit (one warn line), never the up.
 */
import type { REST } from 'discord.js';
import type { CommandMentions } from '../../discord/command-mentions.js';
import type { GuildFactsLookup } from '../../discord/guild-posts.js';
import type { Logger } from '../../log/logger.js';
import type { Metrics } from '../../ops/metrics.js';
import { FollowupRepository } from '../../store/followups.js';
import type { ReminderRepository } from '../../store/reminders.js';
import type { SettingsRepository } from '../../store/settings.js';
import type { Store } from '../../store/store.js';
import { FollowupScheduler } from './followups.js';
import type { ReminderRoles } from './roles.js';
import { ReminderScheduler } from './scheduler.js';
import { DiscordReminderSender } from './send.js';

export interface ReminderEngines {
  scheduler: ReminderScheduler;
  followups: FollowupScheduler;
  /**
   * The server was upped by `userId` at `at`: its posted reminder gets its follow-up. How long
   * after the reminder the up came, or undefined when there was none to follow through.
   */
  followUp(guildId: string, up: { userId: string; at: number }): Promise<number | undefined>;
}

export function reminderEngines(options: {
  store: Store;
  reminders: ReminderRepository;
  settings: SettingsRepository;
  rest: REST;
  commands: CommandMentions;
  guild: GuildFactsLookup;
  roles: ReminderRoles;
  owner: string;
  ownsGuild: ((guildId: string) => boolean) | undefined;
  leaseMs: number;
  logger: Logger;
  now: () => number;
  metrics: Metrics | undefined;
}): ReminderEngines {
  const { reminders, settings, owner, ownsGuild, leaseMs, logger, now, metrics } = options;
  const followupRepository = new FollowupRepository(options.store);
  const sender = new DiscordReminderSender({
    rest: options.rest,
    settings,
    commands: options.commands,
    guild: options.guild,
    roleDeleted: (guildId, roleId) => options.roles.isDeleted(guildId, roleId),
    followups: followupRepository,
    logger,
    now,
  });
  const scheduler = new ReminderScheduler({
    reminders,
    owner,
    ownsGuild,
    leaseMs,
    logger,
    now,
    sender,
    onDone: metrics ? (event) => metrics.reminder(event) : undefined,
  });
  const followups = new FollowupScheduler({
    followups: followupRepository,
    sender,
    owner,
    ownsGuild,
    leaseMs,
    logger,
    now,
  });
  return {
    scheduler,
    followups,
    async followUp(guildId, up) {
      try {
        const postedAt = await followupRepository.take(guildId, up);
        if (postedAt === null) return undefined;
        followups.wake();
        return up.at - postedAt;
      } catch (err) {
        logger.warn({ err, guildId }, "could not note the up on the server's reminder");
        return undefined;
      }
    },
  };
}
