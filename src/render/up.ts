/** The /up outcome: success (public), "not yet" (cooldown), not updated, each with its own look. */
import { type APIEmbed, TimestampStyles } from 'discord.js';
import type { ServerUpResult } from '../directory/index.js';
import type { Translate } from '../i18n/index.js';
import { COLORS } from './colors.js';
import { fitEmbed, LIMITS } from './limits.js';
import type { EmbedMessage } from './message.js';
import { directoryMarkdown, timestamp } from './text.js';

export type UpOutcome = 'success' | 'cooldown' | 'notUpdated';

export function upOutcome(result: ServerUpResult): UpOutcome {
  if (!result.updated) return 'notUpdated';
  return result.upSuccessfully ? 'success' : 'cooldown';
}

const LOOK: Record<UpOutcome, { color: number; icon: string }> = {
  success: { color: COLORS.success, icon: '⬆️' },
  cooldown: { color: COLORS.cooldown, icon: '⏳' },
  notUpdated: { color: COLORS.warning, icon: '⚠️' },
};

/**
 * `<t:…:R> (<t:…:f>)`, or "now" when the time has passed. Null, and no field, when it is unknown:
 * none sent, or one out of range (the schema makes it null).
 */
export function nextUpText(nextUpAt: Date | null, now: number, t: Translate): string | null {
  const relative = timestamp(nextUpAt, TimestampStyles.RelativeTime);
  const absolute = timestamp(nextUpAt, TimestampStyles.ShortDateTime);
  if (!nextUpAt || relative === null || absolute === null) return null;
  if (nextUpAt.getTime() <= now) return t('up.nextUpNow');
  return t('up.nextUpAt', { relative, absolute });
}

export function renderUpResult(result: ServerUpResult, t: Translate, now: number): EmbedMessage {
  const outcome = upOutcome(result);
  const look = LOOK[outcome];
  const next = nextUpText(result.nextUpAt, now, t);
  const embed: APIEmbed = {
    color: look.color,
    title: `${look.icon} ${t(`up.title.${outcome}`)}`,
    description: directoryMarkdown(result.message, LIMITS.description),
    fields: [
      { name: t('up.bumps'), value: String(result.bumps), inline: true },
      { name: t('up.boost'), value: result.boost ? t('common.yes') : t('common.no'), inline: true },
      ...(next ? [{ name: t('up.nextUp'), value: next, inline: true }] : []),
    ],
  };
  return { embeds: [fitEmbed(embed)], components: [] };
}
