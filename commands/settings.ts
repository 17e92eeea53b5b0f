/**
 * /settings reminders | reminders-off | language | timezone | thanks | digest | digest-off |
 * live-leaderboard | live-leaderboard-off | rewards add | remove | show | top-role | show | webhook |
 * webhook-off: a server's reminder settings, public language (features/settings/settings.ts), its
 * digests and live leaderboard (features/settings/posts.ts), its reward roles (features/settings/
 * rewards.ts) and the directory's webhook (features/webhooks/settings.ts). Every answer is private, in the user's language.
 * Discord lets only members with Manage Server (or a role an admin granted it to) use it.
 */

import { isCalendarPeriod } from '../src/features/history/calendar.js';
import { setDigest, setLiveBoard, turnDigestOff, turnLiveBoardOff } from '../src/features/settings/posts.js';
import { addReward, removeReward, setTopRole, showRewards } from '../src/features/settings/rewards.js';
import { setThanks, setTimeZone } from '../src/features/settings/server-options.js';
import {
  type ChosenChannel,
  isPublicLanguage,
  type SettingsAnswer,
  type SettingsContext,
  setLanguage,
  setReminders,
  showSettings,
  turnRemindersOff,
} from '../src/features/settings/settings.js';
import { setWebhook, turnWebhookOff } from '../src/features/webhooks/settings.js';
import { GuildOnlyError, UserInputError } from '../src/interactions/error-message.js';
import type { CommandContext, SlashCommand } from '../src/interactions/types.js';
import { settingsCommand } from './definitions.js';

/** The `channel` option: its id, and its type and server as Discord resolved them. */
function chosenChannel(options: CommandContext['interaction']['options']): ChosenChannel {
  const option = options.get('channel', true);
  const channel = option.channel;
  let guildId: string | undefined;
  if (channel && 'guildId' in channel) guildId = channel.guildId;
  else if (channel && 'guild_id' in channel && typeof channel.guild_id === 'string')
    guildId = channel.guild_id;
  return {
    channelId: String(option.value),
    resolvedChannel: channel ? { type: channel.type, guildId } : undefined,
  };
}

/** `/settings rewards add | remove | show | top-role` (features/settings/rewards.ts). */
function rewards(
  deps: CommandContext['deps'],
  context: SettingsContext,
  options: CommandContext['interaction']['options'],
): Promise<SettingsAnswer> | SettingsAnswer {
  switch (options.getSubcommand(true)) {
    case 'add': {
      const period = options.getString('period') ?? 'month';
      if (period !== 'week' && period !== 'month' && period !== 'all') throw new UserInputError('generic');
      return addReward(deps, context, {
        roleId: options.get('role', true).role?.id ?? String(options.get('role', true).value),
        ups: options.getInteger('ups', true),
        period,
      });
    }
    case 'remove':
      return removeReward(deps, context, String(options.get('role', true).value));
    case 'top-role':
      return setTopRole(deps, context, String(options.get('role', true).value));
    case 'show':
      return showRewards(deps, context);
    default:
      throw new UserInputError('generic');
  }
}

function run({ interaction, deps, t }: CommandContext): Promise<SettingsAnswer> | SettingsAnswer {
  const guildId = interaction.guildId;
  if (!guildId) throw new GuildOnlyError();
  const context: SettingsContext = {
    guildId,
    guildLocale: interaction.guildLocale ?? null,
    botId: interaction.client.user.id,
    t,
  };
  const options = interaction.options;
  if (options.getSubcommandGroup(false) === 'rewards') return rewards(deps, context, options);
  switch (options.getSubcommand(true)) {
    case 'reminders': {
      const role = options.get('role')?.role;
      return setReminders(deps, context, {
        ...chosenChannel(options),
        roleId: role?.id ?? null,
        roleMentionable: role?.mentionable,
        message: options.getString('message'),
        earlyMinutes: options.getInteger('early'),
        repeatMinutes: options.getInteger('repeat'),
        repeatTimes: options.getInteger('repeat-times'),
      });
    }
    case 'reminders-off':
      return turnRemindersOff(deps, context);
    case 'language': {
      const language = options.getString('language', true);
      if (!isPublicLanguage(language)) throw new UserInputError('generic');
      return setLanguage(deps, context, language);
    }
    case 'timezone':
      return setTimeZone(deps, context, options.getString('zone', true));
    case 'thanks':
      return setThanks(deps, context, options.getString('message'));
    case 'digest': {
      const period = options.getString('period', true);
      if (!isCalendarPeriod(period)) throw new UserInputError('generic');
      return setDigest(deps, context, { ...chosenChannel(options), period });
    }
    case 'digest-off':
      return turnDigestOff(deps, context);
    case 'live-leaderboard':
      return setLiveBoard(deps, context, chosenChannel(options));
    case 'live-leaderboard-off':
      return turnLiveBoardOff(deps, context);
    case 'show':
      return showSettings(deps, context);
    case 'webhook':
      return setWebhook(deps, context, {
        key: options.getString('key', true),
        ...chosenChannel(options),
      });
    case 'webhook-off':
      return turnWebhookOff(deps, context);
    default:
      throw new UserInputError('generic');
  }
}

export const settings: SlashCommand = {
  data: settingsCommand,
  ephemeral: true,
  guildOnly: true,
  async execute(ctx) {
    const answer = await run(ctx);
    await ctx.reply.private(answer.message);
    return answer.outcome;
  },
};
