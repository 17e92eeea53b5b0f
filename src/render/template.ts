/**
 * Templates an admin types (the reminder's text, the thank-you line): `{word}` placeholders, checked
 * when the text is set (any `{word}` without spaces is a placeholder, so a typo is refused rather
 * than posted as is) and filled in one pass when the message is sent. Each feature names its own
 * placeholders (features/reminders/template.ts, features/up/thanks.ts).
 */

const PLACEHOLDER = /\{([^{}\s]{1,64})\}/gu;

export type TemplateCheck =
  | { ok: true; template: string }
  | { ok: false; reason: 'empty' }
  | { ok: false; reason: 'tooLong'; length: number; max: number }
  | { ok: false; reason: 'unknownPlaceholder'; placeholder: string };

/**
 * Whether an admin's text can be a template with these placeholders and at most `max` characters
 * (code points, as Discord counts an option's length). The text is kept as typed (trimmed).
 */
export function checkTemplate(text: string, placeholders: readonly string[], max: number): TemplateCheck {
  const template = text.trim();
  if (template.length === 0) return { ok: false, reason: 'empty' };
  const length = [...template].length;
  if (length > max) return { ok: false, reason: 'tooLong', length, max };
  for (const match of template.matchAll(PLACEHOLDER)) {
    const name = match[1] ?? '';
    if (!placeholders.includes(name))
      return { ok: false, reason: 'unknownPlaceholder', placeholder: `{${name}}` };
  }
  return { ok: true, template };
}

/**
 * The template with each known placeholder replaced by its value, in one pass (a value that looks
 * like a placeholder is not replaced again); others, which checkTemplate refuses, are left.
 */
export function fillPlaceholders(template: string, values: Readonly<Record<string, string>>): string {
  return template
    .replace(PLACEHOLDER, (whole, name: string) =>
      Object.hasOwn(values, name) ? (values[name] as string) : whole,
    )
    .trim();
}
