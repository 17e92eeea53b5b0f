/**
 * Every command, subcommand group, subcommand and option as rows, in each supported language, read
 * from the definitions Discord is sent (commands/definitions.ts): the generated table of
 * docs/commands.md and a runtime /help read the same rows, so neither can drift from what a
 * client shows. Free of fs and handlers, as the definitions are: importing it loads JSON and the
 * i18n catalogs only.
 */
import {
  type APIApplicationCommandOption,
  ApplicationCommandOptionType,
  ApplicationCommandType,
  InteractionContextType,
  type LocalizationMap,
  PermissionFlagsBits,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  type RESTPostAPIContextMenuApplicationCommandsJSONBody,
} from 'discord.js';
import { SUPPORTED_LOCALES, type SupportedLocale, translator } from '../src/i18n/index.js';
import { deployedCommands } from './definitions.js';

/** One text per supported language. */
export type Localized = Readonly<Record<SupportedLocale, string>>;

export type CatalogKind = 'command' | 'group' | 'subcommand' | 'option' | 'user-command' | 'message-command';

export interface CatalogRow {
  readonly kind: CatalogKind;
  /** The top-level command's English name (`settings`), to group rows by command. */
  readonly command: string;
  /** The path as typed in an English client: `/settings reminders channel`; a context-menu command's name. */
  readonly path: string;
  /** The path as each language's client shows it (`/настройки напоминания канал`). */
  readonly localizedPath: Localized;
  /** This row's own name (`channel`, `канал`). */
  readonly name: Localized;
  /** Empty for context-menu commands, which Discord gives no description. */
  readonly description: Localized;
  /** Who may use it: the command's `default_member_permissions`, which its subcommands and options share. */
  readonly who: Localized;
  /** Where it can be used: the command's `contexts`. */
  readonly where: Localized;
  /** Options only: whether Discord makes the user fill it in. */
  readonly required: boolean | undefined;
  /** Options only: the fixed choices' names, in order. */
  readonly choices: readonly Localized[];
}

type Definition =
  | RESTPostAPIChatInputApplicationCommandsJSONBody
  | RESTPostAPIContextMenuApplicationCommandsJSONBody;

/** Permissions the catalogs name as Discord's clients do; any other is shown by its flag name. */
const NAMED_PERMISSIONS = ['Administrator', 'ManageGuild', 'ManageRoles', 'ManageChannels', 'ManageMessages'];

function localized(text: (locale: SupportedLocale) => string): Localized {
  return Object.fromEntries(SUPPORTED_LOCALES.map((locale) => [locale, text(locale)])) as Record<
    SupportedLocale,
    string
  >;
}

/** What a client in `locale` shows: its localization, else the default (which is en-US). */
function inLocale(base: string, map: LocalizationMap | null | undefined, locale: SupportedLocale): string {
  return map?.[locale] ?? base;
}

function who(permissions: string | null | undefined): Localized {
  return localized((locale) => {
    const t = translator(locale);
    // Unset: everyone may; "0": nobody but administrators (Discord's meaning of an empty set).
    if (permissions === undefined || permissions === null) return t('commandCatalog.who.anyone');
    const bits = BigInt(permissions);
    if (bits === 0n) return t('commandCatalog.who.administrators');
    const names = Object.entries(PermissionFlagsBits)
      .filter(([, bit]) => (bits & bit) === bit)
      .map(([flag]) => (NAMED_PERMISSIONS.includes(flag) ? t(`commandCatalog.permission.${flag}`) : flag));
    return t('commandCatalog.who.permissions', {
      permissions: names.join(t('commandCatalog.who.and')),
    });
  });
}

function where(contexts: readonly InteractionContextType[] | null | undefined): Localized {
  // Unset: Discord allows every context for a new global command.
  const all = [
    InteractionContextType.Guild,
    InteractionContextType.BotDM,
    InteractionContextType.PrivateChannel,
  ];
  const given = contexts ?? all;
  return localized((locale) => {
    const t = translator(locale);
    if (all.every((context) => given.includes(context))) return t('commandCatalog.where.anywhere');
    if (given.length === 1 && given[0] === InteractionContextType.Guild)
      return t('commandCatalog.where.serversOnly');
    const parts: Record<InteractionContextType, string> = {
      [InteractionContextType.Guild]: t('commandCatalog.where.guild'),
      [InteractionContextType.BotDM]: t('commandCatalog.where.botDm'),
      [InteractionContextType.PrivateChannel]: t('commandCatalog.where.privateChannel'),
    };
    const text = all
      .filter((context) => given.includes(context))
      .map((context) => parts[context])
      .join(t('commandCatalog.where.and'));
    return text.charAt(0).toUpperCase() + text.slice(1);
  });
}

