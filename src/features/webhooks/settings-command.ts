/**
 * /settings webhook and webhook-off as Discord's JSON, which commands/definitions.ts puts into
 * /settings in Discord's order. Handler-free, so that deploying loads no handler; the handler is
 * settings.ts.
 */
import { type APIApplicationCommandSubcommandOption, ApplicationCommandOptionType } from 'discord.js';
import { POSTED_IN_CHANNEL_TYPES } from '../../discord/messages.js';
import { describe, named } from '../../interactions/command-json.js';

/** `/settings webhook key: channel:` */
export const webhookSubcommand = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('webhook', 'commands.settings.webhook.name'),
  ...describe('commands.settings.webhook.description'),
  options: [
    {
      type: ApplicationCommandOptionType.String,
      ...named('key', 'commands.settings.webhook.key.name'),
      ...describe('commands.settings.webhook.key.description'),
      required: true,
      // MIN_KEY_LENGTH and MAX_KEY_LENGTH of settings.ts, written out so that
      // deploying loads no handler (a test holds them equal): Discord's client then refuses a
      // key cut short before it is sent; the handler still checks.
      min_length: 16,
      max_length: 256,
    },
    {
      type: ApplicationCommandOptionType.Channel,
      ...named('channel', 'commands.settings.webhook.channel.name'),
      ...describe('commands.settings.webhook.channel.description'),
      required: true,
      channel_types: [...POSTED_IN_CHANNEL_TYPES],
    },
  ],
} as const satisfies APIApplicationCommandSubcommandOption;

/** `/settings webhook-off` */
export const webhookOffSubcommand = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('webhook-off', 'commands.settings.webhookOff.name'),
  ...describe('commands.settings.webhookOff.description'),
} as const satisfies APIApplicationCommandSubcommandOption;
