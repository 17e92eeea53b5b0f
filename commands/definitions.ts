/**
 * The slash commands as plain Discord JSON, with Russian names and descriptions from the i18n
 * catalogs, and how each is deferred. The deploy script and a restart's early resume import only
 * this file (and the JSON it assembles), so neither loads a handler.
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
import {
  digestOffSubcommand,
  digestSubcommand,
  liveLeaderboardOffSubcommand,
  liveLeaderboardSubcommand,
} from '../src/features/digests/settings-command.js';
import { remindersOffSubcommand, remindersSubcommand } from '../src/features/reminders/settings-command.js';
import { rewardsSubcommandGroup } from '../src/features/rewards/settings-command.js';
import {
  languageSubcommand,
  showSubcommand,
  timezoneSubcommand,
} from '../src/features/settings/general-command.js';
import { thanksSubcommand } from '../src/features/up/settings-command.js';
import { webhookOffSubcommand, webhookSubcommand } from '../src/features/webhooks/settings-command.js';
import type { DeferralRules } from '../src/gateway/deferral-rules.js';
import { choice, describe, named } from '../src/interactions/command-json.js';

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

/**
 * /settings: Manage Server by default (admins can grant it to other roles in Server Settings >
 * Integrations; the bot trusts Discord's check), in servers only. Each concept writes its own
 * subcommands beside its handler (features/<concept>/settings-command.ts); they stand here in the
 * order Discord shows them.
 */
export const settingsCommand = {
  type: ApplicationCommandType.ChatInput,
  ...named('settings', 'commands.settings.name'),
  ...describe('commands.settings.description'),
  default_member_permissions: PermissionFlagsBits.ManageGuild.toString(),
  contexts: [InteractionContextType.Guild],
  integration_types: GUILD_INSTALL,
  options: [
    remindersSubcommand,
    remindersOffSubcommand,
    languageSubcommand,
    timezoneSubcommand,
    thanksSubcommand,
    digestSubcommand,
    digestOffSubcommand,
    liveLeaderboardSubcommand,
    liveLeaderboardOffSubcommand,
    rewardsSubcommandGroup,
    showSubcommand,
    webhookSubcommand,
    webhookOffSubcommand,
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

/**
 * /setup: one form (a modal) for what a server needs first, the reminder channel and role, the
 * public language, the time zone and the digest (features/setup). Manage Server, as /settings.
 */
export const setupCommand = {
  type: ApplicationCommandType.ChatInput,
  ...named('setup', 'commands.setup.name'),
  ...describe('commands.setup.description'),
  default_member_permissions: PermissionFlagsBits.ManageGuild.toString(),
  contexts: [InteractionContextType.Guild],
  integration_types: GUILD_INSTALL,
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

/** /help: the commands in the reader's language, with who may use each and where. */
export const helpCommand = {
  type: ApplicationCommandType.ChatInput,
  ...named('help', 'commands.help.name'),
  ...describe('commands.help.description'),
  ...ANYWHERE,
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

/** How a slash command's first answer goes: deferred (publicly or privately), or a form. */
type FirstAnswer =
  | { definition: RESTPostAPIChatInputApplicationCommandsJSONBody; privately: boolean }
  /** A modal: never deferred (a deferred interaction can no longer open one). */
  | { definition: RESTPostAPIChatInputApplicationCommandsJSONBody; form: true };

/**
 * Every slash command, and how its first answer goes: deferred at once from its packet (by the
 * gateway's thread, a restart's early resume before any handler has loaded, or the router),
 * privately where every outcome is for the user alone, or not at all where it opens a form.
 * Stated here once: what is deployed (commandDefinitions) and the deferral table (DEFERRAL_RULES)
 * follow from it.
 */
const slashCommands = [
  { definition: upCommand, privately: false },
  { definition: botCommand, privately: false },
  { definition: serverCommand, privately: false },
  { definition: profileCommand, privately: false },
  { definition: settingsCommand, privately: true },
  { definition: leaderboardCommand, privately: false },
  { definition: setupCommand, form: true },
  { definition: helpCommand, privately: true },
] as const satisfies ReadonlyArray<FirstAnswer>;

export const commandDefinitions: readonly RESTPostAPIChatInputApplicationCommandsJSONBody[] =
  slashCommands.map((command) => command.definition);

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

/**
 * The deferral of each command, by name (src/gateway/deferral-rules.ts): the slash commands as
 * stated above, and every user command privately (a card is for the one who asked).
 */
export const DEFERRAL_RULES: DeferralRules = {
  commands: Object.fromEntries(
    slashCommands.flatMap((c) => ('privately' in c ? [[c.definition.name, c.privately]] : [])),
  ),
  userCommands: Object.fromEntries(userCommandDefinitions.map((c) => [c.name, true])),
  forms: slashCommands.flatMap((c) => ('form' in c ? [c.definition.name] : [])),
};

/** What `npm run deploy-commands` sends: the slash commands, then the context menu's. */
export const deployedCommands: ReadonlyArray<
  RESTPostAPIChatInputApplicationCommandsJSONBody | RESTPostAPIContextMenuApplicationCommandsJSONBody
> = [...commandDefinitions, ...userCommandDefinitions];
