// Route table and handlers of the directory API (v1 and v2). Handlers are synchronous and pure
// apart from the state they are handed; the HTTP pipeline lives in server.ts.

import {
  isPlainObject,
  type ObjectSchema,
  parseBody,
  type Reply,
  validateObject,
  validatorError,
} from './body.js';
import { STATS_UPDATED_MESSAGE, upCooldownMessage, upSuccessMessage } from './messages.js';
import {
  type CommentData,
  type EmulatorState,
  LINK_DOMAINS,
  registerServer,
  type ServerData,
  type TokenInfo,
} from './state.js';

export type Kind = 'Bot' | 'PrivateBot' | 'Profile';
export type NextUpStyle = 'epoch' | 'duration';

export interface RouteContext {
  version: 1 | 2;
  params: Readonly<Record<string, string>>;
  authorization: string | undefined;
  contentType: string | undefined;
  rawBody: string;
  now: number;
  state: EmulatorState;
  cooldownMs: number;
  nextUpStyle: NextUpStyle;
  /** Set by a 'not-updated' fault: POST /server answers updated: false with this message. */
  forceNotUpdated: string | null;
}

export interface Route {
  method: 'GET' | 'POST';
  segments: readonly string[];
  v2Only: boolean;
  /** Has its own rate-limit bucket besides the global one (POST /server, POST /stats). */
  ownLimit: boolean;
  handle(ctx: RouteContext): Reply;
}

export function apiError(status: number, message: string): Reply {
  return { status, body: { error: { code: status, message } } };
}

const unauthorized = (): Reply => apiError(401, 'Unauthorized');
const badRequest = (): Reply => apiError(400, 'Bad request');
const ok = (body: unknown): Reply => ({ status: 200, body });

// --- authentication -------------------------------------------------------------------------

interface Principal {
  /** null in v1, where the token carries no kind word. */
  kind: Kind | null;
  token: TokenInfo;
}

interface AuthSpec {
  v1: TokenInfo['type'];
  v2: readonly Kind[];
}

const ANY_KIND: AuthSpec = { v1: 'bot', v2: ['Bot', 'PrivateBot', 'Profile'] };
const PROFILE_ONLY: AuthSpec = { v1: 'profile', v2: ['Profile'] };
const KIND_RE = /^(Bot|PrivateBot|Profile) (\S+)$/;

function asKind(word: string | undefined): Kind | null {
  return word === 'Bot' || word === 'PrivateBot' || word === 'Profile' ? word : null;
}

/** v1: the bare token. v2: `<Kind> <token>`, the kind word matching the token's type. */
function authenticate(ctx: RouteContext, spec: AuthSpec): Principal | null {
  const header = ctx.authorization;
  if (header === undefined || header === '') return null;
  if (ctx.version === 1) {
    const token = ctx.state.tokens.get(header);
    return token !== undefined && token.type === spec.v1 ? { kind: null, token } : null;
  }
  const match = KIND_RE.exec(header);
  const kind = asKind(match?.[1]);
  const token = match?.[2] === undefined ? undefined : ctx.state.tokens.get(match[2]);
  if (kind === null || token === undefined) return null;
  if (token.type !== (kind === 'Profile' ? 'profile' : 'bot')) return null;
  return spec.v2.includes(kind) ? { kind, token } : null;
}

// --- look-ups -------------------------------------------------------------------------------

function param(ctx: RouteContext, name: string): string {
  return ctx.params[name] ?? '';
}

function findByRef<T extends { id: string; shortCode: string | null }>(
  map: Map<string, T>,
  ref: string,
): T | undefined {
  const byId = map.get(ref);
  if (byId !== undefined) return byId;
  for (const item of map.values()) if (item.shortCode !== null && item.shortCode === ref) return item;
  return undefined;
}

function getBot(ctx: RouteContext): Reply {
  const bot = findByRef(ctx.state.bots, param(ctx, 'ref'));
  return bot === undefined ? apiError(404, 'Bot not found') : ok(bot);
}

function getServer(ctx: RouteContext): Reply {
  const server = findByRef(ctx.state.servers, param(ctx, 'ref'));
  return server === undefined ? apiError(404, 'Server not found') : ok(server);
}

function getProfile(ctx: RouteContext): Reply {
  const profile = ctx.state.profiles.get(param(ctx, 'id'));
  return profile === undefined ? apiError(404, 'Profile not found') : ok(profile);
}

