// Discord's global rate limit, opt-in (StandInOptions.globalRateLimit): at most `max` requests with
// the bot's token per window, as Discord counts them per bot token, whichever host sends them.
// Interaction endpoints are not counted, as on Discord: the callbacks
// (`/interactions/{id}/{token}/callback`) and the interaction webhooks (`/webhooks/{app}/{token}…`).
// Past the limit, Discord's answer: 429, `global: true`, Retry-After and the global scope.

import type { RouteResult } from './interactions.js';

export interface GlobalRateLimit {
  /** Requests per window (Discord's: 50). */
  max: number;
  /** The window, from the first request counted in it (Discord's: 1000 ms). */
  windowMs: number;
}

/** Discord's own: 50 requests a second per bot token. */
export const DISCORD_GLOBAL_LIMIT: GlobalRateLimit = { max: 50, windowMs: 1_000 };

/** Headers of a 429: Retry-After in seconds, and which limit it is. */
export function rateLimitedHeaders(retryAfter: number, global: boolean): Record<string, string> {
  return {
    'retry-after': String(retryAfter),
    'x-ratelimit-scope': global ? 'global' : 'user',
    ...(global ? { 'x-ratelimit-global': 'true' } : {}),
  };
}

/** A 429's body as Discord writes it. */
export function rateLimitedBody(
  retryAfter: number,
  global: boolean,
  message = 'You are being rate limited.',
): { message: string; retry_after: number; global: boolean } {
  return { message, retry_after: retryAfter, global };
}

const EXEMPT = /^\/(?:interactions\/\d+\/[^/]+\/callback$|webhooks\/\d+\/[^/]+)/;

/** One window at a time, started by the first request counted after the last one ended. */
export class GlobalLimiter {
  readonly #limit: GlobalRateLimit;
  readonly #authorization: string;
  #windowEnd = Number.NEGATIVE_INFINITY;
  #used = 0;
  /** 429s answered so far. */
  limited = 0;
  /** Requests counted so far (the 429s among them). */
  counted = 0;

  constructor(limit: GlobalRateLimit, token: string) {
    this.#limit = limit;
    this.#authorization = `Bot ${token}`;
  }

  /**
   * Counts a request (its Authorization header and its path below /api/v10); the 429 to answer
   * when it is over the limit, else undefined.
   */
  take(authorization: string | undefined, path: string, now = Date.now()): RouteResult | undefined {
    if (authorization !== this.#authorization || EXEMPT.test(path)) return undefined;
    this.counted += 1;
    if (now >= this.#windowEnd) {
      this.#windowEnd = now + this.#limit.windowMs;
      this.#used = 0;
    }
    this.#used += 1;
    if (this.#used <= this.#limit.max) return undefined;
    this.limited += 1;
    // Discord's retry_after is a float of seconds.
    const retryAfter = Math.max(0.001, (this.#windowEnd - now) / 1000);
    return {
      status: 429,
      body: rateLimitedBody(retryAfter, true),
      headers: rateLimitedHeaders(retryAfter, true),
    };
  }
}
