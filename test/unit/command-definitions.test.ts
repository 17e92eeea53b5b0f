/**
 * The commands as deployed to Discord: names and descriptions come from the i18n catalogs, and the
 * JSON sent to Discord stays what it was when they were written into the definitions by hand
 * (a change here renames or re-describes a command for every server that has it).
 */
import { describe, expect, it } from 'vitest';
import { commandDefinitions } from '../../commands/definitions.js';
import { localizations } from '../../src/i18n/index.js';

/** The definitions' JSON before names moved to the catalogs, key order included. */
const DEPLOYED = [
  {
    type: 1,
    name: 'up',
    name_localizations: {
      ru: 'ап',
    },
    description: 'Raise this server in the directory',
    description_localizations: {
      ru: 'Поднять этот сервер в каталоге',
    },
    contexts: [0],
    integration_types: [0],
  },
  {
    type: 1,
    name: 'bot',
    name_localizations: {
      ru: 'бот',
    },
    description: 'Look up a bot in the directory',
    description_localizations: {
      ru: 'Найти бота в каталоге',
    },
    contexts: [0, 1],
    integration_types: [0],
    options: [
      {
        type: 3,
        name: 'ref',
        name_localizations: {
          ru: 'ссылка',
        },
        description: 'Bot ID, short code, mention or directory page link',
        description_localizations: {
          ru: 'ID бота, короткий код, упоминание или ссылка на страницу каталога',
        },
        required: true,
        max_length: 200,
      },
    ],
  },
  {
    type: 1,
    name: 'server',
    name_localizations: {
      ru: 'сервер',
    },
    description: 'Look up a server in the directory',
    description_localizations: {
      ru: 'Найти сервер в каталоге',
    },
    contexts: [0, 1],
    integration_types: [0],
    options: [
      {
        type: 3,
        name: 'ref',
        name_localizations: {
          ru: 'ссылка',
        },
        description: 'Server ID, short code or directory page link (default: this server)',
        description_localizations: {
          ru: 'ID сервера, короткий код или ссылка на страницу (по умолчанию этот сервер)',
        },
        required: false,
        max_length: 200,
      },
    ],
  },
  {
    type: 1,
    name: 'profile',
    name_localizations: {
      ru: 'профиль',
    },
    description: "Look up a user's directory profile",
    description_localizations: {
      ru: 'Профиль пользователя в каталоге',
    },
    contexts: [0, 1],
    integration_types: [0],
    options: [
      {
        type: 6,
        name: 'user',
        name_localizations: {
          ru: 'пользователь',
        },
        description: 'The user (default: you)',
        description_localizations: {
          ru: 'Пользователь (по умолчанию вы)',
        },
        required: false,
      },
    ],
  },
];

describe('command definitions', () => {
  it('deploy the same JSON, byte for byte', () => {
    expect(JSON.stringify(commandDefinitions)).toBe(JSON.stringify(DEPLOYED));
  });

  it('take every name the code uses from the en-US catalog', () => {
    for (const command of commandDefinitions) {
      expect(localizations(`commands.${command.name}.name`)['en-US']).toBe(command.name);
      for (const option of command.options ?? []) {
        expect(localizations(`commands.options.${option.name}`)['en-US']).toBe(option.name);
      }
    }
  });
});