// The spec lists only 200 for the comment and developer methods: unknown ids give empty lists.
function getBotComments(ctx: RouteContext): Reply {
  if (authenticate(ctx, ANY_KIND) === null) return unauthorized();
  return ok(ctx.state.comments.bots.get(param(ctx, 'id')) ?? []);
}

function getServerComments(ctx: RouteContext): Reply {
  if (authenticate(ctx, ANY_KIND) === null) return unauthorized();
  return ok(ctx.state.comments.servers.get(param(ctx, 'id')) ?? []);
}

function byUser(all: Map<string, CommentData[]>, userId: string): CommentData[] {
  return [...all.values()].flat().filter((c) => c.userID === userId);
}

function getProfileComments(ctx: RouteContext): Reply {
  if (authenticate(ctx, ANY_KIND) === null) return unauthorized();
  const id = param(ctx, 'id');
  return ok({ bots: byUser(ctx.state.comments.bots, id), servers: byUser(ctx.state.comments.servers, id) });
}

function getDeveloperBots(ctx: RouteContext): Reply {
  if (authenticate(ctx, ANY_KIND) === null) return unauthorized();
  const id = param(ctx, 'id');
  const bots = [...ctx.state.bots.values()].filter((b) => b.information.developers.includes(id));
  return ok(bots.map((b) => ({ id: b.id, shortCode: b.shortCode })));
}

function validateBot(ctx: RouteContext): Reply {
  if (authenticate(ctx, ANY_KIND) === null) return unauthorized();
  const serverId = param(ctx, 'serverId');
  if (!ctx.state.servers.has(serverId)) return apiError(404, 'Server not found');
  return ok({ ok: ctx.state.botsOnServers.get(serverId)?.has(param(ctx, 'botId')) ?? false });
}

function checkToken(ctx: RouteContext): Reply {
  const principal = authenticate(ctx, ANY_KIND);
  if (principal === null || principal.kind === null) return unauthorized();
  return ok({ ok: true, type: principal.kind });
}

// --- POST /stats ----------------------------------------------------------------------------

const STATS_SCHEMA: ObjectSchema = {
  required: ['servers', 'shards', 'users'],
  properties: {
    servers: { type: 'integer', minimum: 0 },
    shards: { type: 'integer', minimum: 0 },
    users: { type: 'integer', minimum: 0 },
  },
};

function postStats(ctx: RouteContext): Reply {
  const principal = authenticate(ctx, { v1: 'bot', v2: ['Bot'] });
  if (principal === null) return unauthorized();
  const parsed = parseBody(ctx.contentType, ctx.rawBody);
  if (!parsed.ok) return parsed.reply;
  // "A JSON object sent as a serialized string": a JSON string holding an object is accepted too.
  let body = parsed.value;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      // left as a string: the schema check below refuses it
    }
  }
  const v = validateObject(body, STATS_SCHEMA);
  if (!v.ok) return validatorError(v.message);
  const bot = principal.token.botId === null ? undefined : ctx.state.bots.get(principal.token.botId);
  if (bot !== undefined) {
    bot.information.stats = {
      servers: num(v.value, 'servers') ?? 0,
      shards: num(v.value, 'shards') ?? 0,
      users: num(v.value, 'users') ?? 0,
    };
  }
  return ok({ ok: true });
}

function num(m: Map<string, string | number>, key: string): number | undefined {
  const v = m.get(key);
  return typeof v === 'number' ? v : undefined;
}

function str(m: Map<string, string | number>, key: string): string | undefined {
  const v = m.get(key);
  return v === undefined ? undefined : String(v);
}

// --- POST /server ---------------------------------------------------------------------------

const SERVER_SCHEMA: ObjectSchema = {
  required: ['serverID', 'up', 'status', 'upUserID', 'upChannelID', 'upChannelName'],
  properties: {
    serverID: { type: 'string' },
    up: { type: 'integer', enum: [0, 1] },
    status: { type: 'integer', enum: [0, 1] },
    serverName: { type: 'string' },
    serverAvatar: { type: 'string' },
    serverMembersAllCount: { type: 'integer', minimum: 0 },
    serverMembersOnlineCount: { type: 'integer', minimum: 0 },
    serverOwnerID: { type: 'string' },
    serverOwnerTag: { type: 'string' },
    upUserID: { type: 'string' },
    upChannelID: { type: 'string' },
    upChannelName: { type: 'string' },
  },
};

