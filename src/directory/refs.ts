/**
 * References are checked before any request leaves, so that nothing a user types can reach
 * another route: an ID is a Discord snowflake (17 to 20 digits), a short code matches
 * SHORT_CODE_PATTERN (letters, digits, `_` and `-`, 1 to 32 characters). Whatever passes
 * is still percent-encoded when it is put into a path.
 */
import { InvalidArgumentError } from './errors.js';
import type { LinkDomainCode } from './types.js';

export const SNOWFLAKE_PATTERN = /^\d{17,20}$/;
export const SHORT_CODE_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

export function isSnowflake(value: string): boolean {
  return SNOWFLAKE_PATTERN.test(value);
}

export function isShortCode(value: string): boolean {
  return SHORT_CODE_PATTERN.test(value);
}

function describe(value: string): string {
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  return JSON.stringify(shown);
}

/** An ID only (comments, profiles, developer bots, validateBot). */
export function assertSnowflake(value: unknown, what: string, method?: string): string {
  if (typeof value !== 'string' || !isSnowflake(value)) {
    throw new InvalidArgumentError(
      `${what} must be a Discord ID (17 to 20 digits), got ${typeof value === 'string' ? describe(value) : typeof value}`,
      method === undefined ? {} : { method },
    );
  }
  return value;
}

/** An ID or a short code (bot and server look-ups). */
export function assertRef(value: unknown, what: string, method?: string): string {
  if (typeof value !== 'string' || !(isSnowflake(value) || isShortCode(value))) {
    throw new InvalidArgumentError(
      `${what} must be a Discord ID or a short code (letters, digits, _ and -, at most 32), got ${
        typeof value === 'string' ? describe(value) : typeof value
      }`,
      method === undefined ? {} : { method },
    );
  }
  return value;
}

export type RefKind = 'bot' | 'server';

/** Path letters of the directory's page URLs: /bot/x and /b/x for bots, /server/x and /s/x for servers. */
const PAGE_SEGMENTS: Record<RefKind, readonly string[]> = {
  bot: ['bot', 'b'],
  server: ['server', 's'],
};

/**
 * Reads what a person may paste for a bot or server: an ID, a short code, a mention
 * (`<@id>`, `<@!id>`) or a directory page URL on any host. Returns the ID or short code,
 * or null when nothing usable is there.
 */
export function parseReference(input: string, kind: RefKind): string | null {
  const value = input.trim();
  if (value.length === 0 || value.length > 512) return null;
  if (isSnowflake(value) || isShortCode(value)) return value;
  const mention = /^<@!?(\d{17,20})>$/.exec(value);
  if (mention?.[1] && kind === 'bot') return mention[1];
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  const segments = url.pathname.split('/').filter((s) => s.length > 0);
  if (segments.length !== 2) return null;
  const [section, ref] = segments as [string, string];
  if (!PAGE_SEGMENTS[kind].includes(section.toLowerCase())) return null;
  return isSnowflake(ref) || isShortCode(ref) ? ref : null;
}

/** Templates split once into literal text (even indexes) and parameter names (odd indexes). */
const compiledTemplates = new Map<string, readonly string[]>();

/** Builds a path from a template and already-validated parameters, encoding each segment. */
export function buildPath(template: string, params: Record<string, string>): string {
  let parts = compiledTemplates.get(template);
  if (parts === undefined) {
    parts = template.split(/\{(\w+)\}/);
    compiledTemplates.set(template, parts);
  }
  let path = parts[0] ?? '';
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i] as string;
    const value = params[name];
    if (value === undefined) throw new InvalidArgumentError(`missing path parameter ${name}`);
    path += encodeURIComponent(value) + (parts[i + 1] ?? '');
  }
  return path;
}

/** A short link's code (the links methods). */
export function assertLinkCode(code: unknown, method: string): string {
  if (typeof code !== 'string' || !SHORT_CODE_PATTERN.test(code)) {
    throw new InvalidArgumentError('a link code is 1 to 32 letters, digits, _ or -', { method });
  }
  return code;
}

/** A short link's target. */
export function assertHttpUrl(value: unknown, method: string): string {
  if (typeof value === 'string' && value.length <= 2048) {
    try {
      const url = new URL(value);
      if (url.protocol === 'http:' || url.protocol === 'https:') return value;
    } catch {
      // falls through to the error below
    }
  }
  throw new InvalidArgumentError('the link must be an http(s) address of at most 2048 characters', {
    method,
  });
}

/** A short link's domain, of those the method takes. */
export function assertDomain(
  value: unknown,
  allowed: readonly LinkDomainCode[],
  method: string,
): LinkDomainCode {
  if (typeof value !== 'number' || !allowed.includes(value as LinkDomainCode)) {
    throw new InvalidArgumentError(`domain must be one of ${allowed.join(', ')} here`, { method });
  }
  return value as LinkDomainCode;
}
