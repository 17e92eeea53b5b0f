// API v3 (https://api.boticord.top/v3, docs/directory-v3-sources.md): routes, the {ok,result,errors}
// envelope with the English error numbering, bare-key auth, stats, the search key, and the search
// service under /v3/search (search.ts). The HTTP pipeline (faults, rate limit) lives in server.ts.

import { isPlainObject, type Reply } from '../body.js';
import type { EmulatorState, V3IndexName } from '../state.js';
import { botResource, isSnowflake, serverResource, userResource } from './resources.js';
import { invalidApiKey, meiliError, missingAuthorization, runSearch, SEARCH_INDEXES } from './search.js';

/** docs-v3 `docs/api/index.mdx`, English numbering (the live docs). */
export const V3_ERRORS = {
  InternalServerError: 0,
  RateLimited: 1,
  NotFound: 2,
  Forbidden: 3,
  Unauthorized: 4,
  BadRequest: 5,
  UnknownError: 8,
  UnknownUser: 10,
  TokenInvalid: 14,
  UnknownBot: 19,
  UnknownServer: 20,
  ResourceNotOwned: 55,
} as const;

export type V3ErrorName = keyof typeof V3_ERRORS;

export function v3Error(status: number, name: V3ErrorName): Reply {
  return { status, body: { ok: false, result: null, errors: [{ code: V3_ERRORS[name], message: name }] } };
}

/** The error a bare HTTP status stands for (fault rules that name only a status). */
export function v3ErrorForStatus(status: number): Reply {
  const name: V3ErrorName =
    status === 429
      ? 'RateLimited'
      : status === 404
        ? 'NotFound'
        : status === 403
          ? 'Forbidden'
          : status === 401
            ? 'Unauthorized'
            : status === 400
              ? 'BadRequest'
              : status >= 500
                ? 'InternalServerError'
                : 'UnknownError';
  return v3Error(status, name);
}

const ok = (result: unknown): Reply => ({ status: 200, body: { ok: true, result } });

export interface V3Context {
  params: Readonly<Record<string, string>>;
  authorization: string | undefined;
  contentType: string | undefined;
  rawBody: string;
  now: number;
  state: EmulatorState;
}

export interface V3Route {
  method: 'GET' | 'POST';
  segments: readonly string[];
  /** A route of the search service: Meilisearch answers and errors. */
  search: boolean;
  handle(ctx: V3Context): Reply;
}

// --- auth -------------------------------------------------------------------------------------

type Account = { ok: true; key: string | null; owner: string | null } | { ok: false; reply: Reply };

/** The bare key in Authorization. Optional where `required` is false; a key sent must be known. */
function account(ctx: V3Context, required: boolean): Account {
  const header = ctx.authorization;
  if (header === undefined || header === '') {
    return required
      ? { ok: false, reply: v3Error(401, 'Unauthorized') }
      : { ok: true, key: null, owner: null };
  }
  const owner = ctx.state.v3.keys.get(header);
  return owner === undefined
    ? { ok: false, reply: v3Error(401, 'TokenInvalid') }
    : { ok: true, key: header, owner };
}

/** The current search key of an API key, issued on first request (GET /search-key). */
export function issueSearchKey(state: EmulatorState, apiKey: string): string {
  for (const [search, api] of state.v3.searchKeys) if (api === apiKey) return search;
  const owner = state.v3.keys.get(apiKey) ?? 'unknown';
  const key = `emu-meili-g${state.v3.searchKeyGeneration}-${owner}`;
  state.v3.searchKeys.set(key, apiKey);
  return key;
}

/** Invalidates every search key issued so far; the next GET /search-key gives a new one. */
export function rotateSearchKeys(state: EmulatorState): void {
  state.v3.searchKeys.clear();
  state.v3.searchKeyGeneration += 1;
}

/**
 * The key a request counts against in the rate limit: the API key (a search key stands for the API
 * key it was issued to), or null for the address.
 */
export function v3RateKey(
  state: EmulatorState,
  authorization: string | undefined,
  search: boolean,
): string | null {
  if (authorization === undefined || authorization === '') return null;
  if (search) {
    const m = /^Bearer (.+)$/.exec(authorization);
    const api = m?.[1] === undefined ? undefined : state.v3.searchKeys.get(m[1]);
    if (api !== undefined) return api;
  }
  return authorization;
}

// --- look-ups ---------------------------------------------------------------------------------

function lookup(
  ctx: V3Context,
  unknown: V3ErrorName,
  find: (id: string) => Record<string, unknown> | undefined,
): Reply {
  const acc = account(ctx, false);
  if (!acc.ok) return acc.reply;
  const id = ctx.params.id ?? '';
  if (!isSnowflake(id)) return v3Error(400, 'BadRequest');
  const found = find(id);
  return found === undefined ? v3Error(404, unknown) : ok(found);
}

function getBot(ctx: V3Context): Reply {
  return lookup(ctx, 'UnknownBot', (id) => {
    const bot = ctx.state.bots.get(id);
    return bot === undefined ? undefined : botResource(ctx.state, bot);
  });
}

function getServer(ctx: V3Context): Reply {
  return lookup(ctx, 'UnknownServer', (id) => {
    const server = ctx.state.servers.get(id);
    return server === undefined ? undefined : serverResource(ctx.state, server);
  });
}

function getUser(ctx: V3Context): Reply {
  return lookup(ctx, 'UnknownUser', (id) => userResource(ctx.state, id));
}

function getSearchKey(ctx: V3Context): Reply {
  const acc = account(ctx, true);
  if (!acc.ok) return acc.reply;
  return ok({ key: issueSearchKey(ctx.state, acc.key ?? '') });
}