function applyServerInfo(state: EmulatorState, server: ServerData, f: Map<string, string | number>): void {
  const info = server.information;
  info.name = str(f, 'serverName') ?? info.name;
  info.avatar = str(f, 'serverAvatar') ?? info.avatar;
  info.members = [
    num(f, 'serverMembersAllCount') ?? info.members[0],
    num(f, 'serverMembersOnlineCount') ?? info.members[1],
  ];
  const ownerId = str(f, 'serverOwnerID');
  if (ownerId !== undefined) info.owner = ownerId;
  const ownerTag = str(f, 'serverOwnerTag');
  if (ownerTag !== undefined) state.serverOwnerTags.set(server.id, ownerTag);
}

function setPresence(state: EmulatorState, serverId: string, botId: string | null, present: boolean): void {
  if (botId === null) return;
  let bots = state.botsOnServers.get(serverId);
  if (bots === undefined) {
    bots = new Set();
    state.botsOnServers.set(serverId, bots);
  }
  if (present) bots.add(botId);
  else bots.delete(botId);
}

function postServer(ctx: RouteContext): Reply {
  const principal = authenticate(ctx, { v1: 'bot', v2: ['Bot', 'PrivateBot'] });
  if (principal === null) return unauthorized();
  // A valid bot token that is not a service bot, used without the PrivateBot kind (v1 or Bot),
  // gets 401, not 403: the spec reserves 403 for PrivateBot on a server outside the permitted
  // five and says 401 for a token that does not fit.
  if (principal.kind !== 'PrivateBot' && !principal.token.serviceBot) return unauthorized();
  const parsed = parseBody(ctx.contentType, ctx.rawBody);
  if (!parsed.ok) return parsed.reply;
  const v = validateObject(parsed.value, SERVER_SCHEMA);
  if (!v.ok) return validatorError(v.message);
  const f = v.value;
  const serverID = str(f, 'serverID') ?? '';
  const up = num(f, 'up') ?? 0;
  if (principal.kind === 'PrivateBot' && !principal.token.privateServers.includes(serverID)) {
    return apiError(403, 'Forbidden');
  }

  const { state, now, cooldownMs } = ctx;
  const epoch = ctx.nextUpStyle === 'epoch';
  const boost = state.boostedServers.has(serverID);
  const nextUp = (): { wait: number; value: number } => {
    const last = state.ups.get(serverID);
    const at = last === undefined ? now : Math.max(now, last + cooldownMs);
    return { wait: at - now, value: epoch ? at : at - now };
  };
  const answer = (updated: boolean, bumps: number, upSuccessfully: boolean, message: string): Reply =>
    ok({ serverID, up, updated, bumps, boost, upSuccessfully, timeToNextUpInMs: nextUp().value, message });

  const notUpdated = ctx.forceNotUpdated ?? state.notUpdatedServers.get(serverID);
  if (notUpdated !== undefined) {
    return answer(false, state.servers.get(serverID)?.information.bumps ?? 0, false, notUpdated);
  }

  const server = state.servers.get(serverID) ?? registerServer(state, serverID);
  applyServerInfo(state, server, f);
  setPresence(state, serverID, principal.token.botId, num(f, 'status') === 1);

  if (up !== 1) return answer(true, server.information.bumps, false, STATS_UPDATED_MESSAGE);
  const { wait } = nextUp();
  if (wait > 0) return answer(true, server.information.bumps, false, upCooldownMessage(wait));
  const added = boost ? 2 : 1;
  server.information.bumps += added;
  state.ups.set(serverID, now);
  return answer(true, server.information.bumps, true, upSuccessMessage(added, server.shortCode ?? server.id));
}

// --- short links ----------------------------------------------------------------------------

type LinksBody = { ok: true; body: Record<string, unknown> } | { ok: false; reply: Reply };

/** Content-type errors keep Fastify's shape; a body that is not an object is a 'Bad request'. */
function linksBody(ctx: RouteContext, allowEmpty: boolean): LinksBody {
  const parsed = parseBody(ctx.contentType, ctx.rawBody);
  if (!parsed.ok) return parsed;
  if (parsed.value === undefined && allowEmpty) return { ok: true, body: {} };
  return isPlainObject(parsed.value) ? { ok: true, body: parsed.value } : { ok: false, reply: badRequest() };
}

function domainCode(value: unknown, fallback: number): number | null {
  if (value === undefined) return fallback;
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) ? n : null;
}

function isNonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '';
}

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

