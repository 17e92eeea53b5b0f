/**
 * What /up says on API v3, which has no route for another bot to raise a server (none in
 * docs-v3 nor in any SDK's route list: docs/directory-v3-sources.md §2): where to raise it (its
 * page on the directory, as a link button), and what the directory says of it now (its ups that
 * still count, and when the next of them ends). Never that the server was raised.
 */
import { TimestampStyles } from 'discord.js';
import type { DirectoryServer } from '../directory/index.js';
import { countingUps } from '../directory/standing.js';
import type { Translate } from '../i18n/index.js';
import { COLORS } from './colors.js';
import { linkButton, rows } from './components.js';
import { container, fitLayout, text } from './layout.js';
import type { LayoutMessage } from './message.js';
import { timestamp } from './text.js';

export function renderUpOnSite(
  guildId: string,
  server: DirectoryServer | null,
  t: Translate,
  now: number,
): LayoutMessage {
  const page = server?.pageLinks[0] ?? `https://boticord.top/server/${guildId}`;
  const counting = server ? countingUps(server.ups, now) : null;
  const lines = [
    `### ${t('upV3.title')}`,
    server ? t('upV3.body') : t('upV3.notListed'),
    ...(server && server.upCount !== null ? [t('upV3.count', { count: server.upCount })] : []),
    ...(counting && counting.count > 0
      ? [
          t('upV3.counting', {
            count: counting.count,
            when: timestamp(counting.nextEndsAt, TimestampStyles.RelativeTime) ?? t('common.unknown'),
          }),
        ]
      : []),
  ];
  return {
    layout: fitLayout([
      container(COLORS.info, [text(lines.join('\n')), rows([linkButton(t('upV3.button'), page)])]),
    ]),
  };
}
