/**
 * /settings reminders | reminders-off | language | timezone | thanks | show | webhook | webhook-off: a server's
 * reminder settings, public language (features/settings/settings.ts) and the directory's webhook
 * (features/webhooks/settings.ts). Every answer is private, in the user's language.
 * Discord lets only members with Manage Server (or a role an admin granted it to) use it.
 */

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

function run({ interaction, deps, t }: CommandContext): Promise<SettingsAnswer> {
  const guildId = interaction.guildId;
  if (!guildId) throw new GuildOnlyError();
  const context: SettingsContext = {
    guildId,
    guildLocale: interaction.guildLocale ?? null,
    botId: interaction.client.user.id,
    t,
  };
  const options = interaction.options;
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