/** The rows of one slash command's options, depth first in Discord's order. */
function optionRows(
  options: readonly APIApplicationCommandOption[],
  parent: { path: string; localizedPath: Localized },
  shared: Pick<CatalogRow, 'command' | 'who' | 'where'>,
): CatalogRow[] {
  return options.flatMap((option) => {
    const name = localized((locale) => inLocale(option.name, option.name_localizations, locale));
    const here = {
      path: `${parent.path} ${option.name}`,
      localizedPath: localized((locale) => `${parent.localizedPath[locale]} ${name[locale]}`),
    };
    const description = localized((locale) =>
      inLocale(option.description, option.description_localizations, locale),
    );
    if (
      option.type === ApplicationCommandOptionType.SubcommandGroup ||
      option.type === ApplicationCommandOptionType.Subcommand
    ) {
      const kind = option.type === ApplicationCommandOptionType.Subcommand ? 'subcommand' : 'group';
      const row: CatalogRow = {
        ...shared,
        ...here,
        kind,
        name,
        description,
        required: undefined,
        choices: [],
      };
      return [row, ...optionRows(option.options ?? [], here, shared)];
    }
    const choices =
      'choices' in option && option.choices
        ? option.choices.map((c) => localized((locale) => inLocale(c.name, c.name_localizations, locale)))
        : [];
    return [
      { ...shared, ...here, kind: 'option', name, description, required: option.required === true, choices },
    ];
  });
}

function commandRows(definition: Definition): CatalogRow[] {
  const name = localized((locale) => inLocale(definition.name, definition.name_localizations, locale));
  const shared = {
    command: definition.name,
    who: who(definition.default_member_permissions),
    where: where(definition.contexts),
  };
  if (definition.type === ApplicationCommandType.ChatInput || definition.type === undefined) {
    const chat = definition as RESTPostAPIChatInputApplicationCommandsJSONBody;
    const top = {
      path: `/${chat.name}`,
      localizedPath: localized((locale) => `/${name[locale]}`),
    };
    const description = localized((locale) =>
      inLocale(chat.description, chat.description_localizations, locale),
    );
    const row: CatalogRow = {
      ...shared,
      ...top,
      kind: 'command',
      name,
      description,
      required: undefined,
      choices: [],
    };
    return [row, ...optionRows(chat.options ?? [], top, shared)];
  }
  const user = definition.type === ApplicationCommandType.User;
  return [
    {
      ...shared,
      kind: user ? 'user-command' : 'message-command',
      path: definition.name,
      localizedPath: name,
      name,
      description: localized(() => ''),
      required: undefined,
      choices: [],
    },
  ];
}

/** A row for every command, subcommand group, subcommand and option, in the order they are deployed. */
export function commandCatalog(commands: readonly Definition[] = deployedCommands): CatalogRow[] {
  return commands.flatMap(commandRows);
}

/** A table cell: one line, with the pipes that would end it escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

/** What a row's description cell says in `locale`: the description, then required and choices for an option. */
function describeRow(row: CatalogRow, locale: SupportedLocale): string {
  const t = translator(locale);
  const parts = [
    row.kind === 'user-command'
      ? t('commandCatalog.userCommand')
      : row.kind === 'message-command'
        ? t('commandCatalog.messageCommand')
        : row.description[locale],
  ];
  if (row.required) parts.push(`*${t('commandCatalog.required')}*`);
  if (row.choices.length > 0) {
    parts.push(t('commandCatalog.choices', { choices: row.choices.map((c) => c[locale]).join(' · ') }));
  }
  return cell(parts.join('; '));
}

/**
 * docs/commands.md: per command, who and where in both languages, then a table with each row's
 * path and description as an English and a Russian client show them.
 */
export function renderCommandTable(commands: readonly Definition[] = deployedCommands): string {
  const en = translator('en-US');
  const ru = translator('ru');
  const both = (key: string): string => `${en(key)} · ${ru(key)}`;
  const rows = commandCatalog(commands);
  const lines = [
    `# ${both('commandCatalog.doc.title')}`,
    '',
    `${en('commandCatalog.doc.intro')}`,
    '',
    `${ru('commandCatalog.doc.intro')}`,
    '',
    // Paths from docs/, where the table is written.
    `[${en('commandCatalog.doc.guide')}](admin-guide.md) · [${en('commandCatalog.doc.quickStart')}](../README.md) · ` +
      `[${ru('commandCatalog.doc.guide')}](ru/admin-guide.md) · [${ru('commandCatalog.doc.quickStart')}](ru/quick-start.md)`,
    '',
    `<!-- ${en('commandCatalog.doc.generated')} -->`,
  ];
  for (const command of new Set(rows.map((row) => row.command))) {
    const own = rows.filter((row) => row.command === command);
    const head = own[0];
    if (!head) continue;
    lines.push(
      '',
      `## ${head.localizedPath['en-US']} · ${head.localizedPath.ru}`,
      '',
      `${en('commandCatalog.table.who')}: ${head.who['en-US']} · ${ru('commandCatalog.table.who')}: ${head.who.ru}  `,
      `${en('commandCatalog.table.where')}: ${head.where['en-US']} · ${ru('commandCatalog.table.where')}: ${head.where.ru}`,
      '',
      `| ${en('commandCatalog.table.command')} | ${ru('commandCatalog.table.command')} | ${en('commandCatalog.table.description')} | ${ru('commandCatalog.table.description')} |`,
      '|---|---|---|---|',
    );
    for (const row of own) {
      lines.push(
        `| \`${cell(row.localizedPath['en-US'])}\` | \`${cell(row.localizedPath.ru)}\` | ${describeRow(row, 'en-US')} | ${describeRow(row, 'ru')} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
