/**
 * /settings thanks as Discord's JSON, which commands/definitions.ts puts into /settings in
 * Discord's order. Handler-free, so that deploying loads no handler; the handler is settings.ts.
 */
import { type APIApplicationCommandSubcommandOption, ApplicationCommandOptionType } from 'discord.js';
import { describe, named } from '../../interactions/command-json.js';

/** `/settings thanks [message:]` */
export const thanksSubcommand = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('thanks', 'commands.settings.thanks.name'),
  ...describe('commands.settings.thanks.description'),
  options: [
    {
      type: ApplicationCommandOptionType.String,
      ...named('message', 'commands.settings.thanks.message.name'),
      ...describe('commands.settings.thanks.message.description'),
      required: false,
      // MAX_THANKS_LENGTH of features/up/thanks.ts, written out so that deploying loads no handler.
      max_length: 300,
    },
  ],
} as const satisfies APIApplicationCommandSubcommandOption;
