/**
 * The slash commands as plain Discord JSON, with Russian names and descriptions. The deploy
 * script imports only this file, so deploying never loads a handler.
 */
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ApplicationIntegrationType,
  InteractionContextType,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { localizations } from '../src/i18n/index.js';

function describe(key: string): { description: string; description_localizations: { ru: string } } {
  const texts = localizations(key);
  return { description: texts['en-US'], description_localizations: { ru: texts.ru } };
}

const GUILD_INSTALL = [ApplicationIntegrationType.GuildInstall];

/** The `ref` option of /bot and /server: an ID, short code, mention or page link. */
function refOption<const Required extends boolean>(descriptionKey: string, required: Required) {
  return {
    type: ApplicationCommandOptionType.String,
    name: 'ref',
    name_localizations: { ru: 'ссылка' },
    ...describe(descriptionKey),
    required,
    max_length: 200,
  } as const;
}

export const upCommand = {
  type: ApplicationCommandType.ChatInput,
  name: 'up',
  name_localizations: { ru: 'ап' },
  ...describe('commands.up.description'),
  contexts: [InteractionContextType.Guild],
  integration_types: GUILD_INSTALL,
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export const botCommand = {
  type: ApplicationCommandType.ChatInput,
  name: 'bot',
  name_localizations: { ru: 'бот' },
  ...describe('commands.bot.description'),
  contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
  integration_types: GUILD_INSTALL,
  options: [refOption('commands.bot.ref', true)],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export const serverCommand = {
  type: ApplicationCommandType.ChatInput,
  name: 'server',
  name_localizations: { ru: 'сервер' },
  ...describe('commands.server.description'),
  contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
  integration_types: GUILD_INSTALL,
  options: [refOption('commands.server.ref', false)],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export const profileCommand = {
  type: ApplicationCommandType.ChatInput,
  name: 'profile',
  name_localizations: { ru: 'профиль' },
  ...describe('commands.profile.description'),
  contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
  integration_types: GUILD_INSTALL,
  options: [
    {
      type: ApplicationCommandOptionType.User,
      name: 'user',
      name_localizations: { ru: 'пользователь' },
      ...describe('commands.profile.user'),
      required: false,
    },
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export const commandDefinitions: readonly RESTPostAPIChatInputApplicationCommandsJSONBody[] = [
  upCommand,
  botCommand,
  serverCommand,
  profileCommand,
];
