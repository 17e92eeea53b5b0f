/**
 * The command catalog (commands/catalog.ts) and the table it writes (docs/commands.md): every
 * command, subcommand and option as English and Russian clients show it, who may use it and
 * where; and the committed table is the one the definitions produce now.
 */
import { readFileSync } from 'node:fs';
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  InteractionContextType,
  PermissionFlagsBits,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { describe, expect, it } from 'vitest';
import { type CatalogRow, commandCatalog, renderCommandTable } from '../../commands/catalog.js';
import { deployedCommands } from '../../commands/definitions.js';

const rows = commandCatalog();
const row = (path: string): CatalogRow => {
  const found = rows.find((r) => r.path === path);
  if (!found) throw new Error(`no row ${path}`);
  return found;
};

describe('commandCatalog', () => {
  it('names a nested option as each client shows it, with the command’s permission and contexts', () => {
    const channel = row('/settings reminders channel');
    expect(channel.kind).toBe('option');
    expect(channel.localizedPath).toEqual({
      'en-US': '/settings reminders channel',
      ru: '/настройки напоминания канал',
    });
    expect(channel.description.ru).toBe('Куда присылать напоминания');
    expect(channel.required).toBe(true);
    expect(channel.who).toEqual({
      'en-US': 'Members with Manage Server',
      ru: 'Участники с правом «Управление сервером»',
    });
    expect(channel.where).toEqual({ 'en-US': 'Servers only', ru: 'Только на серверах' });
  });

  it('says who and where for a look-up anyone may use anywhere, and lists choices in order', () => {
    expect(row('/bot ref').who['en-US']).toBe('Anyone');
    expect(row('/bot ref').where).toEqual({ 'en-US': 'Anywhere', ru: 'Везде' });
    expect(row('/leaderboard period').required).toBe(false);
    expect(row('/leaderboard period').choices.map((c) => c.ru)).toEqual([
      'Последние 7 дней',
      'Последние 30 дней',
      'За всё время',
    ]);
    expect(row('/settings rewards').kind).toBe('group');
    expect(row('/settings rewards add ups').localizedPath.ru).toBe('/настройки награды добавить апов');
    expect(row('Directory card').kind).toBe('user-command');
    expect(row('Directory card').localizedPath.ru).toBe('Карточка в каталоге');
  });

  it('has a row for every deployed command, each with a Russian name and both descriptions', () => {
    const commands = new Set(rows.map((r) => r.command));
    expect([...commands]).toEqual(deployedCommands.map((c) => c.name));
    const untranslated = rows.filter((r) => r.name.ru === r.name['en-US'] && r.kind !== 'option');
    expect(untranslated.map((r) => r.path)).toEqual([]);
    const undescribed = rows.filter(
      (r) => r.kind !== 'user-command' && (r.description['en-US'] === '' || r.description.ru === ''),
    );
    expect(undescribed.map((r) => r.path)).toEqual([]);
    // A label missing from a catalog would show as its key.
    expect(JSON.stringify(rows)).not.toContain('commandCatalog.');
  });

  it('copes with any command: no localizations, a group, administrators only, some contexts', () => {
    const command: RESTPostAPIChatInputApplicationCommandsJSONBody = {
      type: ApplicationCommandType.ChatInput,
      name: 'tool',
      description: 'A tool',
      default_member_permissions: '0',
      contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
      options: [
        {
          type: ApplicationCommandOptionType.SubcommandGroup,
          name: 'box',
          description: 'A box',
          options: [{ type: ApplicationCommandOptionType.Subcommand, name: 'open', description: 'Open it' }],
        },
      ],
    };
    const roles: RESTPostAPIChatInputApplicationCommandsJSONBody = {
      name: 'roles',
      description: 'Roles',
      default_member_permissions: (
        PermissionFlagsBits.ManageRoles | PermissionFlagsBits.KickMembers
      ).toString(),
    };
    const got = commandCatalog([command, roles]);
    expect(got.map((r) => [r.kind, r.path, r.localizedPath.ru])).toEqual([
      ['command', '/tool', '/tool'],
      ['group', '/tool box', '/tool box'],
      ['subcommand', '/tool box open', '/tool box open'],
      ['command', '/roles', '/roles'],
    ]);
    expect(got[2]?.who).toEqual({ 'en-US': 'Administrators only', ru: 'Только администраторы' });
    expect(got[2]?.where).toEqual({
      'en-US': 'Servers, DMs with the bot',
      ru: 'На серверах, в личке с ботом',
    });
    expect(got[3]?.who['en-US']).toBe('Members with KickMembers and Manage Roles');
    expect(got[3]?.where['en-US']).toBe('Anywhere');
  });
});

describe('docs/commands.md', () => {
  const table = renderCommandTable();

  it('shows every row in both languages', () => {
    for (const r of rows) {
      expect(table, r.path).toContain(`| \`${r.localizedPath['en-US']}\` | \`${r.localizedPath.ru}\` |`);
    }
    expect(table).toContain('## /settings · /настройки');
  });

  it('is what the definitions produce now', () => {
    const committed = readFileSync(new URL('../../docs/commands.md', import.meta.url), 'utf8');
    expect(committed === table, 'docs/commands.md is out of date: run `npm run docs:commands`').toBe(true);
  });
});
