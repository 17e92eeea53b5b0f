/**
 * /settings language, timezone and show as Discord's JSON, which commands/definitions.ts puts into
 * /settings in Discord's order. Handler-free, so that deploying loads no handler; the handler is
 * general.ts.
 */
import { type APIApplicationCommandSubcommandOption, ApplicationCommandOptionType } from 'discord.js';
import { choice, describe, named } from '../../interactions/command-json.js';

/** `/settings language language:` */
export const languageSubcommand = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('language', 'commands.settings.language.name'),
  ...describe('commands.settings.language.description'),
  options: [
    {
      type: ApplicationCommandOptionType.String,
      ...named('language', 'commands.settings.language.language.name'),
      ...describe('commands.settings.language.language.description'),
      required: true,
      choices: [
        choice('auto', 'commands.settings.language.choices.auto'),
        choice('en-US', 'commands.settings.language.choices.en-US'),
        choice('ru', 'commands.settings.language.choices.ru'),
      ],
    },
  ],
} as const satisfies APIApplicationCommandSubcommandOption;

/** `/settings timezone zone:` */
export const timezoneSubcommand = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('timezone', 'commands.settings.timezone.name'),
  ...describe('commands.settings.timezone.description'),
  options: [
    {
      type: ApplicationCommandOptionType.String,
      ...named('zone', 'commands.settings.timezone.zone.name'),
      ...describe('commands.settings.timezone.zone.description'),
      required: true,
      max_length: 64,
    },
  ],
} as const satisfies APIApplicationCommandSubcommandOption;

/** `/settings show` */
export const showSubcommand = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('show', 'commands.settings.show.name'),
  ...describe('commands.settings.show.description'),
} as const satisfies APIApplicationCommandSubcommandOption;
