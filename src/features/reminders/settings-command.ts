/**
 * /settings reminders and reminders-off as Discord's JSON, which commands/definitions.ts puts into
 * /settings in Discord's order. Handler-free, so that deploying loads no handler; the handler is
 * settings.ts.
 */
import { type APIApplicationCommandSubcommandOption, ApplicationCommandOptionType } from 'discord.js';
import { POSTED_IN_CHANNEL_TYPES } from '../../discord/messages.js';
import { describe, named } from '../../interactions/command-json.js';

/** `/settings reminders channel: [role:] [message:] [early:] [repeat:] [repeat-times:]` */
export const remindersSubcommand = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('reminders', 'commands.settings.reminders.name'),
  ...describe('commands.settings.reminders.description'),
  options: [
    {
      type: ApplicationCommandOptionType.Channel,
      ...named('channel', 'commands.settings.reminders.channel.name'),
      ...describe('commands.settings.reminders.channel.description'),
      required: true,
      channel_types: [...POSTED_IN_CHANNEL_TYPES],
    },
    {
      type: ApplicationCommandOptionType.Role,
      ...named('role', 'commands.settings.reminders.role.name'),
      ...describe('commands.settings.reminders.role.description'),
      required: false,
    },
    {
      type: ApplicationCommandOptionType.String,
      ...named('message', 'commands.settings.reminders.message.name'),
      ...describe('commands.settings.reminders.message.description'),
      required: false,
      max_length: 1_000,
    },
    // The bounds of cycle.ts, written out so that deploying loads no
    // handler (a test holds them equal); the handler still checks.
    {
      type: ApplicationCommandOptionType.Integer,
      ...named('early', 'commands.settings.reminders.early.name'),
      ...describe('commands.settings.reminders.early.description'),
      required: false,
      min_value: 1,
      max_value: 30,
    },
    {
      type: ApplicationCommandOptionType.Integer,
      ...named('repeat', 'commands.settings.reminders.repeat.name'),
      ...describe('commands.settings.reminders.repeat.description'),
      required: false,
      min_value: 5,
      max_value: 240,
    },
    {
      type: ApplicationCommandOptionType.Integer,
      ...named('repeat-times', 'commands.settings.reminders.repeat-times.name'),
      ...describe('commands.settings.reminders.repeat-times.description'),
      required: false,
      min_value: 1,
      max_value: 10,
    },
  ],
} as const satisfies APIApplicationCommandSubcommandOption;

/** `/settings reminders-off` */
export const remindersOffSubcommand = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('reminders-off', 'commands.settings.remindersOff.name'),
  ...describe('commands.settings.remindersOff.description'),
} as const satisfies APIApplicationCommandSubcommandOption;
