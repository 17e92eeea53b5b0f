/**
 * What the bot posts for the directory's events, in the server's public language. Everything in
 * them that the directory sent is untrusted: the comment's text is escaped (no markdown, no
 * mention, no link that pings or hides), cut to fit, and the author is a mention that renders as
 * a name; the message's allowed_mentions names no one, so nothing in it pings anybody.
 */
import { type APIContainerComponent, type APIMessageTopLevelComponent, TimestampStyles } from 'discord.js';
import type { Translate } from '../../i18n/index.js';
import { COLORS } from '../../render/colors.js';
import { stars } from '../../render/comments.js';
import { container, facts, fitLayout, notice, separator, subtext, text } from '../../render/layout.js';
import { safeText, timestamp, truncate } from '../../render/text.js';
import type { DirectoryEvent } from './events.js';

type CommentEvent = Extract<DirectoryEvent, { kind: 'comment' }>;

/** A comment's text in a quote block: each line quoted, escaped, cut to `max`. */
function quoted(text: string | null, max: number, t: Translate): string {
  if (text === null || text.trim() === '') return `*${t('webhook.noText')}*`;
  return truncate(`> ${safeText(text, max).replace(/\n/g, '\n> ')}`, max);
}

function voteText(vote: number | null, t: Translate): string {
  if (vote === 1) return t('webhook.vote.positive');
  if (vote === -1) return t('webhook.vote.negative');
  return t('webhook.vote.none');
}

function commentLayout(event: CommentEvent, t: Translate): APIContainerComponent {
  if (event.v3) return reviewLayout(event, t);
  const pairs: Array<[string, string]> = [[t('webhook.field.author'), `<@${event.userId}>`]];
  const quotes: Array<string | null> = [];
  let color: number = COLORS.info;
  if (event.change === 'new') {
    color = COLORS.success;
    pairs.push([t('webhook.field.vote'), voteText(event.vote.new, t)]);
    quotes.push(quoted(event.text.new, 2_000, t));
  } else if (event.change === 'edit') {
    const vote =
      event.vote.old === event.vote.new
        ? voteText(event.vote.new, t)
        : `${voteText(event.vote.old, t)} → ${voteText(event.vote.new, t)}`;
    pairs.push([t('webhook.field.vote'), vote]);
    const changed = event.text.old !== event.text.new;
    quotes.push(
      facts([
        [
          t('webhook.field.before'),
          changed ? quoted(event.text.old, 1_500, t) : `*${t('webhook.unchanged')}*`,
        ],
      ]),
      facts([[t('webhook.field.after'), quoted(event.text.new, 1_500, t)]]),
    );
  } else {
    color = COLORS.warning;
    pairs.push(
      [t('webhook.field.vote'), voteText(event.vote.old ?? event.vote.new, t)],
      [
        t('webhook.field.reason'),
        t(event.reason === null ? 'webhook.reason.unknown' : `webhook.reason.${event.reason}`),
      ],
    );
    const said = event.text.old ?? event.text.new;
    if (said !== null) quotes.push(quoted(said, 2_000, t));
  }
  const when = timestamp(new Date(event.at), TimestampStyles.LongDateTime);
  return container(color, [
    text(`### ${t(`webhook.comment.${event.change}`)}`),
    // The comment first, then who wrote it and how they voted.
    ...quotes.map((q) => text(q)),
    separator(),
    text(facts(pairs)),
    subtext(when),
  ]);
}

/**
 * A review told by v3's notifications: one per member and server, with a rating of 1 to 5 and its
 * text as it is now (an edit's old text is not sent). Its edit replaces the announcement's
 * content, its removal marks it (features/webhooks/reviews.ts).
 */
function reviewLayout(event: CommentEvent, t: Translate): APIContainerComponent {
  const pairs: Array<[string, string]> = [[t('webhook.field.author'), `<@${event.userId}>`]];
  if (event.rating != null) pairs.push([t('webhook.field.rating'), stars(event.rating)]);
  const said = event.change === 'delete' ? event.text.old : event.text.new;
  const color =
    event.change === 'new' ? COLORS.success : event.change === 'edit' ? COLORS.info : COLORS.warning;
  const when = timestamp(new Date(event.at), TimestampStyles.LongDateTime);
  return container(color, [
    text(`### ${t(`webhook.review.${event.change}`)}`),
    text(quoted(said, 2_000, t)),
    separator(),
    text(facts(pairs)),
    subtext(when),
  ]);
}

/**
 * The layout (Components V2) for an event to announce; undefined for one that is not announced
 * (an up). Posted with an empty allowed_mentions: the author's mention shows a name, pings no one.
 */
export function renderEvent(event: DirectoryEvent, t: Translate): APIMessageTopLevelComponent[] | undefined {
  switch (event.kind) {
    case 'comment':
      return fitLayout([commentLayout(event, t)]);
    case 'test':
      return [notice(COLORS.success, t('webhook.connected.title'), t('webhook.connected.description'))];
    case 'bump':
      return undefined;
  }
}
