/**
 * Text from the directory is untrusted: it is escaped for markdown, its mention syntax is
 * broken (so nothing renders as a ping even where allowed_mentions would not apply), and it
 * is cut to Discord's limits on code-point boundaries.
 */
import { escapeMarkdown } from 'discord.js';

const ELLIPSIS = '…';

/** Cuts to at most `max` UTF-16 units without splitting a surrogate pair, ending with an ellipsis. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return '';
  let cut = text.slice(0, max - ELLIPSIS.length);
  const last = cut.charCodeAt(cut.length - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1);
  return `${cut}${ELLIPSIS}`;
}

/** Breaks @everyone, @here and <@…>, <@&…>, <#…> so they show as text and never mention. */
export function neutralizeMentions(text: string): string {
  return text.replace(/@(everyone|here)/gi, '@\u200b$1').replace(/<([@#][!&]?)/g, '<\u200b$1');
}

/** Control characters other than newline and tab have no place in a reply. */
function stripControl(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping them is the point
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f\u202e\u2066-\u2069]/g, '');
}

/** Untrusted text for a reply: escaped, mention-safe, cut to `max`. */
export function safeText(text: string | null | undefined, max: number): string {
  if (text === null || text === undefined) return '';
  return truncate(neutralizeMentions(escapeMarkdown(stripControl(text))), max);
}

/** Untrusted text on one line (titles, field names, button labels). */
export function safeLine(text: string | null | undefined, max: number): string {
  return safeText((text ?? '').replace(/\s+/g, ' ').trim(), max);
}

/** A label for a button: no markdown is rendered there, so only cut it. */
export function plainLabel(text: string, max = 80): string {
  return truncate(stripControl(text).replace(/\s+/g, ' ').trim(), max);
}

const SHORTCODES: Record<string, string> = {
  white_check_mark: '✅',
  heavy_check_mark: '✔️',
  x: '❌',
  no_entry: '⛔',
  warning: '⚠️',
  information_source: 'ℹ️',
  tada: '🎉',
  clock: '🕐',
  hourglass: '⌛',
  hourglass_flowing_sand: '⏳',
  arrow_up: '⬆️',
  rocket: '🚀',
  star: '⭐',
  fire: '🔥',
};

/**
 * The directory's up `message` is ready-made markdown meant to be shown as given; bot messages
 * do not turn :shortcodes: into emoji, so the common ones are replaced. Mentions are still broken.
 */
export function directoryMarkdown(text: string, max: number): string {
  const withEmoji = stripControl(text).replace(
    /:([a-z0-9_+-]+):/g,
    (all, name: string) => SHORTCODES[name] ?? all,
  );
  return truncate(neutralizeMentions(withEmoji), max);
}

const SNOWFLAKE = /^\d{17,20}$/;

/** A user mention when the value is an ID (it renders, and never pings: allowed_mentions is empty), else text. */
export function userMention(value: string | null | undefined, max = 100): string {
  if (!value) return '';
  return SNOWFLAKE.test(value) ? `<@${value}>` : safeLine(value, max);
}

/** An http(s) URL fit for a button or a thumbnail, or null. */
export function httpUrl(value: string | null | undefined): string | null {
  if (!value || value.length > 512) return null;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.toString() : null;
  } catch {
    return null;
  }
}
