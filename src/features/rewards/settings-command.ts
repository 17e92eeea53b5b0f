/**
 * /settings rewards (add, top-role, remove, show) as Discord's JSON, which commands/definitions.ts
 * puts into /settings in Discord's order. Handler-free, so that deploying loads no handler; the
 * handler is settings.ts.
 */
import { type APIApplicationCommandSubcommandGroupOption, ApplicationCommandOptionType } from 'discord.js';
import { choice, describe, named } from '../../interactions/command-json.js';

/** `/settings rewards add | top-role | remove | show` */
export const rewardsSubcommandGroup = {
  type: ApplicationCommandOptionType.SubcommandGroup,
  ...named('rewards', 'commands.settings.rewards.name'),
  ...describe('commands.settings.rewards.description'),
  options: [
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('add', 'commands.settings.rewards.add.name'),
      ...describe('commands.settings.rewards.add.description'),
      options: [
        {
          type: ApplicationCommandOptionType.Role,
          ...named('role', 'commands.settings.rewards.add.role.name'),
          ...describe('commands.settings.rewards.add.role.description'),
          required: true,
        },
        {
          type: ApplicationCommandOptionType.Integer,
          ...named('ups', 'commands.settings.rewards.add.ups.name'),
          ...describe('commands.settings.rewards.add.ups.description'),
          required: true,
          // MIN_REWARD_UPS and MAX_REWARD_UPS of settings.ts (a test holds them equal).
          min_value: 1,
          max_value: 1_000,
        },
        {
          type: ApplicationCommandOptionType.String,
          ...named('period', 'commands.settings.rewards.add.period.name'),
          ...describe('commands.settings.rewards.add.period.description'),
          required: false,
          choices: [
            choice('week', 'commands.settings.rewards.choices.week'),
            choice('month', 'commands.settings.rewards.choices.month'),
            choice('all', 'commands.settings.rewards.choices.all'),
          ],
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('top-role', 'commands.settings.rewards.top-role.name'),
      ...describe('commands.settings.rewards.top-role.description'),
      options: [
        {
          type: ApplicationCommandOptionType.Role,
          ...named('role', 'commands.settings.rewards.top-role.role.name'),
          ...describe('commands.settings.rewards.top-role.role.description'),
          required: true,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('remove', 'commands.settings.rewards.remove.name'),
      ...describe('commands.settings.rewards.remove.description'),
      options: [
        {
          type: ApplicationCommandOptionType.Role,
          ...named('role', 'commands.settings.rewards.remove.role.name'),
          ...describe('commands.settings.rewards.remove.role.description'),
          required: true,
        },
      ],
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('show', 'commands.settings.rewards.show.name'),
      ...describe('commands.settings.rewards.show.description'),
    },
  ],
} as const satisfies APIApplicationCommandSubcommandGroupOption;
