/**
 * Every method of the interface in one table: HTTP method, path template, which token kinds
 * v2 accepts (spec section 5), which versions have it, and the extra rate-limit bucket the
 * directory applies to it. The client, the CLI and the tests all read this table.
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
  | 'checkToken';

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
}

const ANY: readonly TokenKind[] = ['Bot', 'PrivateBot', 'Profile'];
const BOTH: readonly ApiVersion[] = ['v1', 'v2'];

export const ENDPOINTS: Readonly<Record<EndpointName, Endpoint>> = {
  getBot: { name: 'getBot', method: 'GET', path: '/bot/{ref}', kinds: 'none', versions: BOTH },
  getBotComments: {
    name: 'getBotComments',
    method: 'GET',
    path: '/bot/{id}/comments',
    kinds: ANY,
    versions: BOTH,
  },
  postBotStats: {
    name: 'postBotStats',
    method: 'POST',
    path: '/stats',
    kinds: ['Bot'],
    versions: BOTH,
    bucket: 'stats',
  },
  getServer: { name: 'getServer', method: 'GET', path: '/server/{ref}', kinds: 'none', versions: BOTH },
  getServerComments: {
    name: 'getServerComments',
    method: 'GET',
    path: '/server/{id}/comments',
    kinds: ANY,
    versions: BOTH,
  },
  postServer: {
    name: 'postServer',
    method: 'POST',
    path: '/server',
    kinds: ['Bot', 'PrivateBot'],
    versions: BOTH,
    bucket: 'server',
  },
  getProfile: { name: 'getProfile', method: 'GET', path: '/profile/{id}', kinds: 'none', versions: BOTH },
  getProfileComments: {
    name: 'getProfileComments',
    method: 'GET',
    path: '/profile/{id}/comments',
    kinds: ANY,
    versions: BOTH,
  },
  getDeveloperBots: {
    name: 'getDeveloperBots',
    method: 'GET',
    path: '/bots/{id}',
    kinds: ANY,
    versions: BOTH,
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
};

/** The route as logs and metrics name it: `GET /bot/{ref}` (templates only, never values). */
export function routeOf(endpoint: Endpoint): string {
  return `${endpoint.method} ${endpoint.path}`;
}

/**
 * Builds the Authorization header for an endpoint, or throws before anything is sent:
 * v1 sends the bare token, v2 `<Kind> <token>` and only for kinds the method accepts.
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