function linksGet(ctx: RouteContext): Reply {
  const principal = authenticate(ctx, PROFILE_ONLY);
  if (principal === null) return unauthorized();
  const parsed = linksBody(ctx, true);
  if (!parsed.ok) return parsed.reply;
  const { body } = parsed;
  const code = body.code;
  if (code !== undefined && typeof code !== 'string') return badRequest();
  const found = ctx.state.links
    .filter((l) => l.ownerID === principal.token.ownerId && (code === undefined || l.code === code))
    .sort((a, b) => a.id - b.id);
  return found.length === 0 ? apiError(404, 'Link not found') : ok(found);
}

function linksCreate(ctx: RouteContext): Reply {
  const principal = authenticate(ctx, PROFILE_ONLY);
  if (principal === null) return unauthorized();
  const parsed = linksBody(ctx, false);
  if (!parsed.ok) return parsed.reply;
  const { body } = parsed;
  const { code, link } = body;
  const domain = domainCode(body.domain, 1);
  // Creation is stated for domains 1 and 3 only; 2 is accepted for deletion.
  if (!isNonEmptyString(code) || !isNonEmptyString(link) || !isHttpUrl(link)) return badRequest();
  if (domain !== 1 && domain !== 3) return badRequest();
  const host = LINK_DOMAINS[domain] ?? '';
  // Codes are unique per domain across all owners (the real sample has 'shiza' on two domains).
  if (ctx.state.links.some((l) => l.code === code && l.domain === host)) return badRequest();
  ctx.state.links.push({
    id: ctx.state.nextLinkId++,
    code,
    ownerID: principal.token.ownerId,
    domain: host,
    views: 0,
    link,
    date: ctx.now,
  });
  return ok({ ok: true });
}

function linksDelete(ctx: RouteContext): Reply {
  const principal = authenticate(ctx, PROFILE_ONLY);
  if (principal === null) return unauthorized();
  const parsed = linksBody(ctx, false);
  if (!parsed.ok) return parsed.reply;
  const { body } = parsed;
  const { code } = body;
  const domain = domainCode(body.domain, 1);
  const host = domain === null ? undefined : LINK_DOMAINS[domain];
  if (!isNonEmptyString(code) || host === undefined) return badRequest();
  const index = ctx.state.links.findIndex(
    (l) => l.ownerID === principal.token.ownerId && l.code === code && l.domain === host,
  );
  if (index < 0) return apiError(404, 'Link not found');
  ctx.state.links.splice(index, 1);
  return ok({ ok: true });
}

// --- table ----------------------------------------------------------------------------------

function route(
  method: Route['method'],
  path: string,
  handle: Route['handle'],
  flags: { v2Only?: boolean; ownLimit?: boolean } = {},
): Route {
  return {
    method,
    segments: path.split('/').slice(1),
    v2Only: flags.v2Only ?? false,
    ownLimit: flags.ownLimit ?? false,
    handle,
  };
}

export const ROUTES: readonly Route[] = [
  route('GET', '/bot/:ref', getBot),
  route('GET', '/bot/:id/comments', getBotComments),
  route('POST', '/stats', postStats, { ownLimit: true }),
  route('GET', '/server/:ref', getServer),
  route('GET', '/server/:id/comments', getServerComments),
  route('POST', '/server', postServer, { ownLimit: true }),
  route('GET', '/profile/:id', getProfile),
  route('GET', '/profile/:id/comments', getProfileComments),
  route('GET', '/bots/:id', getDeveloperBots),
  route('POST', '/links/get', linksGet),
  route('POST', '/links/create', linksCreate),
  route('POST', '/links/delete', linksDelete),
  route('GET', '/server/:serverId/validateBot/:botId', validateBot, { v2Only: true }),
  route('GET', '/token', checkToken, { v2Only: true }),
];

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
  /** Identifies the route (version-independent), for the per-route rate-limit bucket. */
  id: string;
}

/**
 * Matches decoded path segments (after the version) exactly: a segment is one parameter value
 * even if it contains '/' (from %2F) or is '..'; empty segments never match a parameter.
 */
export function matchRoute(method: string, version: 1 | 2, segments: readonly string[]): RouteMatch | null {
  for (const r of ROUTES) {
    if (r.method !== method || (r.v2Only && version !== 2) || r.segments.length !== segments.length) continue;
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
    if (matched) return { route: r, params, id: `${r.method} /${r.segments.join('/')}` };
  }
  return null;
}
