/**
 * Text from the directory is untrusted: it is escaped for markdown, its mention syntax is
 * broken (so nothing renders as a ping even where allowed_mentions would not apply), and it
 * is cut to Discord's limits on code-point boundaries.
 */
import { type TimestampStylesString, time } from 'discord.js';
import { isSnowflake } from '../directory/refs.js';
import { removeControls } from '../text/controls.js';
import { isUsableTime } from '../time/range.js';

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

/**
 * What src/text/controls.ts counts unsafe (control characters but newline and tab, bidi
 * controls such as U+061C, U+200E/U+200F and the overrides that can make text read backwards)
 * has no place in a reply. Line and paragraph separators and lone carriage returns become
 * newlines first.
 */
export function stripControl(text: string): string {
  return removeControls(text.replace(/\r\n?|[\u2028\u2029]/g, '\n'));
}

/** Autolinked URLs and custom emoji stay as they are: a backslash inside would break them. */
const KEEP = /https?:\/\/[^\s<]+|<a?:\w{2,32}:\d{17,20}>/gi;

function escapeInline(text: string): string {
  return text.replace(/[\\*_~|`[\]]/g, '\\$&');
}

/**
 * Escapes every piece of Discord markdown: emphasis, underline, strikethrough, spoilers, code,
 * masked links, and at the start of a line headings, `-#` subtext, lists and block quotes.
 * Discord renders a backslash before any punctuation as that character, so escaping more than
 * needed shows nothing extra. Linear in the text's length: discord.js's escapeMarkdown uses
 * look-behinds that take seconds on a 10,000-character line.
 */
export function escapeAll(text: string): string {
  let out = '';
  let last = 0;
  for (const match of text.matchAll(KEEP)) {
    out += escapeInline(text.slice(last, match.index)) + match[0];
    last = match.index + match[0].length;
  }
  out += escapeInline(text.slice(last));
  return out
    .replace(/^([ \t]*)(#|>|-(?=[ \t#])|\+(?=[ \t]))/gm, '$1\\$2')
    .replace(/^([ \t]*\d+)\.(?=[ \t])/gm, '$1\\.');
}

/** Untrusted text for a reply: escaped, mention-safe, cut to `max`. */
export function safeText(text: string | null | undefined, max: number): string {
  if (text === null || text === undefined) return '';
  // Escaping only lengthens text: what lies past `max` before it would be cut anyway.
  return truncate(neutralizeMentions(escapeAll(truncate(stripControl(text), max + 1))), max);
}

function oneLine(text: string): string {
  return stripControl(text).replace(/\s+/g, ' ').trim();
}

/** Untrusted text on one line (titles, field names, button labels). */
export function safeLine(text: string | null | undefined, max: number): string {
  return safeText(oneLine(text ?? ''), max);
}

/**
 * Untrusted text on one line inside an inline code span (a prefix, a tag, a short code).
 * Markdown is not parsed there, so it is not escaped (a `*` prefix must read `*`, not `\*`);
 * backticks, which would end the span, become a look-alike. Empty when nothing is left.
 */
export function safeCode(text: string | null | undefined, max: number): string {
  const inner = neutralizeMentions(oneLine(text ?? '').replace(/`/g, 'ˋ'));
  if (inner === '') return '';
  return `\`${truncate(inner, Math.max(1, max - 2))}\``;
}

/** Untrusted text where Discord renders no markdown (footers, author names): no escaping, one line. */
export function plainText(text: string | null | undefined, max: number): string {
  return truncate(neutralizeMentions(oneLine(text ?? '')), max);
}

/** A label for a button: no markdown is rendered there, so only cut it. */
export function plainLabel(text: string, max = 80): string {
  return truncate(oneLine(text), max);
}

const SHORTCODES: Record<string, string> = {
  white_check_mark: '✅',
  heavy_check_mark: '✔️',
  ballot_box_with_check: '☑️',
  x: '❌',
  negative_squared_cross_mark: '❎',
  no_entry: '⛔',
  no_entry_sign: '🚫',
  warning: '⚠️',
  information_source: 'ℹ️',
  grey_exclamation: '❕',
  exclamation: '❗',
  grey_question: '❔',
  question: '❓',
  tada: '🎉',
  clock: '🕐',
  alarm_clock: '⏰',
  stopwatch: '⏱️',
  timer: '⏲️',
  hourglass: '⌛',
  hourglass_flowing_sand: '⏳',
  arrow_up: '⬆️',
  up: '🆙',
  rocket: '🚀',
  star: '⭐',
  star2: '🌟',
  sparkles: '✨',
  fire: '🔥',
  heart: '❤️',
  thumbsup: '👍',
  '+1': '👍',
  thumbsdown: '👎',
  '-1': '👎',
  gem: '💎',
  zap: '⚡',
  link: '🔗',
};

/** Only known names: an unknown `:name:` must not swallow the colon that may open the next one. */
const SHORTCODE_RE = new RegExp(
  `:(${Object.keys(SHORTCODES)
    .map((name) => name.replace(/[+-]/g, '\\$&'))
    .join('|')}):`,
  'g',
);

/**
 * The directory's up `message` is ready-made markdown meant to be shown as given; bot messages
 * do not turn :shortcodes: into emoji, so the common ones are replaced. Mentions are still broken.
 */
export function directoryMarkdown(text: string, max: number): string {
  const withEmoji = stripControl(text).replace(SHORTCODE_RE, (all, name: string) => SHORTCODES[name] ?? all);
  return truncate(neutralizeMentions(withEmoji), max);
}

/** A user mention when the value is an ID (it renders, and never pings: allowed_mentions is empty), else text. */
export function userMention(value: string | null | undefined, max = 100): string {
  if (!value) return '';
  return isSnowflake(value) ? `<@${value}>` : safeLine(value, max);
}

/** Discord's limit on a button's or an embed's URL. */
export const URL_LIMIT = 512;

/** An http(s) URL fit for a button or a thumbnail, or null. */
export function httpUrl(value: string | null | undefined): string | null {
  if (!value || value.length > URL_LIMIT) return null;
  try {
    const url = new URL(value);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    const normalized = url.toString();
    return normalized.length <= URL_LIMIT ? normalized : null;
  } catch {
    return null;
  }
}

/** True when the value parses as a URL of any scheme (so it is not a plain handle to show as text). */
export function looksLikeUrl(value: string): boolean {
  return URL.canParse(value.trim());
}

/**
 * Discord's `<t:…>` markup for a date, or null when there is none or it is out of range
 * (time/range.ts): an Invalid Date would render as `<t:NaN:…>`.
 */
export function timestamp(date: Date | null | undefined, style: TimestampStylesString): string | null {
  return date && isUsableTime(date.getTime()) ? time(date, style) : null;
}
