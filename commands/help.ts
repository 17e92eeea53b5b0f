/**
 * /help: the bot's commands in the reader's language, each a clickable mention with what it does,
 * who may use it and where, read from the same rows as docs/commands.md (commands/catalog.ts), so
 * a command added to the definitions is listed here without a word more. Answered privately.
 */

import type { SupportedLocale, Translate } from '../src/i18n/index.js';
import type { SlashCommand } from '../src/interactions/types.js';
import { COLORS } from '../src/render/colors.js';
import { container, separator, subtext, text } from '../src/render/layout.js';
import type { LayoutMessage } from '../src/render/message.js';
import { type CatalogRow, commandCatalog } from './catalog.js';
import { helpCommand } from './definitions.js';

/** The commands a reader picks from: each slash command and each context-menu command. */
const TOP = commandCatalog().filter((row) => row.kind === 'command' || row.kind === 'user-command');

export function renderHelp(
  rows: readonly CatalogRow[],
  mentions: ReadonlyMap<string, string>,
  locale: SupportedLocale,
  t: Translate,
): LayoutMessage {
  const lines = rows.map((row) => {
    if (row.kind === 'user-command') return `• ${t('help.menu', { name: `**${row.name[locale]}**` })}`;
    const mention = mentions.get(row.command) ?? row.localizedPath[locale];
    return `• ${mention}: ${row.description[locale]}\n-# ${row.who[locale]} · ${row.where[locale]}`;
  });
  return {
    layout: [
      container(COLORS.info, [
        text(`## ${t('help.title')}`),
        text(
          t('help.start', {
            setup: mentions.get('setup') ?? '/setup',
            settings: mentions.get('settings') ?? '/settings',
          }),
        ),
        separator(),
        text(lines.join('\n')),
        subtext(t('help.languages')),
      ]),
    ],
  };
}

export const help: SlashCommand = {
  data: helpCommand,
  async execute({ deps, t, locale, reply }) {
    const mentions = new Map(
      await Promise.all(
        TOP.filter((row) => row.kind === 'command').map(
          async (row) => [row.command, await deps.commands.mention(row.command)] as const,
        ),
      ),
    );
    await reply.private(renderHelp(TOP, mentions, locale, t));
    return 'shown';
  },
};
