/**
 * Every method of the interface in one table: HTTP method, path template, which token kinds
 * v2 accepts (spec section 5), which versions have it, and the extra rate-limit bucket the
 * directory applies to it; v3's route where v3 has one (docs-v3 `docs/api/*.mdx`, and the SDKs'
 * route lists: docs/directory-v3-sources.md). The client, the CLI and the tests all read this table.
 */
import { InvalidArgumentError, TokenKindNotAcceptedError } from './errors.js';
import type { ApiVersion, TokenKind } from './types.js';

export type EndpointName =
  | 'getBot'
  | 'getBotComments'
  | 'postBotStats'
  | 'getServer'
  | 'getServerComments'
  | 'postServer'
  | 'getProfile'
  | 'getProfileComments'
  | 'getDeveloperBots'
  | 'getLinks'
  | 'createLink'
  | 'deleteLink'
  | 'validateBot'
  | 'checkToken'
  | 'searchKey'
  | 'search';

/** Rate-limit buckets beyond the global one: the directory limits these routes to 1 request per 2 s. */
export type RouteBucket = 'server' | 'stats';

export interface Endpoint {
  name: EndpointName;
  method: 'GET' | 'POST';
  path: string;
  /** Token kinds accepted in v2; 'none' for public methods (no Authorization header is sent). */
  kinds: 'none' | readonly TokenKind[];
  versions: readonly ApiVersion[];
  bucket?: RouteBucket;
  /**
   * v3: its method and path, and whether it needs the key (the look-ups do not, but the key is
   * sent when there is one: the limit is the key's). `via: 'search'`: v3 has no route for it, and
   * the client asks the directory's search service instead (the comments index).
   */
  v3?: { method: 'GET' | 'POST'; path: string; key: 'required' | 'optional'; via?: 'search' };
}

const ANY: readonly TokenKind[] = ['Bot', 'PrivateBot', 'Profile'];
const BOTH: readonly ApiVersion[] = ['v1', 'v2'];
const ALL: readonly ApiVersion[] = ['v1', 'v2', 'v3'];
/** v3 has no comments route: boticordjava reads them from the search service's comments index. */
const COMMENTS_V3 = {
  method: 'POST',
  path: '/search/indexes/comments/search',
  key: 'required',
  via: 'search',
} as const;

