/**
 * /settings digest, digest-off, live-leaderboard and live-leaderboard-off as Discord's JSON, which
 * commands/definitions.ts puts into /settings in Discord's order. Handler-free, so that deploying
 * loads no handler; the handler is settings.ts.
 */
import { type APIApplicationCommandSubcommandOption, ApplicationCommandOptionType } from 'discord.js';
import { POSTED_IN_CHANNEL_TYPES } from '../../discord/messages.js';
import { choice, describe, named } from '../../interactions/command-json.js';

/** `/settings digest channel: period:` */
export const digestSubcommand = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('digest', 'commands.settings.digest.name'),
  ...describe('commands.settings.digest.description'),
  options: [
    {
      type: ApplicationCommandOptionType.Channel,
      ...named('channel', 'commands.settings.digest.channel.name'),
      ...describe('commands.settings.digest.channel.description'),
      required: true,
      channel_types: [...POSTED_IN_CHANNEL_TYPES],
    },
    {
      type: ApplicationCommandOptionType.String,
      ...named('period', 'commands.settings.digest.period.name'),
      ...describe('commands.settings.digest.period.description'),
      required: true,
      choices: [
        choice('week', 'commands.settings.digest.choices.week'),
        choice('month', 'commands.settings.digest.choices.month'),
      ],
    },
  ],
} as const satisfies APIApplicationCommandSubcommandOption;

/** `/settings digest-off` */
export const digestOffSubcommand = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('digest-off', 'commands.settings.digestOff.name'),
  ...describe('commands.settings.digestOff.description'),
} as const satisfies APIApplicationCommandSubcommandOption;

/** `/settings live-leaderboard channel:` */
export const liveLeaderboardSubcommand = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('live-leaderboard', 'commands.settings.liveLeaderboard.name'),
  ...describe('commands.settings.liveLeaderboard.description'),
  options: [
    {
      type: ApplicationCommandOptionType.Channel,
      ...named('channel', 'commands.settings.liveLeaderboard.channel.name'),
      ...describe('commands.settings.liveLeaderboard.channel.description'),
      required: true,
      channel_types: [...POSTED_IN_CHANNEL_TYPES],
    },
  ],
} as const satisfies APIApplicationCommandSubcommandOption;

/** `/settings live-leaderboard-off` */
export const liveLeaderboardOffSubcommand = {
  type: ApplicationCommandOptionType.Subcommand,
  ...named('live-leaderboard-off', 'commands.settings.liveLeaderboardOff.name'),
  ...describe('commands.settings.liveLeaderboardOff.description'),
} as const satisfies APIApplicationCommandSubcommandOption;
