/**
 * A server's reminder text: a template with the placeholders `{role}`, `{command}`, `{server}`
 * and `{time}`, checked when an admin sets it (/settings) and filled when the reminder is sent.
 * Any `{word}` without spaces is a placeholder, so a typo (`{rol}`) is refused rather than posted
 * as is. What fills `{server}` comes from Discord or the directory: it is escaped, and nothing in
 * a template pings anyone the reminder does not name (the sender's `allowed_mentions`).
 */
import { checkTemplate, fillPlaceholders, type TemplateCheck } from '../../render/template.js';
import { safeLine } from '../../render/text.js';

/** A server's name is at most 100 characters on Discord. */
const MAX_SERVER_NAME = 100;

export const PLACEHOLDERS = ['role', 'command', 'server', 'time'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];

/** Counted in characters (code points), as Discord counts an option's length. */
export const MAX_TEMPLATE_LENGTH = 1_000;

/** Whether an admin's text can be the server's reminder (its placeholders, at most MAX_TEMPLATE_LENGTH). */
export function checkReminderTemplate(text: string): TemplateCheck {
  return checkTemplate(text, PLACEHOLDERS, MAX_TEMPLATE_LENGTH);
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
  return fillPlaceholders(template, placeholderValues(values));
}
