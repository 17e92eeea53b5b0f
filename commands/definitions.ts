/**
 * The slash commands as plain Discord JSON, with Russian names and descriptions from the i18n
 * catalogs. The deploy script imports only this file, so deploying never loads a handler.
 */
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ApplicationIntegrationType,
  InteractionContextType,
  PermissionFlagsBits,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  type RESTPostAPIContextMenuApplicationCommandsJSONBody,
} from 'discord.js';
import { POSTED_IN_CHANNEL_TYPES } from '../src/discord/messages.js';
import { localizations } from '../src/i18n/index.js';

/**
 * A command's or option's name and its Russian name from the catalogs. The English name stays
 * written here because handlers look options up by it; the en-US catalog holds the same name.
 */
function named<const Name extends string>(
  name: Name,
  key: string,
): { name: Name; name_localizations: { ru: string } } {
  return { name, name_localizations: { ru: localizations(key).ru } };
}

function describe(key: string): { description: string; description_localizations: { ru: string } } {
  const texts = localizations(key);
  return { description: texts['en-US'], description_localizations: { ru: texts.ru } };
}

const GUILD_INSTALL = [ApplicationIntegrationType.GuildInstall];

/**
 * The look-ups, anywhere: installed by a server or by a user (who can then use them in any
 * server, in the bot's DM and in DMs and group DMs between users). Where only the user installed
 * the app the bot is not in the server: the look-ups need nothing of it but its id.
 */
const ANYWHERE: {
  contexts: InteractionContextType[];
  integration_types: ApplicationIntegrationType[];
} = {
  contexts: [
    InteractionContextType.Guild,
    InteractionContextType.BotDM,
    InteractionContextType.PrivateChannel,
  ],
  integration_types: [ApplicationIntegrationType.GuildInstall, ApplicationIntegrationType.UserInstall],
};

/**
 * The `ref` option of /bot and /server: an ID, short code, mention or page link, with suggestions
 * as the user types (interactions/suggestions.ts).
 */
function refOption<const Required extends boolean>(descriptionKey: string, required: Required) {
  return {
    type: ApplicationCommandOptionType.String,
    ...named('ref', 'commands.options.ref'),
    ...describe(descriptionKey),
    required,
    max_length: 200,
    autocomplete: true,
  } as const;
}

export const upCommand = {
  type: ApplicationCommandType.ChatInput,
  ...named('up', 'commands.up.name'),
  ...describe('commands.up.description'),
  contexts: [InteractionContextType.Guild],
  integration_types: GUILD_INSTALL,
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export const botCommand = {
  type: ApplicationCommandType.ChatInput,
  ...named('bot', 'commands.bot.name'),
  ...describe('commands.bot.description'),
  ...ANYWHERE,
  options: [refOption('commands.bot.ref', true)],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export const serverCommand = {
  type: ApplicationCommandType.ChatInput,
  ...named('server', 'commands.server.name'),
  ...describe('commands.server.description'),
  ...ANYWHERE,
  options: [refOption('commands.server.ref', false)],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export const profileCommand = {
  type: ApplicationCommandType.ChatInput,
  ...named('profile', 'commands.profile.name'),
  ...describe('commands.profile.description'),
  ...ANYWHERE,
  options: [
    {
      type: ApplicationCommandOptionType.User,
      ...named('user', 'commands.options.user'),
      ...describe('commands.profile.user'),
      required: false,
    },
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

/** A choice's value and its names: English from the en-US catalog, Russian from ru. */
function choice<const Value extends string>(value: Value, key: string) {
  const texts = localizations(key);
  return { name: texts['en-US'], name_localizations: { ru: texts.ru }, value } as const;
}

/**
 * /settings: Manage Server by default (admins can grant it to other roles in Server Settings >
 * Integrations; the bot trusts Discord's check), in servers only.
 */
export const settingsCommand = {
  type: ApplicationCommandType.ChatInput,
  ...named('settings', 'commands.settings.name'),
  ...describe('commands.settings.description'),
  default_member_permissions: PermissionFlagsBits.ManageGuild.toString(),
  contexts: [InteractionContextType.Guild],
  integration_types: GUILD_INSTALL,
  options: [
    {
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
        // The bounds of features/reminders/cycle.ts, written out so that deploying loads no
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
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('reminders-off', 'commands.settings.remindersOff.name'),
      ...describe('commands.settings.remindersOff.description'),
    },
    {
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
    },
    {
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
    },
    {
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
    },
    {
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
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('digest-off', 'commands.settings.digestOff.name'),
      ...describe('commands.settings.digestOff.description'),
    },
    {
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
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('live-leaderboard-off', 'commands.settings.liveLeaderboardOff.name'),
      ...describe('commands.settings.liveLeaderboardOff.description'),
    },
    {
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
              // MIN_REWARD_UPS and MAX_REWARD_UPS of features/settings/rewards.ts (a test holds them equal).
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
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('show', 'commands.settings.show.name'),
      ...describe('commands.settings.show.description'),
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('webhook', 'commands.settings.webhook.name'),
      ...describe('commands.settings.webhook.description'),
      options: [
        {
          type: ApplicationCommandOptionType.String,
          ...named('key', 'commands.settings.webhook.key.name'),
          ...describe('commands.settings.webhook.key.description'),
          required: true,
          // MIN_KEY_LENGTH and MAX_KEY_LENGTH of features/webhooks/settings.ts, written out so that
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
    },
    {
      type: ApplicationCommandOptionType.Subcommand,
      ...named('webhook-off', 'commands.settings.webhookOff.name'),
      ...describe('commands.settings.webhookOff.description'),
    },
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

/** /leaderboard [period]: this server's members by successful ups (a month unless asked). */
export const leaderboardCommand = {
  type: ApplicationCommandType.ChatInput,
  ...named('leaderboard', 'commands.leaderboard.name'),
  ...describe('commands.leaderboard.description'),
  contexts: [InteractionContextType.Guild],
  integration_types: GUILD_INSTALL,
  options: [
    {
      type: ApplicationCommandOptionType.String,
      ...named('period', 'commands.options.period'),
      ...describe('commands.leaderboard.period'),
      required: false,
      choices: [
        choice('week', 'commands.leaderboard.choices.week'),
        choice('month', 'commands.leaderboard.choices.month'),
        choice('all', 'commands.leaderboard.choices.all'),
      ],
    },
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export const commandDefinitions: readonly RESTPostAPIChatInputApplicationCommandsJSONBody[] = [
  upCommand,
  botCommand,
  serverCommand,
  profileCommand,
  settingsCommand,
  leaderboardCommand,
];

/**
 * "Directory card" in the context menu on a member (Apps › Directory card): the bot's card for a
 * bot, the profile for a person. A user command has a name (up to 32 characters, spaces and
 * capitals allowed, shown as it is) and no description. Anywhere, as the look-ups.
 */
export const directoryCardCommand = {
  type: ApplicationCommandType.User,
  ...named('Directory card', 'commands.directoryCard.name'),
  ...ANYWHERE,
} as const satisfies RESTPostAPIContextMenuApplicationCommandsJSONBody;

export const userCommandDefinitions: readonly RESTPostAPIContextMenuApplicationCommandsJSONBody[] = [
  directoryCardCommand,
];

/** What `npm run deploy-commands` sends: the slash commands, then the context menu's. */
export const deployedCommands: ReadonlyArray<
  RESTPostAPIChatInputApplicationCommandsJSONBody | RESTPostAPIContextMenuApplicationCommandsJSONBody
> = [...commandDefinitions, ...userCommandDefinitions];
