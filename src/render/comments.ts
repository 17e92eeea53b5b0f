/** A page of comments (a V2 layout), with previous / next buttons whose state is in their custom_id. */
import { ButtonStyle, TimestampStyles } from 'discord.js';
import type { DirectoryComment, ProfileComments } from '../directory/index.js';
import type { Translate } from '../i18n/index.js';
import { COLORS } from './colors.js';
import { actionButton, rows } from './components.js';
import { type CommentsKind, commentsCustomId } from './custom-id.js';
import { container, fitLayout, separator, subtext, text } from './layout.js';
import { LIMITS } from './limits.js';
import type { LayoutMessage } from './message.js';
import { safeLine, safeText, timestamp, truncate, userMention } from './text.js';

export const COMMENTS_PER_PAGE = 5;
const COMMENT_TEXT_LIMIT = 600;

export interface PagedComment extends DirectoryComment {
  /** For a profile's comments: what the comment is about. */
  about?: 'bot' | 'server';
}

export function flattenProfileComments(comments: ProfileComments): PagedComment[] {
  const all: PagedComment[] = [
    ...comments.bots.map((c) => ({ ...c, about: 'bot' as const })),
    ...comments.servers.map((c) => ({ ...c, about: 'server' as const })),
    ...(comments.other ?? []),
  ];
  // Newest first; comments without a time go last.
  return all.sort((a, b) => (b.at?.getTime() ?? 0) - (a.at?.getTime() ?? 0));
}

/** ★★★★☆ for a rating of 1 to 5 (v3's reviews and comments). */
export function stars(rating: number): string {
  const whole = Math.max(0, Math.min(5, Math.round(rating)));
  return `${'★'.repeat(whole)}${'☆'.repeat(5 - whole)}`;
}

export function voteIcon(vote: number): string {
  return vote > 0 ? '👍' : vote < 0 ? '👎' : '·';
}

export function pageCount(total: number): number {
  return Math.max(1, Math.ceil(total / COMMENTS_PER_PAGE));
}

export function renderCommentsPage(
  kind: CommentsKind,
  id: string,
  subject: string,
  comments: readonly PagedComment[],
  requestedPage: number,
  t: Translate,
): LayoutMessage {
  const pages = pageCount(comments.length);
  const wanted = Number.isFinite(requestedPage) ? Math.trunc(requestedPage) : 0;
  const page = Math.min(Math.max(0, wanted), pages - 1);
  const shown = comments.slice(page * COMMENTS_PER_PAGE, (page + 1) * COMMENTS_PER_PAGE);
  const lines = shown.map((c) => {
    // No time, or one out of range, is said to be unknown rather than left out or shown as NaN.
    const when = ` · ${timestamp(c.at, TimestampStyles.RelativeTime) ?? t('comments.timeUnknown')}`;
    const edited = c.isUpdated ? ` · ${t('comments.edited')}` : '';
    const about = c.about ? ` · ${t(c.about === 'bot' ? 'comments.onBot' : 'comments.onServer')}` : '';
    // Quoted before the cut, so a text of many short lines cannot grow past its share of the page.
    const text = truncate(safeText(c.text, LIMITS.description).replace(/\n/g, '\n> '), COMMENT_TEXT_LIMIT);
    // v3 rates 1 to 5 where v1/v2 voted; and its moderators may have answered.
    const icon = c.rating === null || c.rating === undefined ? voteIcon(c.vote) : stars(c.rating);
    const reply = c.moderatorReply
      ? `\n> ↳ *${t('common.moderatorReply')}:* ${truncate(safeLine(c.moderatorReply, LIMITS.description), COMMENT_TEXT_LIMIT / 2)}`
      : '';
    return `${icon} ${userMention(c.userId)}${when}${edited}${about}\n> ${text}${reply}`;
  });
  const titleKey =
    kind === 'bot'
      ? 'comments.titleBot'
      : kind === 'server'
        ? 'comments.titleServer'
        : 'comments.titleProfile';
  const title = safeLine(t(titleKey, { name: subject }), LIMITS.title);
  const footer = t('comments.page', {
    page: page + 1,
    pages,
    total: t('plural.comments', { count: comments.length }),
  });
  // Both targets stay inside 0..pages-1, so even a disabled button carries an ID that decodes.
  const previous = commentsCustomId({ mode: 'page', kind, id, page: Math.max(0, page - 1) });
  const next = commentsCustomId({ mode: 'page', kind, id, page: Math.min(pages - 1, page + 1) });
  const pager =
    pages > 1 && previous !== null && next !== null
      ? rows([
          actionButton(t('comments.previous'), previous, {
            disabled: page === 0,
            style: ButtonStyle.Secondary,
          }),
          actionButton(t('comments.next'), next, {
            disabled: page >= pages - 1,
            style: ButtonStyle.Secondary,
          }),
        ])
      : null;
  const layout = container(COLORS.info, [
    text(`### ${title}`),
    ...(lines.length > 0
      ? lines.flatMap((line, i) => [...(i > 0 ? [separator({ divider: false })] : []), text(line)])
      : [text(t('comments.empty'))]),
    separator(),
    subtext(footer),
    pager,
  ]);
  return { layout: fitLayout([layout]) };
}