// --- POST /bots/:id/stats -----------------------------------------------------------------------

function isJson(contentType: string | undefined): boolean {
  return (contentType?.split(';')[0]?.trim().toLowerCase() ?? '') === 'application/json';
}

const STATS_FIELDS = ['servers', 'shards', 'members', 'guilds'] as const;

function postStats(ctx: V3Context): Reply {
  // docs-v3: a POST without Content-Type: application/json gets a 500 UnknownError.
  if (!isJson(ctx.contentType)) return v3Error(500, 'UnknownError');
  const acc = account(ctx, true);
  if (!acc.ok) return acc.reply;
  const id = ctx.params.id ?? '';
  if (!isSnowflake(id)) return v3Error(400, 'BadRequest');
  const bot = ctx.state.bots.get(id);
  if (bot === undefined) return v3Error(404, 'UnknownBot');
  if ((bot.information.developers[0] ?? '') !== acc.owner) return v3Error(403, 'ResourceNotOwned');
  let body: unknown;
  try {
    body = ctx.rawBody === '' ? {} : JSON.parse(ctx.rawBody);
  } catch {
    return v3Error(400, 'BadRequest');
  }
  if (!isPlainObject(body)) return v3Error(400, 'BadRequest');
  const counts: Partial<Record<(typeof STATS_FIELDS)[number], number>> = {};
  for (const field of STATS_FIELDS) {
    const v = body[field];
    if (v === undefined || v === null) continue; // py sends null for a count it does not know
    // boticordpy: "None of the values must be equal to 0. Specify None instead of 0."
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) return v3Error(400, 'BadRequest');
    counts[field] = v;
  }
  // boticordjava sends the server count as `guilds`.
  const servers = counts.servers ?? counts.guilds;
  const stats = bot.information.stats;
  if (servers !== undefined) stats.servers = servers;
  if (counts.shards !== undefined) stats.shards = counts.shards;
  if (counts.members !== undefined) stats.users = counts.members;
  ctx.state.v3.stats.set(id, {
    ...(servers !== undefined ? { servers } : {}),
    ...(counts.shards !== undefined ? { shards: counts.shards } : {}),
    ...(counts.members !== undefined ? { members: counts.members } : {}),
    key: acc.key ?? '',
    body: ctx.rawBody,
    at: ctx.now,
  });
  return ok(botResource(ctx.state, bot));
}

// --- search -----------------------------------------------------------------------------------

function search(ctx: V3Context): Reply {
  const header = ctx.authorization;
  const m = header === undefined ? null : /^Bearer (.+)$/.exec(header);
  if (m?.[1] === undefined) return missingAuthorization();
  if (!ctx.state.v3.searchKeys.has(m[1])) return invalidApiKey();
  const index = ctx.params.index ?? '';
  if (!(SEARCH_INDEXES as readonly string[]).includes(index)) {
    return meiliError(404, 'index_not_found', 'invalid_request', `Index \`${index}\` not found.`);
  }
  const media = ctx.contentType?.split(';')[0]?.trim().toLowerCase() ?? '';
  if (media === '') {
    return meiliError(
      415,
      'missing_content_type',
      'invalid_request',
      'A Content-Type header is missing. Accepted values for the Content-Type header are: `application/json`',
    );
  }
  if (media !== 'application/json') {
    return meiliError(
      415,
      'invalid_content_type',
      'invalid_request',
      `The Content-Type \`${media}\` is invalid. Accepted values for the Content-Type header are: \`application/json\``,
    );
  }
  let body: unknown;
  try {
    body = ctx.rawBody === '' ? {} : JSON.parse(ctx.rawBody);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    return meiliError(
      400,
      'malformed_payload',
      'invalid_request',
      `The json payload provided is malformed. \`${detail}\`.`,
    );
  }
  if (!isPlainObject(body)) {
    return meiliError(400, 'bad_request', 'invalid_request', 'Invalid value type: expected an object.');
  }
  return runSearch(ctx.state, index as V3IndexName, body);
}

// --- table ------------------------------------------------------------------------------------

function route(
  method: V3Route['method'],
  path: string,
  handle: V3Route['handle'],
  isSearch = false,
): V3Route {
  return { method, segments: path.split('/').slice(1), search: isSearch, handle };
}

export const V3_ROUTES: readonly V3Route[] = [
  route('GET', '/bots/:id', getBot),
  route('POST', '/bots/:id/stats', postStats),
  route('GET', '/servers/:id', getServer),
  route('GET', '/users/:id', getUser),
  route('GET', '/search-key', getSearchKey),
  route('POST', '/search/indexes/:index/search', search, true),
];

export interface V3Match {
  route: V3Route;
  params: Record<string, string>;
}

/** Matches the decoded segments after /v3; null for anything else (404 NotFound). */
export function matchV3Route(method: string, segments: readonly string[]): V3Match | null {
  for (const r of V3_ROUTES) {
    if (r.method !== method || r.segments.length !== segments.length) continue;
    const params: Record<string, string> = {};
    let matched = true;
    r.segments.forEach((pattern, i) => {
      const actual = segments[i] ?? '';
      if (pattern.startsWith(':')) {
        if (actual === '') matched = false;
        else params[pattern.slice(1)] = actual;
      } else if (pattern !== actual) {
        matched = false;
      }
    });
    if (matched) return { route: r, params };
  }
  return null;
}

/** A path under the search service (its faults answer in Meilisearch's shape). */
export function isV3SearchPath(pathname: string): boolean {
  return /^\/v3\/search(\/|$)/.test(pathname);
}
