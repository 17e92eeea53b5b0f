/** Discord's message limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits). */
import type { APIEmbed } from 'discord.js';
import { truncate } from './text.js';

export const LIMITS = {
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footer: 2048,
  author: 256,
  total: 6000,
  buttonsPerRow: 5,
  rows: 5,
  buttonLabel: 80,
  customId: 100,
} as const;

/** The characters Discord counts toward an embed's 6000 (UTF-16 units: never fewer than it counts). */
function embedLength(embed: APIEmbed): number {
  let n = (embed.title ?? '').length + (embed.description ?? '').length;
  n += (embed.footer?.text ?? '').length + (embed.author?.name ?? '').length;
  for (const f of embed.fields ?? []) n += f.name.length + f.value.length;
  return n;
}

/**
 * Enforces every per-part limit and the 6000-character total (trimming the description first, then
 * dropping fields from the end). Empty texts are removed: Discord rejects an empty field, and an
 * empty title or description is no better than none.
 */
export function fitEmbed(embed: APIEmbed): APIEmbed {
  const out: APIEmbed = { ...embed };
  if (out.title !== undefined) out.title = truncate(out.title, LIMITS.title);
  if (out.description !== undefined) out.description = truncate(out.description, LIMITS.description);
  if (out.footer) out.footer = { ...out.footer, text: truncate(out.footer.text, LIMITS.footer) };
  if (out.author) out.author = { ...out.author, name: truncate(out.author.name, LIMITS.author) };
  out.fields = (out.fields ?? [])
    .filter((f) => f.name.trim() !== '' && f.value.trim() !== '')
    .slice(0, LIMITS.fields)
    .map((f) => ({
      ...f,
      name: truncate(f.name, LIMITS.fieldName),
      value: truncate(f.value, LIMITS.fieldValue),
    }));
  let excess = embedLength(out) - LIMITS.total;
  if (excess > 0 && out.description) {
    out.description = truncate(out.description, Math.max(0, out.description.length - excess));
    excess = embedLength(out) - LIMITS.total;
  }
  while (excess > 0 && out.fields.length > 0) {
    out.fields.pop();
    excess = embedLength(out) - LIMITS.total;
  }
  if (out.fields.length === 0) delete out.fields;
  if (out.title !== undefined && out.title.trim() === '') delete out.title;
  if (out.description !== undefined && out.description.trim() === '') delete out.description;
  if (out.footer && out.footer.text.trim() === '') delete out.footer;
  if (out.author && out.author.name.trim() === '') delete out.author;
  return out;
}

export { embedLength };
