/**
 * The commands as deployed to Discord: names and descriptions come from the i18n catalogs, and the
 * JSON sent to Discord stays what it was when they were written into the definitions by hand
 * (a change here renames or re-describes a command for every server that has it).
 */

import { ApplicationIntegrationType, InteractionContextType, PermissionFlagsBits } from 'discord.js';
import { describe, expect, it } from 'vitest';
import {
  commandDefinitions,
  deployedCommands,
  directoryCardCommand,
  settingsCommand,
  setupCommand,
  userCommandDefinitions,
} from '../../commands/definitions.js';
import {
  cycleSettings,
  MAX_EARLY_MINUTES,
  MAX_REPEAT_MINUTES,
  MAX_REPEAT_TIMES,
  MIN_REPEAT_MINUTES,
} from '../../src/features/reminders/cycle.js';
import { MAX_REWARD_UPS, MIN_REWARD_UPS } from '../../src/features/rewards/settings.js';
import { isPlausibleKey, MAX_KEY_LENGTH, MIN_KEY_LENGTH } from '../../src/features/webhooks/settings.js';
import { localizations } from '../../src/i18n/index.js';

/** The definitions' JSON before names moved to the catalogs, key order included (and /leaderboard since). */
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
    contexts: [0, 1, 2],
    integration_types: [0, 1],
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
        autocomplete: true,
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
    contexts: [0, 1, 2],
    integration_types: [0, 1],
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
        autocomplete: true,
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
    contexts: [0, 1, 2],
    integration_types: [0, 1],
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
  {
    type: 1,
    name: 'settings',
    name_localizations: {
      ru: 'настройки',
    },
    description: "This server's reminders, digests, leaderboard, reward roles and the bot's public language",
    description_localizations: {
      ru: 'Напоминания, сводки, таблица, роли-награды сервера и язык публичных сообщений бота',
    },
    default_member_permissions: '32',
    contexts: [0],
    integration_types: [0],
    options: [
      {
        type: 1,
        name: 'reminders',
        name_localizations: {
          ru: 'напоминания',
        },
        description: 'Remind this server when it can be raised again',
        description_localizations: {
          ru: 'Напоминать, когда сервер снова можно поднять',
        },
        options: [
          {
            type: 7,
            name: 'channel',
            name_localizations: {
              ru: 'канал',
            },
            description: 'Where the reminders are posted',
            description_localizations: {
              ru: 'Куда присылать напоминания',
            },
            required: true,
            channel_types: [0, 5],
          },
          {
            type: 8,
            name: 'role',
            name_localizations: {
              ru: 'роль',
            },
            description: 'The role the reminder pings (default: none)',
            description_localizations: {
              ru: 'Роль, которую упоминает напоминание (по умолчанию никакая)',
            },
            required: false,
          },
          {
            type: 3,
            name: 'message',
            name_localizations: {
              ru: 'текст',
            },
            description: 'Reminder text; placeholders {role} {command} {server} {time}',
            description_localizations: {
              ru: 'Текст напоминания; подстановки {role} {command} {server} {time}',
            },
            required: false,
            max_length: 1000,
          },
          {
            type: 4,
            name: 'early',
            name_localizations: {
              ru: 'заранее',
            },
            description: 'Post a heads-up this many minutes before the up is possible (1–30; default: none)',
            description_localizations: {
              ru: 'Предупредить за столько минут до того, как можно поднять (1–30; по умолчанию нет)',
            },
            required: false,
            min_value: 1,
            max_value: 30,
          },
          {
            type: 4,
            name: 'repeat',
            name_localizations: {
              ru: 'повтор',
            },
            description:
              'Post the reminder again every this many minutes until someone ups (5–240; default: never)',
            description_localizations: {
              ru: 'Повторять напоминание каждые N минут, пока никто не поднимет (5–240; по умолчанию нет)',
            },
            required: false,
            min_value: 5,
            max_value: 240,
          },
          {
            type: 4,
            name: 'repeat-times',
            name_localizations: {
              ru: 'повторов',
            },
            description: 'How many times at most the reminder is posted again (1–10; default: 3)',
            description_localizations: {
              ru: 'Сколько раз, не больше, повторить напоминание (1–10; по умолчанию 3)',
            },
            required: false,
            min_value: 1,
            max_value: 10,
          },
        ],
      },
      {
        type: 1,
        name: 'reminders-off',
        name_localizations: {
          ru: 'без-напоминаний',
        },
        description: "Stop this server's reminders (personal reminders stay)",
        description_localizations: {
          ru: 'Выключить напоминания сервера (личные останутся)',
        },
      },
      {
        type: 1,
        name: 'language',
        name_localizations: {
          ru: 'язык',
        },
        description: 'The language of what the bot posts publicly in this server',
        description_localizations: {
          ru: 'Язык того, что бот публикует на этом сервере',
        },
        options: [
          {
            type: 3,
            name: 'language',
            name_localizations: {
              ru: 'язык',
            },
            description: "Language; auto follows the server's own",
            description_localizations: {
              ru: 'Язык; «Авто» — язык самого сервера',
            },
            required: true,
            choices: [
              {
                name: "Auto (the server's language)",
                name_localizations: {
                  ru: 'Авто (язык сервера)',
                },
                value: 'auto',
              },
              {
                name: 'English',
                name_localizations: {
                  ru: 'English (английский)',
                },
                value: 'en-US',
              },
              {
                name: 'Russian',
                name_localizations: {
                  ru: 'Русский',
                },
                value: 'ru',
              },
            ],
          },
        ],
      },
      {
        type: 1,
        name: 'timezone',
        name_localizations: {
          ru: 'часовой-пояс',
        },
        description: "The time zone whose days the members' streaks count",
        description_localizations: {
          ru: 'Часовой пояс, по дням которого считаются серии участников',
        },
        options: [
          {
            type: 3,
            name: 'zone',
            name_localizations: {
              ru: 'пояс',
            },
            description: 'An IANA time zone, such as Europe/Moscow, America/New_York or UTC',
            description_localizations: {
              ru: 'Часовой пояс IANA, например Europe/Moscow, America/New_York или UTC',
            },
            required: true,
            max_length: 64,
          },
        ],
      },
      {
        type: 1,
        name: 'thanks',
        name_localizations: {
          ru: 'благодарность',
        },
        description: 'A thank-you line after each successful /up; without a message, none',
        description_localizations: {
          ru: 'Строка благодарности после каждого успешного /up; без текста — никакой',
        },
        options: [
          {
            type: 3,
            name: 'message',
            name_localizations: {
              ru: 'текст',
            },
            description: 'The line; placeholders {member} {server} {ups} {streak}',
            description_localizations: {
              ru: 'Строка; подстановки {member} {server} {ups} {streak}',
            },
            required: false,
            max_length: 300,
          },
        ],
      },
      {
        type: 1,
        name: 'digest',
        name_localizations: {
          ru: 'сводка',
        },
        description: "Post a summary of this server's ups at the end of each week or month",
        description_localizations: {
          ru: 'Публиковать сводку апов сервера в конце каждой недели или месяца',
        },
        options: [
          {
            type: 7,
            name: 'channel',
            name_localizations: {
              ru: 'канал',
            },
            description: 'Where the digest is posted',
            description_localizations: {
              ru: 'Где публикуется сводка',
            },
            required: true,
            channel_types: [0, 5],
          },
          {
            type: 3,
            name: 'period',
            name_localizations: {
              ru: 'период',
            },
            description: "Each week (from Monday) or each month, in the server's time zone",
            description_localizations: {
              ru: 'Каждую неделю (с понедельника) или каждый месяц, по часовому поясу сервера',
            },
            required: true,
            choices: [
              {
                name: 'Each week',
                name_localizations: {
                  ru: 'Каждую неделю',
                },
                value: 'week',
              },
              {
                name: 'Each month',
                name_localizations: {
                  ru: 'Каждый месяц',
                },
                value: 'month',
              },
            ],
          },
        ],
      },
      {
        type: 1,
        name: 'digest-off',
        name_localizations: {
          ru: 'без-сводки',
        },
        description: 'Stop the digests',
        description_localizations: {
          ru: 'Больше не публиковать сводки',
        },
      },
      {
        type: 1,
        name: 'live-leaderboard',
        name_localizations: {
          ru: 'живая-таблица',
        },
        description: "Keep one message with the month's leaderboard up to date",
        description_localizations: {
          ru: 'Держать одно сообщение с таблицей лидеров месяца в актуальном виде',
        },
        options: [
          {
            type: 7,
            name: 'channel',
            name_localizations: {
              ru: 'канал',
            },
            description: 'Where the live leaderboard is kept',
            description_localizations: {
              ru: 'Где держать живую таблицу',
            },
            required: true,
            channel_types: [0, 5],
          },
        ],
      },
      {
        type: 1,
        name: 'live-leaderboard-off',
        name_localizations: {
          ru: 'без-живой-таблицы',
        },
        description: 'Remove the live leaderboard and its message',
        description_localizations: {
          ru: 'Убрать живую таблицу и её сообщение',
        },
      },
      {
        type: 2,
        name: 'rewards',
        name_localizations: {
          ru: 'награды',
        },
        description: 'Roles members earn by upping this server',
        description_localizations: {
          ru: 'Роли, которые участники получают за апы этого сервера',
        },
        options: [
          {
            type: 1,
            name: 'add',
            name_localizations: {
              ru: 'добавить',
            },
            description: 'Give a role to members who reach a count of ups in a period',
            description_localizations: {
              ru: 'Выдавать роль участникам, набравшим число апов за период',
            },
            options: [
              {
                type: 8,
                name: 'role',
                name_localizations: {
                  ru: 'роль',
                },
                description: 'The role to give',
                description_localizations: {
                  ru: 'Какую роль выдавать',
                },
                required: true,
              },
              {
                type: 4,
                name: 'ups',
                name_localizations: {
                  ru: 'апов',
                },
                description: 'How many ups it takes (1–1000)',
                description_localizations: {
                  ru: 'Сколько апов нужно (1–1000)',
                },
                required: true,
                min_value: 1,
                max_value: 1000,
              },
              {
                type: 3,
                name: 'period',
                name_localizations: {
                  ru: 'период',
                },
                description: 'Counted per week or month (taken back at its end), or in all (default: month)',
                description_localizations: {
                  ru: 'За неделю или месяц (забирается в конце), или за всё время (по умолчанию: месяц)',
                },
                required: false,
                choices: [
                  {
                    name: 'Each week',
                    name_localizations: {
                      ru: 'Каждую неделю',
                    },
                    value: 'week',
                  },
                  {
                    name: 'Each month',
                    name_localizations: {
                      ru: 'Каждый месяц',
                    },
                    value: 'month',
                  },
                  {
                    name: 'All time (kept)',
                    name_localizations: {
                      ru: 'За всё время (хранимое)',
                    },
                    value: 'all',
                  },
                ],
              },
            ],
          },
          {
            type: 1,
            name: 'top-role',
            name_localizations: {
              ru: 'лучший-месяца',
            },
            description: "A role for the month's top member, moved at each month's end",
            description_localizations: {
              ru: 'Роль для лучшего участника месяца, переходит в конце каждого месяца',
            },
            options: [
              {
                type: 8,
                name: 'role',
                name_localizations: {
                  ru: 'роль',
                },
                description: 'The role to give',
                description_localizations: {
                  ru: 'Какую роль выдавать',
                },
                required: true,
              },
            ],
          },
          {
            type: 1,
            name: 'remove',
            name_localizations: {
              ru: 'убрать',
            },
            description: 'Stop giving a reward role (members who have it keep it)',
            description_localizations: {
              ru: 'Больше не выдавать роль-награду (у кого она есть, останется)',
            },
            options: [
              {
                type: 8,
                name: 'role',
                name_localizations: {
                  ru: 'роль',
                },
                description: 'The reward role',
                description_localizations: {
                  ru: 'Роль-награда',
                },
                required: true,
              },
            ],
          },
          {
            type: 1,
            name: 'show',
            name_localizations: {
              ru: 'показать',
            },
            description: "This server's reward roles",
            description_localizations: {
              ru: 'Роли-награды этого сервера',
            },
          },
        ],
      },
      {
        type: 1,
        name: 'show',
        name_localizations: {
          ru: 'показать',
        },
        description: "This server's settings, the next reminder and any problem",
        description_localizations: {
          ru: 'Настройки сервера, следующее напоминание и проблемы',
        },
      },
      {
        type: 1,
        name: 'webhook',
        name_localizations: {
          ru: 'вебхук',
        },
        description: "Announce the directory's events for this server (comments, ups) in a channel",
        description_localizations: {
          ru: 'Объявлять события каталога об этом сервере (комментарии, апы) в канале',
        },
        options: [
          {
            type: 3,
            name: 'key',
            name_localizations: {
              ru: 'ключ',
            },
            description: "The webhook key shown on this server's edit page on the directory",
            description_localizations: {
              ru: 'Ключ вебхука со страницы редактирования сервера в каталоге',
            },
            required: true,
            min_length: 16,
            max_length: 256,
          },
          {
            type: 7,
            name: 'channel',
            name_localizations: {
              ru: 'канал',
            },
            description: 'Where the events are announced',
            description_localizations: {
              ru: 'Куда публиковать события',
            },
            required: true,
            channel_types: [0, 5],
          },
        ],
      },
      {
        type: 1,
        name: 'webhook-off',
        name_localizations: {
          ru: 'вебхук-выкл',
        },
        description: "Stop receiving the directory's events for this server",
        description_localizations: {
          ru: 'Больше не получать события каталога об этом сервере',
        },
      },
    ],
  },
  {
    type: 1,
    name: 'leaderboard',
    name_localizations: {
      ru: 'лидеры',
    },
    description: 'Who raised this server most, with their counts',
    description_localizations: {
      ru: 'Кто чаще всех поднимал этот сервер',
    },
    contexts: [0],
    integration_types: [0],
    options: [
      {
        type: 3,
        name: 'period',
        name_localizations: {
          ru: 'период',
        },
        description: 'The last week, month (default) or all the kept history',
        description_localizations: {
          ru: 'Последняя неделя, месяц (по умолчанию) или вся сохранённая история',
        },
        required: false,
        choices: [
          {
            name: 'Last 7 days',
            name_localizations: {
              ru: 'Последние 7 дней',
            },
            value: 'week',
          },
          {
            name: 'Last 30 days',
            name_localizations: {
              ru: 'Последние 30 дней',
            },
            value: 'month',
          },
          {
            name: 'All time',
            name_localizations: {
              ru: 'За всё время',
            },
            value: 'all',
          },
        ],
      },
    ],
  },
  {
    type: 1,
    name: 'setup',
    name_localizations: {
      ru: 'настроить',
    },
    description: 'Set the bot up in one form: reminder channel and role, language, time zone, digest',
    description_localizations: {
      ru: 'Настроить бота одной формой: канал и роль напоминаний, язык, часовой пояс, сводка',
    },
    default_member_permissions: '32',
    contexts: [0],
    integration_types: [0],
  },
  {
    type: 1,
    name: 'help',
    name_localizations: {
      ru: 'помощь',
    },
    description: "The bot's commands, and what each needs",
    description_localizations: {
      ru: 'Команды бота и что нужно для каждой',
    },
    contexts: [0, 1, 2],
    integration_types: [0, 1],
  },
];

