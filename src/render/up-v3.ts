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

/** What the bot has seen of the server's ups, for the /up answer on v3 (store/history.ts latest). */
export interface UpsSeen {
  /** The server's latest up the bot was told of. */
  last?: { userId: string; at: number } | undefined;
  /** The presser's own latest up, and when the directory lets them up again (its daily cadence). */
  mine?: { at: number; againAt: number } | undefined;
  /** The directory's notifications reach this bot: the answer is followed up when the up comes. */
  watching?: boolean;
}

export function renderUpOnSite(
  guildId: string,
  server: DirectoryServer | null,
  t: Translate,
  now: number,
  seen: UpsSeen = {},
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
    ...(seen.last
      ? [t('upV3.lastSeen', { member: `<@${seen.last.userId}>`, when: relative(seen.last.at, t) })]
      : []),
    ...(seen.mine && seen.mine.againAt > now
      ? [t('upV3.again', { when: relative(seen.mine.at, t), again: relative(seen.mine.againAt, t) })]
      : []),
    ...(server && seen.watching ? [t('upV3.watching')] : []),
  ];
  return {
    layout: fitLayout([
      container(COLORS.info, [text(lines.join('\n')), rows([linkButton(t('upV3.button'), page)])]),
    ]),
  };
}

function relative(at: number, t: Translate): string {
  return timestamp(new Date(at), TimestampStyles.RelativeTime) ?? t('common.unknown');
}

/** What the directory told of an up: the follow-up of an /up answer that sent a member to the site. */
export function renderUpSeen(
  up: { userId: string; at: number; upCount: number | null; nextUpAt: number | null },
  t: Translate,
): LayoutMessage {
  const lines = [
    `### ${t('upV3.seenTitle')}`,
    t('upV3.seenBy', { member: `<@${up.userId}>`, when: relative(up.at, t) }),
    ...(up.upCount !== null ? [t('upV3.seenCount', { count: up.upCount })] : []),
    ...(up.nextUpAt !== null ? [t('upV3.seenNext', { when: relative(up.nextUpAt, t) })] : []),
  ];
  return { layout: fitLayout([container(COLORS.success, [text(lines.join('\n'))])]) };
}
