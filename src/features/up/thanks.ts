/**
 * The thank-you line a server may add to a successful /up (`/settings thanks`, off by default):
 * a template with the placeholders `{member}` (who upped, a mention that pings nobody: every
 * answer's allowed_mentions is empty), `{server}` (its name, escaped), `{ups}` (the directory's up
 * count after it) and `{streak}` (the member's days in a row, features/history/streaks.ts).
 * Checked and filled as the reminder's text is (render/template.ts).
 */
import type { Translate } from '../../i18n/index.js';
import { checkTemplate, fillPlaceholders, type TemplateCheck } from '../../render/template.js';
import { neutralizeMentions, safeLine, stripControl } from '../../render/text.js';

export const THANKS_PLACEHOLDERS = ['member', 'server', 'ups', 'streak'] as const;
/** A line, not a letter: counted in characters (code points), as Discord counts an option's length. */
export const MAX_THANKS_LENGTH = 300;

export function checkThanks(text: string): TemplateCheck {
  return checkTemplate(text, THANKS_PLACEHOLDERS, MAX_THANKS_LENGTH);
}

export interface ThanksValues {
  userId: string;
  /** The server's name as Discord gave it; null: not known here (the line says "this server"). */
  serverName: string | null;
  /** The directory's up count after this up, when its answer gave one. */
  ups: number | null;
  /** The member's days in a row, this one included. */
  streakDays: number;
}

/**
 * The line for this up. What the admin typed shows as typed but mentions nothing: `@everyone`,
 * `<@…>` and the like are broken (the answer's allowed_mentions would keep them from pinging, but
 * they would still look like mentions); only `{member}` is a mention.
 */
export function thanksLine(template: string, values: ThanksValues, t: Translate): string {
  return fillPlaceholders(neutralizeMentions(stripControl(template)), {
    member: `<@${values.userId}>`,
    server: values.serverName ? safeLine(values.serverName, 100) : t('up.thisServer'),
    ups: values.ups === null ? '—' : t('up.count', { count: values.ups }),
    streak: t('up.count', { count: values.streakDays }),
  });
}
