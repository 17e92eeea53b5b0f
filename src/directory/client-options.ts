/** The directory client's options, the options of one request, and what it reports of each. */
import type { EndpointName } from './endpoints.js';
import type { LookupCacheOptions } from './lookup-cache.js';
import type { BucketLimit, GrantInfo, Priority } from './rate-limiter.js';
import type { RateLimitLedger } from './shared-rate-limiter.js';
import type { ApiVersion, TokenKind } from './types.js';

export const DEFAULT_BASE_URL = 'https://api.boticord.top';
/** The directory's published limits of v1/v2 (each version's: versions.ts PUBLISHED_LIMITS). */
export const DEFAULT_RATE_LIMITS = {
  global: { max: 5, windowMs: 5_000 },
  routes: { max: 1, windowMs: 2_000 },
  marginMs: 25,
} as const;

export interface RequestEvent {
  method: EndpointName;
  route: string;
  /** HTTP status, or the error code when no answer came. */
  status: number | string;
  durationMs: number;
  attempts: number;
}

export interface DirectoryClientOptions {
  /** Origin (and optional path prefix) without the version, e.g. https://api.boticord.top */
  baseUrl?: string;
  /** Default v3, the directory's current interface; v1 and v2 are kept whole. */
  version?: ApiVersion;
  /**
   * v3: the search service's address, e.g. https://api.boticord.top/v3/search (the default:
   * the API's own /v3/search; see v3/search.ts for why).
   */
  searchUrl?: string;
  /**
   * The look-ups' cache (getBot, getServer, getProfile, getDeveloperBots): fresh for ttlMs, then
   * served stale while refreshed. Default: off (a CLI call looks up once); false: off.
   */
  cache?: false | LookupCacheOptions;
  token?: string | undefined;
  tokenKind?: TokenKind;
  /** The longest one attempt may take, in ms, from sending to the last byte of the answer. Default 10 s. */
  timeoutMs?: number;
  /** Retries after the first attempt, where retrying is safe. Default 2. */
  maxRetries?: number;
  /**
   * The deadline of a request whose caller names none, in ms from the call: waits for the rate
   * limit and Retry-After, attempts and backoffs included (the CLI's --max-wait). Default: none,
   * and such a request ends by timeoutMs × attempts plus the longest backoffs from its first attempt.
   */
  maxWaitMs?: number;
  /** Keep-alive connections to the directory. Default 8. */
  connections?: number;
  /** Client-side rate limits; false turns them off (only for tests of the server's own limits). */
  rateLimits?: false | { global?: BucketLimit; routes?: BucketLimit; marginMs?: number };
  /**
   * Keep the rate limits with every other process using the same token, in a ledger they share
   * (a database), instead of in this process only. See shared-rate-limiter.ts.
   */
  sharedRateLimits?: {
    ledger: RateLimitLedger;
    /** The ledger failed (it is retried until the request's deadline); for logs. */
    onLedgerError?: (err: unknown, what: 'turn' | 'settle' | 'hold' | 'leave') => void;
  };
  userAgent?: string;
  now?: () => number;
  random?: () => number;
  /** Called after every request, for logs and metrics. */
  onRequest?: (event: RequestEvent) => void;
  /** Called each time the rate limiter lets a request go, with how long it waited (metrics). */
  onRateLimitGrant?: (info: GrantInfo) => void;
}

export interface RequestOptions {
  /**
   * 'critical' (an /up, the statistics) goes before 'interactive' (a person waits for a look-up),
   * which goes before 'background'. Default: interactive.
   */
  priority?: Priority;
  /**
   * When the request must be over. A wait for the rate limit or for a Retry-After that would pass
   * it fails at once with RateLimited (and the wait); attempts are cut short to end by it
   * (Unavailable, reason timeout).
   */
  deadline?: Date | number;
  signal?: AbortSignal;
  /**
   * Called right before each attempt goes out, once the rate limiter let it go, with the time:
   * when the directory sees the request, near enough (a request may wait its turn first).
   */
  onSend?: (at: number) => void;
}
