/**
 * A server's reminder text: a template with the placeholders `{role}`, `{command}`, `{server}`
 * and `{time}`, checked when an admin sets it (/settings) and filled when the reminder is sent.
 * Any `{word}` without spaces is a placeholder, so a typo (`{rol}`) is refused rather than posted
 * as is. What fills `{server}` comes from Discord or the directory: it is escaped, and nothing in
 * a template pings anyone the reminder does not name (the sender's `allowed_mentions`).
 */
import { safeLine } from '../../render/text.js';

/** A server's name is at most 100 characters on Discord. */
const MAX_SERVER_NAME = 100;

export const PLACEHOLDERS = ['role', 'command', 'server', 'time'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

/** Counted in characters (code points), as Discord counts an option's length. */
export const MAX_TEMPLATE_LENGTH = 1_000;

const PLACEHOLDER = /\{([^{}\s]{1,64})\}/gu;

export type TemplateCheck =
  | { ok: true; template: string }
  | { ok: false; reason: 'empty' }
  | { ok: false; reason: 'tooLong'; length: number }
  | { ok: false; reason: 'unknownPlaceholder'; placeholder: string };

function isPlaceholder(name: string): name is Placeholder {
  return (PLACEHOLDERS as readonly string[]).includes(name);
}

/** Whether an admin's text can be a template; the text is kept as typed (trimmed). */
export function checkTemplate(text: string): TemplateCheck {
  const template = text.trim();
  if (template.length === 0) return { ok: false, reason: 'empty' };
  const length = [...template].length;
  if (length > MAX_TEMPLATE_LENGTH) return { ok: false, reason: 'tooLong', length };
  for (const match of template.matchAll(PLACEHOLDER)) {
    const name = match[1] ?? '';
    if (!isPlaceholder(name)) return { ok: false, reason: 'unknownPlaceholder', placeholder: `{${name}}` };
  }
  return { ok: true, template };
}

export interface TemplateValues {
  /** The role to mention, or none (the placeholder then becomes nothing). */
  roleId: string | null;
  /** The /up command's id, for a clickable `</up:id>`; without it, plain `/up`. */
  commandId: string | null;
  /** The command's name as the server sees it. */
  commandName: string;
  /** The server's name (escaped here). */
  server: string;
  /** The next-up time, epoch ms: shown in each reader's own time zone. */
  time: number;
}

/** The values each placeholder stands for, ready for Discord markdown. */
export function placeholderValues(values: TemplateValues): Record<Placeholder, string> {
  return {
    role: values.roleId ? `<@&${values.roleId}>` : '',
    command: values.commandId ? `</${values.commandName}:${values.commandId}>` : `/${values.commandName}`,
    server: safeLine(values.server, MAX_SERVER_NAME),
    time: `<t:${Math.floor(values.time / 1000)}:t>`,
  };
}

/**
 * The template with its placeholders replaced, in one pass (a value that looks like a
 * placeholder is not replaced again). Unknown placeholders, which checkTemplate refuses, are left.
 */
export function fillTemplate(template: string, values: TemplateValues): string {
  const filled = placeholderValues(values);
  return template
    .replace(PLACEHOLDER, (whole, name: string) => (isPlaceholder(name) ? filled[name] : whole))
    .trim();
}
