/**
 * The sandbox's terminal renderer: a Discord message (as the stand-in stores it) written as lines
 * of text, the way a user would read it. Discord markdown stays as it is; timestamps get a human
 * reading next to them. Pure functions: no I/O, no clock of their own.
 */

export interface Style {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  green(text: string): string;
  red(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
  /** The embed's left bar, in the embed's colour when there is one. */
  bar(color: number | undefined): string;
}

const BAR = '│';

function sgr(open: string, close: string): (text: string) => string {
  return (text) => `\u001b[${open}m${text}\u001b[${close}m`;
}

export function createStyle(enabled: boolean): Style {
  if (!enabled) {
    const plain = (text: string): string => text;
    return {
      enabled,
      bold: plain,
      dim: plain,
      green: plain,
      red: plain,
      yellow: plain,
      cyan: plain,
      bar: () => BAR,
    };
  }
  return {
    enabled,
    bold: sgr('1', '22'),
    dim: sgr('2', '22'),
    green: sgr('32', '39'),
    red: sgr('31', '39'),
    yellow: sgr('33', '39'),
    cyan: sgr('36', '39'),
    bar: (color) =>
      color === undefined
        ? `\u001b[2m${BAR}\u001b[22m`
        : `\u001b[38;2;${(color >> 16) & 0xff};${(color >> 8) & 0xff};${color & 0xff}m${BAR}\u001b[39m`,
  };
}

/** Colours when writing to a terminal, unless NO_COLOR asks otherwise (https://no-color.org). */
export function wantsColor(out: object, noColor: string | undefined): boolean {
  const tty = 'isTTY' in out && out.isTTY === true;
  return tty && (noColor === undefined || noColor === '');
}

// -------------------------------------------------------------------------------------------------
// Timestamps

const RELATIVE = new Intl.RelativeTimeFormat('en', { numeric: 'always' });

/** "in 4 hours", "3 years ago": Discord's <t:…:R>, rounded to the largest fitting unit. */
export function relativeTime(atMs: number, nowMs: number): string {
  const diff = atMs - nowMs;
  const sign = diff < 0 ? -1 : 1;
  const seconds = Math.abs(diff) / 1000;
  if (seconds < 45) return diff < 0 ? 'a few seconds ago' : 'in a few seconds';
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return RELATIVE.format(sign * minutes, 'minute');
  const hours = Math.round(seconds / 3600);
  if (hours < 24) return RELATIVE.format(sign * hours, 'hour');
  const days = Math.round(seconds / 86_400);
  if (days < 30) return RELATIVE.format(sign * days, 'day');
  const months = Math.round(days / 30.44);
  if (months < 12) return RELATIVE.format(sign * months, 'month');
  return RELATIVE.format(sign * Math.round(days / 365.25), 'year');
}

const ABSOLUTE: Record<string, Intl.DateTimeFormatOptions> = {
  t: { hour: 'numeric', minute: '2-digit' },
  T: { hour: 'numeric', minute: '2-digit', second: '2-digit' },
  d: { year: 'numeric', month: '2-digit', day: '2-digit' },
  D: { year: 'numeric', month: 'long', day: 'numeric' },
  f: { year: 'numeric', month: 'long', day: 'numeric', hour: 'numeric', minute: '2-digit' },
  F: {
    weekday: 'long',
    year: 'numeric',
    month: 'long',
    day: 'numeric',
    hour: 'numeric',
    minute: '2-digit',
  },
};

const TIMESTAMP = /<t:(-?\d{1,13})(?::([tTdDfFR]))?>/g;

/** Every `<t:UNIX[:STYLE]>` followed by its reading in brackets: `<t:…:R> [in 4 hours]`. */
export function humanizeTimestamps(text: string, nowMs: number, style: Style): string {
  return text.replace(TIMESTAMP, (all, unix: string, format: string | undefined) => {
    const atMs = Number(unix) * 1000;
    const human =
      format === 'R'
        ? relativeTime(atMs, nowMs)
        : new Intl.DateTimeFormat('en-US', ABSOLUTE[format ?? 'f']).format(new Date(atMs));
    return `${all} ${style.dim(`[${human}]`)}`;
  });
}

// -------------------------------------------------------------------------------------------------
// Messages

export interface RenderableMessage {
  content?: string | undefined;
  embeds?: unknown[] | undefined;
  components?: unknown[] | undefined;
  /** Message flags: IS_COMPONENTS_V2 (1 << 15) lays the message out by its components. */
  flags?: number | undefined;
  /** A channel post as the stand-in records it: the message as stored (components, flags) is shown. */
  message?: RenderableMessage | undefined;
}

const IS_COMPONENTS_V2 = 1 << 15;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function records(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

export interface ButtonInfo {
  label: string;
  url?: string;
  customId?: string;
  disabled: boolean;
}

function buttonInfo(component: Record<string, unknown>): ButtonInfo {
  const button: ButtonInfo = {
    label: text(component.label) ?? (isRecord(component.emoji) ? String(component.emoji.name) : '?'),
    disabled: component.disabled === true,
  };
  const url = text(component.url);
  const customId = text(component.custom_id);
  if (url) button.url = url;
  if (customId) button.customId = customId;
  return button;
}

/**
 * The buttons of a message in reading order: row after row, and in a Components V2 message also
 * those inside containers and a section's button (components of other types are skipped).
 */
export function buttonsOf(message: RenderableMessage): ButtonInfo[] {
  const out: ButtonInfo[] = [];
  const visit = (components: unknown): void => {
    for (const component of records(components)) {
      if (component.type === 2) out.push(buttonInfo(component));
      else if (component.type === 1 || component.type === 17) visit(component.components);
      else if (component.type === 9 && isRecord(component.accessory)) visit([component.accessory]);
    }
  };
  visit(message.components);
  return out;
}

function indentBlock(value: string, prefix: string): string[] {
  return value.split('\n').map((line) => `${prefix}${line}`);
}

export interface RenderContext {
  /** The time relative timestamps are read against. */
  nowMs: number;
  style: Style;
  /** Names of the users the stand-in knows, for reading `<@id>` mentions. */
  names?: ReadonlyMap<string, string>;
  /** Put before every non-empty line (default two spaces). */
  indent?: string;
}

const MENTION = /<@!?(\d{17,20})>/g;

/** Timestamps with their human reading, known user mentions with the name Discord would show. */
export function annotate(value: string, ctx: RenderContext): string {
  const { names, style } = ctx;
  const withNames = names
    ? value.replace(MENTION, (all, id: string) => {
        const name = names.get(id);
        return name === undefined ? all : `${all} ${style.dim(`[@${name}]`)}`;
      })
    : value;
  return humanizeTimestamps(withNames, ctx.nowMs, style);
}

function renderEmbed(embed: Record<string, unknown>, ctx: RenderContext): string[] {
  const s = ctx.style;
  const human = (value: string): string => annotate(value, ctx);
  const body: string[] = [];
  const author = isRecord(embed.author) ? text(embed.author.name) : undefined;
  if (author) body.push(s.dim(human(author)));
  const title = text(embed.title);
  if (title) body.push(s.bold(human(title)));
  const description = text(embed.description);
  if (description) body.push(...human(description).split('\n'));
  const fields = records(embed.fields);
  if (fields.length > 0 && body.length > 0) body.push('');
  for (const field of fields) {
    const name = s.bold(human(text(field.name) ?? ''));
    const value = human(text(field.value) ?? '');
    if (value.includes('\n')) body.push(`${name}:`, ...indentBlock(value, '  '));
    else body.push(`${name}: ${value}`);
  }
  for (const key of ['thumbnail', 'image'] as const) {
    const media = embed[key];
    const url = isRecord(media) ? text(media.url) : undefined;
    if (url) body.push(s.dim(`(${key}: ${url})`));
  }
  const footer = isRecord(embed.footer) ? text(embed.footer.text) : undefined;
  if (footer) {
    if (body.length > 0) body.push('');
    body.push(s.dim(human(footer)));
  }
  const color = typeof embed.color === 'number' ? embed.color : undefined;
  const bar = s.bar(color);
  return body.map((line) => (line === '' ? bar : `${bar} ${line}`));
}

export function renderButton(button: ButtonInfo, s: Style): string {
  const shown = button.url ? `${button.label} → ${button.url}` : s.cyan(`[${button.label}]`);
  return button.disabled ? `${shown} ${s.dim('(disabled)')}` : shown;
}

/** Whether the message is laid out by Components V2: the flag, or a top-level component other than a row. */
export function isComponentsV2(message: RenderableMessage): boolean {
  if (typeof message.flags === 'number' && (message.flags & IS_COMPONENTS_V2) !== 0) return true;
  return records(message.components).some((c) => c.type !== 1);
}

/** The file an unfurled media item shows: `attachment://name`'s name, or the URL's last segment. */
function mediaName(media: unknown): string {
  const url = isRecord(media) ? text(media.url) : undefined;
  if (!url) return '?';
  const attached = /^attachment:\/\/(.+)$/.exec(url);
  if (attached) return attached[1]!;
  const path = url.split(/[?#]/)[0]!;
  return path.slice(path.lastIndexOf('/') + 1) || url;
}

function buttonLines(buttons: ButtonInfo[], s: Style): string[] {
  return buttons.length === 0 ? [] : [s.dim('buttons:'), ...buttons.map((b) => `  ${renderButton(b, s)}`)];
}

/** One Components V2 component as lines (a container's children inside its bar). */
function renderComponent(component: Record<string, unknown>, ctx: RenderContext): string[] {
  const s = ctx.style;
  switch (component.type) {
    case 10:
      return annotate(text(component.content) ?? '', ctx).split('\n');
    case 9: {
      const lines = records(component.components).flatMap((c) => renderComponent(c, ctx));
      const accessory = isRecord(component.accessory) ? component.accessory : undefined;
      if (accessory?.type === 11) {
        const alt = text(accessory.description) ?? mediaName(accessory.media);
        lines.push(s.dim(`[thumbnail: ${alt}]`));
      } else if (accessory?.type === 2) {
        lines.push(renderButton(buttonInfo(accessory), s));
      }
      return lines;
    }
    case 11:
      return [s.dim(`[thumbnail: ${text(component.description) ?? mediaName(component.media)}]`)];
    case 12:
      return records(component.items).map((item) => {
        const alt = text(item.description);
        return s.dim(`[image: ${mediaName(item.media)}${alt ? ` — ${alt}` : ''}]`);
      });
    case 13:
      return [s.dim(`[file: ${mediaName(component.file)}]`)];
    case 14:
      return [component.divider === false ? '' : s.dim('─'.repeat(24))];
    case 1:
      return buttonLines(buttonsOf({ components: [component] }), s);
    case 17: {
      const color = typeof component.accent_color === 'number' ? component.accent_color : undefined;
      const bar = s.bar(color);
      const inner = records(component.components).flatMap((c) => renderComponent(c, ctx));
      return inner.map((line) => (line === '' ? bar : `${bar} ${line}`));
    }
    default:
      return [s.dim(`(a component of type ${String(component.type)})`)];
  }
}

/**
 * The message body: content, embeds, then the buttons (label → url, or [label] for actions). A
 * Components V2 message is its components in order: a container as a block with its accent colour
 * as the bar (as an embed's), a section's thumbnail or button after its text, separators as a
 * line, media as [image: name — alt text], rows as their buttons.
 */
export function renderMessage(renderable: RenderableMessage, ctx: RenderContext): string[] {
  const message = renderable.message ?? renderable;
  const s = ctx.style;
  const indent = ctx.indent ?? '  ';
  const lines: string[] = [];
  if (isComponentsV2(message)) {
    for (const component of records(message.components)) {
      // A container stands apart from what is around it, as an embed does.
      const block = component.type === 17;
      if (block && lines.length > 0 && lines.at(-1) !== '') lines.push('');
      lines.push(...renderComponent(component, ctx));
      if (block) lines.push('');
    }
    while (lines.at(-1) === '') lines.pop();
  } else {
    const content = text(message.content);
    if (content) lines.push(...annotate(content, ctx).split('\n'));
    for (const embed of records(message.embeds)) {
      if (lines.length > 0) lines.push('');
      lines.push(...renderEmbed(embed, ctx));
    }
    lines.push(...buttonLines(buttonsOf(message), s));
  }
  if (lines.length === 0) lines.push(s.dim('(an empty message)'));
  return lines.map((line) => (line === '' ? '' : `${indent}${line}`));
}
