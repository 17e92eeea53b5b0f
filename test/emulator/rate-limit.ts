// Fixed-window limits in the manner of @fastify/rate-limit's local store: a window opens at the
// first request after the previous one expired; every request in it counts, past `max` -> 429.

export interface RateLimitRule {
  max: number;
  windowMs: number;
}

/** v3: a fixed window per key; past `max` the key is refused for `blockMs` from the refused request. */
export interface V3RateLimitRule extends RateLimitRule {
  blockMs: number;
}

/** `false` disables a bucket (all of them); an absent key takes the default. */
export type RateLimitSettings =
  | false
  | {
      global?: RateLimitRule | false | undefined;
      routes?: RateLimitRule | false | undefined;
      /** API v3 (all /v3 routes, search included); default 25 per 10 s, then blocked 10 s. */
      v3?: V3RateLimitRule | false | undefined;
    }
  | undefined;

/** Published v1/v2 limits: every method 5 per 5 s; POST /server and POST /stats 1 per 2 s. */
export const DEFAULT_GLOBAL_LIMIT: RateLimitRule = { max: 5, windowMs: 5_000 };
export const DEFAULT_ROUTE_LIMIT: RateLimitRule = { max: 1, windowMs: 2_000 };
/** docs-v3: "25 requests per 10 seconds"; RU docs: "блокировка составляет 10 секунд". */
export const DEFAULT_V3_LIMIT: V3RateLimitRule = { max: 25, windowMs: 10_000, blockMs: 10_000 };

export interface RateLimitVerdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the deciding window ends. */
  resetMs: number;
}

interface Bucket {
  count: number;
  resetAt: number;
}

const SWEEP_THRESHOLD = 1_000;

export class RateLimiter {
  #global: RateLimitRule | null = null;
  #routes: RateLimitRule | null = null;
  #v3: V3RateLimitRule | null = null;
  #buckets = new Map<string, Bucket>();
  readonly #now: () => number;

  constructor(settings: RateLimitSettings, now: () => number) {
    this.#now = now;
    this.configure(settings);
  }

  /** Replaces the limits and forgets all counters. */
  configure(settings: RateLimitSettings): void {
    this.reset();
    if (settings === false) {
      this.#global = null;
      this.#routes = null;
      this.#v3 = null;
      return;
    }
    const pick = (r: RateLimitRule | false | undefined, fallback: RateLimitRule) =>
      r === false ? null : { ...(r ?? fallback) };
    this.#global = pick(settings?.global, DEFAULT_GLOBAL_LIMIT);
    this.#routes = pick(settings?.routes, DEFAULT_ROUTE_LIMIT);
    const v3 = settings?.v3;
    this.#v3 = v3 === false ? null : { ...(v3 ?? DEFAULT_V3_LIMIT) };
  }

  reset(): void {
    this.#buckets.clear();
  }

  /**
   * Counts one request of `key` (and of `key` on `routeId` when that route has its own limit).
   * Returns null when no limit applies. A request refused by the global bucket does not count
   * against the route bucket.
   */
  hit(key: string, routeId: string | null): RateLimitVerdict | null {
    const now = this.#now();
    this.#sweep(now);
    let verdict: RateLimitVerdict | null = null;
    if (this.#global !== null) {
      verdict = this.#consume(`g\u0000${key}`, this.#global, now);
      if (!verdict.allowed) return verdict;
    }
    if (routeId !== null && this.#routes !== null) {
      const route = this.#consume(`r\u0000${routeId}\u0000${key}`, this.#routes, now);
      // Report the tighter of the two buckets in the headers of an allowed request.
      if (!route.allowed || verdict === null || route.remaining <= verdict.remaining) verdict = route;
    }
    return verdict;
  }

  /**
   * Counts one v3 request of `key` (an API key, or the address). The request that goes past the
   * limit starts a block of `blockMs`; every request during it is refused (and not counted).
   */
  hitV3(key: string): RateLimitVerdict | null {
    if (this.#v3 === null) return null;
    const now = this.#now();
    this.#sweep(now);
    const rule = this.#v3;
    const bucketKey = `v3\u0000${key}`;
    const bucket = this.#buckets.get(bucketKey);
    if (bucket !== undefined && now < bucket.resetAt && bucket.count > rule.max) {
      return { allowed: false, limit: rule.max, remaining: 0, resetMs: bucket.resetAt - now };
    }
    const verdict = this.#consume(bucketKey, rule, now);
    if (verdict.allowed) return verdict;
    const blocked = this.#buckets.get(bucketKey);
    if (blocked !== undefined) blocked.resetAt = now + rule.blockMs;
    return { ...verdict, resetMs: rule.blockMs };
  }

  #consume(bucketKey: string, rule: RateLimitRule, now: number): RateLimitVerdict {
    let bucket = this.#buckets.get(bucketKey);
    if (bucket === undefined || now >= bucket.resetAt) {
      bucket = { count: 0, resetAt: now + rule.windowMs };
      this.#buckets.set(bucketKey, bucket);
    }
    bucket.count += 1;
    return {
      allowed: bucket.count <= rule.max,
      limit: rule.max,
      remaining: Math.max(0, rule.max - bucket.count),
      resetMs: Math.max(0, bucket.resetAt - now),
    };
  }

  #sweep(now: number): void {
    if (this.#buckets.size < SWEEP_THRESHOLD) return;
    for (const [k, b] of this.#buckets) if (now >= b.resetAt) this.#buckets.delete(k);
  }
}

export function rateLimitHeaders(v: RateLimitVerdict): Record<string, string> {
  const headers: Record<string, string> = {
    'x-ratelimit-limit': String(v.limit),
    'x-ratelimit-remaining': String(v.remaining),
    'x-ratelimit-reset': String(Math.ceil(v.resetMs / 1000)),
  };
  if (!v.allowed) headers['retry-after'] = String(Math.ceil(v.resetMs / 1000));
  return headers;
}

export function rateLimitBody(retryMs: number | null): {
  statusCode: 429;
  error: string;
  message: string;
} {
  if (retryMs === null) {
    return { statusCode: 429, error: 'Too Many Requests', message: 'Rate limit exceeded' };
  }
  const seconds = Math.max(1, Math.ceil(retryMs / 1000));
  return {
    statusCode: 429,
    error: 'Too Many Requests',
    message: `Rate limit exceeded, retry in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}`,
  };
}
