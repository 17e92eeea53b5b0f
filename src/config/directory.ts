/**
 * The directory's variables read together: which version of its interface, the key and how it
 * travels, the limits (each version's published ones unless set), the look-up cache and the
 * search. A setting that means something in v1/v2 only is refused with v3 in one line that says
 * why, never silently ignored.
 */
import { LOOKUP_CACHE_DEFAULTS } from '../directory/lookup-cache.js';
import { TOKEN_KINDS, type TokenKind } from '../directory/types.js';
import { PUBLISHED_LIMITS } from '../directory/versions.js';
import type { OperatorMessage } from '../i18n/operator.js';

export { TOKEN_KINDS, type TokenKind };

/** The look-up cache's defaults: 5 minutes fresh, 5,000 records. */
export const DEFAULT_LOOKUP_CACHE = {
  ttlMs: LOOKUP_CACHE_DEFAULTS.ttlMs,
  maxEntries: LOOKUP_CACHE_DEFAULTS.maxEntries,
} as const;

type Rate = { max: number; windowMs: number };

interface DirectoryVariables {
  DIRECTORY_API_URL: string;
  DIRECTORY_API_VERSION: 'v1' | 'v2' | 'v3';
  DIRECTORY_TOKEN: string | undefined;
  DIRECTORY_TOKEN_KIND: TokenKind | undefined;
  DIRECTORY_TIMEOUT_MS: number;
  DIRECTORY_MAX_RETRIES: number;
  DIRECTORY_RATE_LIMIT: Rate | undefined;
  DIRECTORY_ROUTE_RATE_LIMIT: Rate | undefined;
  DIRECTORY_RATE_LIMIT_MARGIN_MS: number;
  DIRECTORY_SEARCH_URL: string | undefined;
  DIRECTORY_CACHE_TTL: number;
  DIRECTORY_CACHE_SIZE: number;
  DIRECTORY_NOTIFY_URL: string | undefined;
  DIRECTORY_UP_TOKEN: string | undefined;
  DIRECTORY_UP_TOKEN_KIND: TokenKind | undefined;
}

/** BotiCord's notifications gateway (docs-v3 `docs/api/notifications.mdx`). */
export const DEFAULT_NOTIFY_URL = 'wss://gateway.boticord.top/websocket/';

export interface DirectoryConfig {
  baseUrl: string;
  version: 'v1' | 'v2' | 'v3';
  token: string | undefined;
  /** v2's token kind (Bot unless set); v1 and v3 send the key bare. */
  tokenKind: TokenKind;
  timeoutMs: number;
  maxRetries: number;
  rateLimits: { global: Rate; routes: Rate; marginMs: number };
  /** v3: the search service's address; undefined: the client's default. */
  searchUrl: string | undefined;
  /** The look-ups' cache (directory/lookup-cache.ts); maxEntries 0 turns it off. */
  cache: { ttlMs: number; maxEntries: number };
  /**
   * v3: the notifications' WebSocket (features/notifications), opened when a key is set;
   * undefined: off (DIRECTORY_NOTIFY_URL=off, or not v3).
   */
  notifyUrl: string | undefined;
  /** v3: a v2 key that can still raise servers (/up raises through it), and its kind (PrivateBot unless set). */
  upToken: string | undefined;
  upTokenKind: TokenKind;
}

/** v1/v2 settings that v3 has no place for, each with why (a key under `config.` in the operator catalogs). */
const V2_ONLY: ReadonlyArray<[keyof DirectoryVariables, string]> = [
  ['DIRECTORY_TOKEN_KIND', 'v2OnlyTokenKind'],
  ['DIRECTORY_ROUTE_RATE_LIMIT', 'v2OnlyRouteRateLimit'],
];

/** v3 settings that v1 and v2 have no place for, each with why. */
const V3_ONLY: ReadonlyArray<[keyof DirectoryVariables, string]> = [
  ['DIRECTORY_SEARCH_URL', 'v3OnlySearch'],
  ['DIRECTORY_NOTIFY_URL', 'v3OnlyNotify'],
  ['DIRECTORY_UP_TOKEN', 'v3OnlyUpToken'],
  ['DIRECTORY_UP_TOKEN_KIND', 'v3OnlyUpToken'],
];

/**
 * The problems of the directory's variables taken together (each on its own is read already):
 * the variable and what to say of it.
 */
export function directoryProblems(e: DirectoryVariables): Array<[string, OperatorMessage]> {
  const problems: Array<[string, OperatorMessage]> = [];
  if (e.DIRECTORY_API_VERSION === 'v3') {
    for (const [name, key] of V2_ONLY) {
      if (e[name] !== undefined) problems.push([name, { key }]);
    }
  } else {
    for (const [name, key] of V3_ONLY) {
      if (e[name] !== undefined) problems.push([name, { key, params: { version: e.DIRECTORY_API_VERSION } }]);
    }
  }
  if (e.DIRECTORY_UP_TOKEN_KIND !== undefined && e.DIRECTORY_UP_TOKEN === undefined) {
    problems.push(['DIRECTORY_UP_TOKEN_KIND', { key: 'upTokenKindAlone' }]);
  }
  if (e.DIRECTORY_CACHE_SIZE > 0 && e.DIRECTORY_CACHE_TTL < 1_000) {
    problems.push([
      'DIRECTORY_CACHE_TTL',
      { key: 'cacheTtlShort', params: { valueMs: e.DIRECTORY_CACHE_TTL } },
    ]);
  }
  return problems;
}

export function directoryConfig(e: DirectoryVariables): DirectoryConfig {
  const published = PUBLISHED_LIMITS[e.DIRECTORY_API_VERSION];
  return {
    baseUrl: e.DIRECTORY_API_URL,
    version: e.DIRECTORY_API_VERSION,
    token: e.DIRECTORY_TOKEN,
    tokenKind: e.DIRECTORY_TOKEN_KIND ?? 'Bot',
    timeoutMs: e.DIRECTORY_TIMEOUT_MS,
    maxRetries: e.DIRECTORY_MAX_RETRIES,
    rateLimits: {
      global: e.DIRECTORY_RATE_LIMIT ?? { ...published.global },
      routes: e.DIRECTORY_ROUTE_RATE_LIMIT ?? { ...published.routes },
      marginMs: e.DIRECTORY_RATE_LIMIT_MARGIN_MS,
    },
    searchUrl: e.DIRECTORY_SEARCH_URL,
    cache: { ttlMs: e.DIRECTORY_CACHE_TTL, maxEntries: e.DIRECTORY_CACHE_SIZE },
    notifyUrl:
      e.DIRECTORY_API_VERSION !== 'v3' || e.DIRECTORY_NOTIFY_URL === 'off'
        ? undefined
        : (e.DIRECTORY_NOTIFY_URL ?? DEFAULT_NOTIFY_URL),
    upToken: e.DIRECTORY_UP_TOKEN,
    upTokenKind: e.DIRECTORY_UP_TOKEN_KIND ?? 'PrivateBot',
  };
}