export const ENDPOINTS: Readonly<Record<EndpointName, Endpoint>> = {
  getBot: {
    name: 'getBot',
    method: 'GET',
    path: '/bot/{ref}',
    kinds: 'none',
    versions: ALL,
    v3: { method: 'GET', path: '/bots/{ref}', key: 'optional' },
  },
  getBotComments: {
    name: 'getBotComments',
    method: 'GET',
    path: '/bot/{id}/comments',
    kinds: ANY,
    versions: ALL,
    v3: COMMENTS_V3,
  },
  postBotStats: {
    name: 'postBotStats',
    method: 'POST',
    path: '/stats',
    kinds: ['Bot'],
    versions: ALL,
    bucket: 'stats',
    v3: { method: 'POST', path: '/bots/{id}/stats', key: 'required' },
  },
  getServer: {
    name: 'getServer',
    method: 'GET',
    path: '/server/{ref}',
    kinds: 'none',
    versions: ALL,
    v3: { method: 'GET', path: '/servers/{ref}', key: 'optional' },
  },
  getServerComments: {
    name: 'getServerComments',
    method: 'GET',
    path: '/server/{id}/comments',
    kinds: ANY,
    versions: ALL,
    v3: COMMENTS_V3,
  },
  postServer: {
    name: 'postServer',
    method: 'POST',
    path: '/server',
    kinds: ['Bot', 'PrivateBot'],
    versions: BOTH,
    bucket: 'server',
  },
  getProfile: {
    name: 'getProfile',
    method: 'GET',
    path: '/profile/{id}',
    kinds: 'none',
    versions: ALL,
    v3: { method: 'GET', path: '/users/{id}', key: 'optional' },
  },
  getProfileComments: {
    name: 'getProfileComments',
    method: 'GET',
    path: '/profile/{id}/comments',
    kinds: ANY,
    versions: ALL,
    v3: COMMENTS_V3,
  },
  getDeveloperBots: {
    name: 'getDeveloperBots',
    method: 'GET',
    path: '/bots/{id}',
    kinds: ANY,
    versions: ALL,
    v3: { method: 'GET', path: '/users/{id}', key: 'optional' },
  },
  getLinks: { name: 'getLinks', method: 'POST', path: '/links/get', kinds: ['Profile'], versions: BOTH },
  createLink: {
    name: 'createLink',
    method: 'POST',
    path: '/links/create',
    kinds: ['Profile'],
    versions: BOTH,
  },
  deleteLink: {
    name: 'deleteLink',
    method: 'POST',
    path: '/links/delete',
    kinds: ['Profile'],
    versions: BOTH,
  },
  // The spec lists these two as token-protected v2 methods without naming kinds: all are sent.
  validateBot: {
    name: 'validateBot',
    method: 'GET',
    path: '/server/{serverId}/validateBot/{botId}',
    kinds: ANY,
    versions: ['v2'],
  },
  checkToken: { name: 'checkToken', method: 'GET', path: '/token', kinds: ANY, versions: ['v2'] },
  // v3 only. The key for the directory's search service (Meilisearch): docs-v3 search.mdx.
  searchKey: {
    name: 'searchKey',
    method: 'GET',
    path: '/search-key',
    kinds: ANY,
    versions: ['v3'],
    v3: { method: 'GET', path: '/search-key', key: 'required' },
  },
  // The search service itself, at DIRECTORY_SEARCH_URL (by default the API's /v3/search).
  search: {
    name: 'search',
    method: 'POST',
    path: '/search/indexes/{index}/search',
    kinds: ANY,
    versions: ['v3'],
    v3: { method: 'POST', path: '/search/indexes/{index}/search', key: 'required', via: 'search' },
  },
};

/** The method and path template a version uses for an endpoint. */
export function requestOf(endpoint: Endpoint, version: ApiVersion): { method: 'GET' | 'POST'; path: string } {
  return version === 'v3' && endpoint.v3 ? endpoint.v3 : endpoint;
}

/** The route as logs and metrics name it: `GET /bot/{ref}` (templates only, never values). */
export function routeOf(endpoint: Endpoint, version: ApiVersion = 'v2'): string {
  const { method, path } = requestOf(endpoint, version);
  return `${method} ${path}`;
}

/**
 * Builds the Authorization header for an endpoint, or throws before anything is sent:
 * v1 sends the bare token, v2 `<Kind> <token>` and only for kinds the method accepts, v3 the bare
 * key whenever there is one.
 */
export function authorizationFor(
  endpoint: Endpoint,
  version: ApiVersion,
  token: string | undefined,
  kind: TokenKind,
): string | undefined {
  if (!endpoint.versions.includes(version)) {
    throw new InvalidArgumentError(`${endpoint.name} exists only in API ${endpoint.versions.join(', ')}`, {
      method: endpoint.name,
    });
  }
  if (version === 'v3') {
    // The key goes bare (docs-v3 index.mdx), also on a look-up: the limit is counted per key.
    if (token !== undefined && token.length > 0) return token;
    if (endpoint.v3?.key !== 'required') return undefined;
    throw new InvalidArgumentError(`${endpoint.name} needs a directory API key (DIRECTORY_TOKEN)`, {
      method: endpoint.name,
    });
  }
  if (endpoint.kinds === 'none') return undefined;
  if (version === 'v2' && !endpoint.kinds.includes(kind)) {
    throw new TokenKindNotAcceptedError(endpoint.name, kind, endpoint.kinds);
  }
  if (token === undefined || token.length === 0) {
    throw new InvalidArgumentError(`${endpoint.name} needs a directory token (DIRECTORY_TOKEN)`, {
      method: endpoint.name,
    });
  }
  return version === 'v1' ? token : `${kind} ${token}`;
}
