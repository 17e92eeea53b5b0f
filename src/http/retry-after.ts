/**
 * How long a server asks us to wait, from its response headers. Shared by the directory client and
 * the deferrals sent to Discord (both read the same standard headers).
 */

import { isUsableTime } from '../time/range.js';

/** A header's value; the first one when it came several times. */
export function header(
  headers: Record<string, string | string[] | undefined> | undefined,
  name: string,
): string | undefined {
  const value = headers?.[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Retry-After (seconds or HTTP date), else x-ratelimit-reset-after / x-ratelimit-reset (seconds).
 * A wait that would end past any usable time (time/range.ts) is unknown, as if none was sent.
 */
export function retryAfterFromHeaders(
  headers: Record<string, string | string[] | undefined> | undefined,
  now: number,
): number | undefined {
  const wait = rawRetryAfter(headers, now);
  return wait !== undefined && isUsableTime(now + wait) ? wait : undefined;
}

function rawRetryAfter(
  headers: Record<string, string | string[] | undefined> | undefined,
  now: number,
): number | undefined {
  const retryAfter = header(headers, 'retry-after');
  if (retryAfter !== undefined) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const date = Date.parse(retryAfter);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  for (const name of ['x-ratelimit-reset-after', 'x-ratelimit-reset']) {
    const value = Number(header(headers, name));
    if (!Number.isFinite(value) || value < 0) continue;
    // Some servers send an epoch time in seconds here; anything that large is one.
    if (value > 1_000_000_000) return Math.max(0, value * 1000 - now);
    return Math.ceil(value * 1000);
  }
  return undefined;
}
