/**
 * What the bot posts for the directory's events, in the server's public language. Everything in
 * them that the directory sent is untrusted: the comment's text is escaped (no markdown, no
 * mention, no link that pings or hides), cut to fit, and the author is a mention that renders as
 * a name; the message's allowed_mentions names no one, so nothing in it pings anybody.
 */
import type { APIEmbed } from 'discord.js';
import type { Translate } from '../../i18n/index.js';
import { COLORS } from '../../render/colors.js';
import { fitEmbed, LIMITS } from '../../render/limits.js';
import { safeText, truncate } from '../../render/text.js';
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

function commentEmbed(event: CommentEvent, t: Translate): APIEmbed {
  const fields: NonNullable<APIEmbed['fields']> = [
    { name: t('webhook.field.author'), value: `<@${event.userId}>`, inline: true },
  ];
  let description: string | undefined;
  let color: number = COLORS.info;
  if (event.change === 'new') {
    color = COLORS.success;
    fields.push({ name: t('webhook.field.vote'), value: voteText(event.vote.new, t), inline: true });
    description = quoted(event.text.new, 2_000, t);
  } else if (event.change === 'edit') {
    const vote =
      event.vote.old === event.vote.new
        ? voteText(event.vote.new, t)
        : `${voteText(event.vote.old, t)} → ${voteText(event.vote.new, t)}`;
    fields.push({ name: t('webhook.field.vote'), value: vote, inline: true });
    const changed = event.text.old !== event.text.new;
    fields.push(
      {
        name: t('webhook.field.before'),
        value: changed ? quoted(event.text.old, LIMITS.fieldValue, t) : `*${t('webhook.unchanged')}*`,
        inline: false,
      },
      { name: t('webhook.field.after'), value: quoted(event.text.new, LIMITS.fieldValue, t), inline: false },
    );
  } else {
    color = COLORS.warning;
    fields.push(
      { name: t('webhook.field.vote'), value: voteText(event.vote.old ?? event.vote.new, t), inline: true },
      {
        name: t('webhook.field.reason'),
        value: t(event.reason === null ? 'webhook.reason.unknown' : `webhook.reason.${event.reason}`),
        inline: true,
      },
    );
    const text = event.text.old ?? event.text.new;
    if (text !== null) description = quoted(text, 2_000, t);
  }
  return fitEmbed({
    color,
    title: t(`webhook.comment.${event.change}`),
    ...(description === undefined ? {} : { description }),
    fields,
    timestamp: new Date(event.at).toISOString(),
  });
}

/** The embed for an event to announce; undefined for one that is not announced (an up). */
export function renderEvent(event: DirectoryEvent, t: Translate): APIEmbed | undefined {
  switch (event.kind) {
    case 'comment':
      return commentEmbed(event, t);
    case 'test':
      return fitEmbed({
        color: COLORS.success,
        title: t('webhook.connected.title'),
        description: t('webhook.connected.description'),
      });
    case 'bump':
      return undefined;
  }
}