describe('command definitions', () => {
  it('deploy the same JSON, byte for byte', () => {
    expect(JSON.stringify(commandDefinitions)).toBe(JSON.stringify(DEPLOYED));
  });

  it('take every name the code uses from the en-US catalog', () => {
    for (const command of commandDefinitions) {
      expect(localizations(`commands.${command.name}.name`)['en-US']).toBe(command.name);
      if (command.name === 'settings') continue;
      for (const option of command.options ?? []) {
        expect(localizations(`commands.options.${option.name}`)['en-US']).toBe(option.name);
      }
    }
    // /settings keeps its subcommands' and options' names under its own key.
    const key = (name: string) => name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    for (const sub of settingsCommand.options) {
      expect(localizations(`commands.settings.${key(sub.name)}.name`)['en-US']).toBe(sub.name);
      for (const option of 'options' in sub ? sub.options : []) {
        expect(localizations(`commands.settings.${key(sub.name)}.${option.name}.name`)['en-US']).toBe(
          option.name,
        );
      }
    }
  });

  it('are valid for Discord: names, lengths, a Russian name for everything', () => {
    const NAME = /^[-_\p{L}\p{N}]{1,32}$/u;
    type Named = { name: string; name_localizations?: { ru?: string } | null; description?: string };
    const walk = (node: Named & { options?: readonly unknown[]; choices?: readonly unknown[] }): void => {
      const ru = node.name_localizations?.ru ?? '';
      if (node.description !== undefined) {
        // An option's name: lower case, no spaces (a choice's name is free text up to 100).
        expect(node.name, node.name).toMatch(NAME);
        expect(node.name, node.name).toBe(node.name.toLowerCase());
        expect(ru, node.name).toMatch(NAME);
        expect(ru, node.name).toBe(ru.toLowerCase());
        expect(node.description.length, node.name).toBeLessThanOrEqual(100);
      } else {
        expect(node.name.length, node.name).toBeLessThanOrEqual(100);
        expect(ru.length, node.name).toBeGreaterThan(0);
      }
      for (const child of [...(node.options ?? []), ...(node.choices ?? [])]) walk(child as Named);
    };
    for (const command of commandDefinitions) walk(command as Named);
  });

  it('let only members with Manage Server use /settings and /setup, and only in servers', () => {
    expect(setupCommand.default_member_permissions).toBe(PermissionFlagsBits.ManageGuild.toString());
    expect(setupCommand.contexts).toEqual([InteractionContextType.Guild]);
    expect(settingsCommand.default_member_permissions).toBe(PermissionFlagsBits.ManageGuild.toString());
    expect(settingsCommand.contexts).toEqual([InteractionContextType.Guild]);
    expect(settingsCommand.integration_types).toEqual([ApplicationIntegrationType.GuildInstall]);
    expect(settingsCommand.options.map((o) => o.name)).toEqual([
      'reminders',
      'reminders-off',
      'language',
      'timezone',
      'thanks',
      'digest',
      'digest-off',
      'live-leaderboard',
      'live-leaderboard-off',
      'rewards',
      'show',
      'webhook',
      'webhook-off',
    ]);
    // No other command is restricted: /up and the look-ups are for everyone.
    for (const command of commandDefinitions.filter((c) => c.name !== 'settings' && c.name !== 'setup')) {
      expect(command.default_member_permissions, command.name).toBeUndefined();
    }
  });

  it('put "Directory card" in the context menu on a member, anywhere, named in both languages', () => {
    expect(userCommandDefinitions).toEqual([directoryCardCommand]);
    expect(deployedCommands).toEqual([...commandDefinitions, directoryCardCommand]);
    expect(JSON.parse(JSON.stringify(directoryCardCommand))).toEqual({
      type: 2,
      name: 'Directory card',
      name_localizations: { ru: 'Карточка в каталоге' },
      contexts: [0, 1, 2],
      integration_types: [0, 1],
    });
    expect(localizations('commands.directoryCard.name')['en-US']).toBe(directoryCardCommand.name);
    // A user command's name: 1 to 32 characters, spaces and capitals allowed; no description.
    for (const name of [directoryCardCommand.name, directoryCardCommand.name_localizations.ru]) {
      expect(name.length).toBeGreaterThan(0);
      expect(name.length).toBeLessThanOrEqual(32);
    }
    expect('description' in directoryCardCommand).toBe(false);
  });

  it("make Discord's client refuse the heads-up and repeats the handler would refuse", () => {
    const reminders = settingsCommand.options.find((o) => o.name === 'reminders');
    const option = (name: string) =>
      reminders && 'options' in reminders ? reminders.options.find((o) => o.name === name) : undefined;
    expect(option('early')).toMatchObject({ min_value: 1, max_value: MAX_EARLY_MINUTES });
    expect(option('repeat')).toMatchObject({ min_value: MIN_REPEAT_MINUTES, max_value: MAX_REPEAT_MINUTES });
    expect(option('repeat-times')).toMatchObject({ min_value: 1, max_value: MAX_REPEAT_TIMES });
    const rewards = settingsCommand.options.find((o) => o.name === 'rewards');
    const add = rewards && 'options' in rewards ? rewards.options.find((o) => o.name === 'add') : undefined;
    const ups = add && 'options' in add ? add.options.find((o) => o.name === 'ups') : undefined;
    expect(ups).toMatchObject({ min_value: MIN_REWARD_UPS, max_value: MAX_REWARD_UPS });
    // The handler keeps its own check (a client other than Discord's may send anything).
    expect(cycleSettings({ earlyMinutes: MAX_EARLY_MINUTES + 1 })).toMatchObject({ ok: false });
    expect(cycleSettings({ repeatMinutes: MIN_REPEAT_MINUTES - 1 })).toMatchObject({ ok: false });
    expect(cycleSettings({ repeatMinutes: 10, repeatTimes: MAX_REPEAT_TIMES + 1 })).toMatchObject({
      ok: false,
    });
    expect(cycleSettings({ earlyMinutes: MAX_EARLY_MINUTES, repeatMinutes: 10 })).toEqual({
      ok: true,
      earlyMs: MAX_EARLY_MINUTES * 60_000,
      repeat: { everyMs: 600_000, times: 3 },
    });
  });

  it("make Discord's client refuse a webhook key the server would refuse for its length", () => {
    const webhook = settingsCommand.options.find((o) => o.name === 'webhook');
    const key = webhook && 'options' in webhook ? webhook.options.find((o) => o.name === 'key') : undefined;
    expect(key).toMatchObject({ min_length: MIN_KEY_LENGTH, max_length: MAX_KEY_LENGTH });
    // The handler keeps its own check (a client other than Discord's may send anything).
    expect(isPlausibleKey('k'.repeat(MIN_KEY_LENGTH - 1))).toBe(false);
    expect(isPlausibleKey('k'.repeat(MIN_KEY_LENGTH))).toBe(true);
  });
});
