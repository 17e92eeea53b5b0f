// The Discord REST API (v10) subset discord.js needs: gateway discovery, users, applications, guilds,
// channels, interaction callbacks, interaction webhooks, application commands, and the bot's own
// messages in channels and DMs (channel-messages.ts), which a test may hold in flight (holds.ts).

import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { ChannelMessages } from './channel-messages.js';
import {
  channelPayload,
  type GuildFixture,
  type MemberFixture,
  makeMember,
  makeUser,
  restGuildPayload,
  snowflake,
  type UserFixture,
} from './fixtures.js';
import type { HeldEntry, PostHolds } from './holds.js';
import {
  errors,
  type FileInfo,
  type InteractionRecord,
  type InteractionStore,
  isRecord,
  type RouteResult,
} from './interactions.js';
import { basePermissions, hasPermission, Permission, rolesOf } from './permissions.js';
import type { RecordedFile, RecordedRestRequest, RestFaultRule } from './types.js';

export interface RestHost {
  readonly token: string;
  readonly applicationId: string;
  readonly botUser: UserFixture;
  readonly shardCount: number;
  readonly maxConcurrency: number;
  readonly restLatencyMs: number;
  readonly guilds: Map<string, GuildFixture>;
  readonly users: Map<string, UserFixture>;
  readonly interactions: InteractionStore;
  /** Messages posted in channels and DMs, DM channels. */
  readonly messages: ChannelMessages;
  readonly holds: PostHolds;
  gatewayUrl(): string;
  record(request: RecordedRestRequest, interaction: InteractionRecord | undefined): void;
  takeFault(method: string, path: string): RestFaultRule | undefined;
  /** Discord's global limit (global-limit.ts): the 429 to answer, else undefined. */
  takeGlobal(authorization: string | undefined, path: string): RouteResult | undefined;
  /** Commands: key '' for global, else the guild id. */
  readonly commands: Map<string, Map<string, Record<string, unknown>>>;
  sessionStarted(): number;
  readonly sessionStartLimit: number;
}

interface ParsedBody {
  body: unknown;
  files: RecordedFile[];
  invalidJson: boolean;
}

const API_PREFIX = '/api/v10';

/** Discord's rate-limit headers for a route (one request of 50 used, the window resets in 1 s), added to `headers`. */
function addRateLimitHeaders(headers: OutgoingHttpHeaders, path: string): void {
  headers['x-ratelimit-bucket'] = bucketOf(path);
  headers['x-ratelimit-limit'] = '50';
  headers['x-ratelimit-remaining'] = '49';
  headers['x-ratelimit-reset'] = ((Date.now() + 1_000) / 1_000).toFixed(3);
  headers['x-ratelimit-reset-after'] = '1.000';
  headers['x-ratelimit-scope'] = 'user';
}

/** The same bucket for every path of a route: ids (17 to 20 digits) and a webhook's token left out. */
export function bucketOf(path: string): string {
  let h = 0;
  const generic = path.replace(ID_RUN, ':id').replace(WEBHOOK_TOKEN, '/webhooks/:id/:token');
  for (let i = 0; i < generic.length; i += 1) h = (h * 31 + generic.charCodeAt(i)) >>> 0;
  return h.toString(16).padStart(8, '0');
}
const ID_RUN = /\d{17,20}/g;
const WEBHOOK_TOKEN = /\/webhooks\/:id\/[^/]+/;

/**
 * A request target's path and query. `new URL` only for a target it would change (dot segments,
 * percent escapes or backslashes in the path, a fragment anywhere): the rest, nearly every
 * request, are split as they are.
 */
function splitTarget(target: string): { pathname: string; search: string } {
  const q = target.indexOf('?');
  const pathname = q < 0 ? target : target.slice(0, q);
  if (pathname.startsWith('/') && !NEEDS_URL.test(pathname) && !target.includes('#')) {
    return { pathname, search: q < 0 ? '' : target.slice(q + 1) };
  }
  const url = new URL(target, 'http://127.0.0.1');
  return { pathname: url.pathname, search: url.search.startsWith('?') ? url.search.slice(1) : url.search };
}
const NEEDS_URL = /[.%\\#]|\/\//;

/** The whole body (events, not an async iterator: that costs more than the rest of a small request). */
function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer | string) => {
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    });
    req.once('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** JSON and text bodies at once; a multipart body (files) through the fetch API's form parser. */
function parseBody(raw: Buffer, contentType: string): ParsedBody | Promise<ParsedBody> {
  if (raw.length === 0) return { body: undefined, files: [], invalidJson: false };
  const type = contentType.toLowerCase();
  if (type.startsWith('application/json')) {
    try {
      return { body: JSON.parse(raw.toString('utf8')), files: [], invalidJson: false };
    } catch {
      return { body: raw.toString('utf8'), files: [], invalidJson: true };
    }
  }
  if (type.startsWith('multipart/form-data')) return parseMultipart(raw, contentType);
  return { body: raw.toString('utf8'), files: [], invalidJson: false };
}

async function parseMultipart(raw: Buffer, contentType: string): Promise<ParsedBody> {
  const form = await new Response(new Uint8Array(raw), {
    headers: { 'content-type': contentType },
  }).formData();
  const files: RecordedFile[] = [];
  let body: unknown;
  let invalidJson = false;
  const fields: Record<string, string> = {};
  for (const [field, value] of form.entries()) {
    if (typeof value === 'string') {
      if (field === 'payload_json') {
        try {
          body = JSON.parse(value);
        } catch {
          invalidJson = true;
          body = value;
        }
      } else {
        fields[field] = value;
      }
    } else {
      files.push({
        field,
        filename: value.name,
        contentType: value.type,
        size: value.size,
        data: Buffer.from(await value.arrayBuffer()),
      });
    }
  }
  if (body === undefined && Object.keys(fields).length > 0) body = fields;
  return { body, files, invalidJson };
}

function decodePath(pathname: string): string {
  try {
    return decodeURIComponent(pathname);
  } catch {
    return pathname;
  }
}

const notFound = (): RouteResult => ({ status: 404, body: { message: '404: Not Found', code: 0 } });
const unauthorized = (): RouteResult => ({ status: 401, body: { message: '401: Unauthorized', code: 0 } });
const methodNotAllowed = (): RouteResult => ({
  status: 405,
  body: { message: '405: Method Not Allowed', code: 0 },
});
const missingAccess = (): RouteResult => ({ status: 403, body: { message: 'Missing Access', code: 50001 } });

export interface RestHandler {
  (req: IncomingMessage, res: ServerResponse): void;
  /** Resolves once no request is being handled (a held post counts until it is settled). */
  idle(): Promise<void>;
}

export function createRestHandler(host: RestHost): RestHandler {
  const inFlight = new Set<Promise<void>>();
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const handling = handle(host, req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: '500: Internal Server Error', code: 0, error: String(error) }));
      } else {
        res.destroy();
      }
    });
    inFlight.add(handling);
    void handling.finally(() => inFlight.delete(handling));
  };
  return Object.assign(handler, {
    async idle(): Promise<void> {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  });
}

/** The channel of a Create Message path, when the test holds that channel's posts. */
function heldChannel(host: RestHost, method: string, path: string): string | undefined {
  if (method !== 'POST' || !host.holds.holding()) return undefined;
  const match = CREATE_MESSAGE.exec(path);
  return match && host.holds.isHeld(match[1]!) ? match[1] : undefined;
}
const CREATE_MESSAGE = /^\/channels\/(\d+)\/messages$/;

/** The client is gone (its process killed, its request aborted): nothing can be written. */
function clientGone(res: ServerResponse): boolean {
  return res.destroyed || res.socket === null || res.socket.destroyed;
}

async function handle(host: RestHost, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const at = performance.now();
  const receivedAt = Date.now();
  const target = splitTarget(req.url ?? '/');
  const method = (req.method ?? 'GET').toUpperCase();
  const raw = await readBody(req);
  const contentType = req.headers['content-type'] ?? '';
  const pending = parseBody(raw, contentType);
  const parsed = pending instanceof Promise ? await pending : pending;
  const fullPath = decodePath(target.pathname);
  const path = fullPath.startsWith(`${API_PREFIX}/`) ? fullPath.slice(API_PREFIX.length) : fullPath;
  const record: RecordedRestRequest = {
    method,
    path,
    query: target.search,
    // Node makes this object for the request and never changes it: kept as it is, not copied.
    headers: req.headers,
    body: parsed.body,
    at,
    connection: req.socket.remotePort ?? 0,
    status: 0,
  };
  if (parsed.files.length > 0) record.files = parsed.files;

  let interaction: InteractionRecord | undefined;
  let result: RouteResult;
  // Discord counts a request against the global limit before anything else.
  const limited = fullPath.startsWith(`${API_PREFIX}/`)
    ? host.takeGlobal(req.headers.authorization, path)
    : undefined;
  const fault = limited ? undefined : host.takeFault(method, path);
  let held: HeldEntry | undefined;
  if (!fault && !limited && fullPath.startsWith(`${API_PREFIX}/`)) {
    const channelId = heldChannel(host, method, path);
    if (channelId !== undefined) {
      held = host.holds.enter(channelId, parsed.body, at, res);
      if ((await held.decision) === 'drop') {
        if (!res.destroyed) res.destroy();
        host.record(record, undefined);
        held.finish(record);
        return;
      }
    }
  }
  if (limited) {
    interaction = findInteraction(host, path);
    result = limited;
  } else if (fault?.status !== undefined) {
    interaction = findInteraction(host, path);
    result = { status: fault.status };
    if (fault.body !== undefined) result.body = fault.body;
    if (fault.headers) result.headers = fault.headers;
  } else if (!fullPath.startsWith(`${API_PREFIX}/`)) {
    result = notFound();
  } else if (parsed.invalidJson) {
    result = { status: 400, body: { message: 'The request body contains invalid JSON.', code: 50109 } };
  } else {
    const routed = route(host, method, path, new URLSearchParams(target.search), parsed, req, at, receivedAt);
    result = routed.result;
    interaction = routed.interaction;
  }

  if (host.restLatencyMs > 0) await new Promise((resolve) => setTimeout(resolve, host.restLatencyMs));
  if (fault?.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, fault.delayMs));

  record.status = result.status;
  if (result.body !== undefined) record.response = result.body;
  // One headers object, in the order the answer has always had: the body's type and length, then
  // the stand-in's, then the rate limit (not on an injected fault), then the route's own.
  const payload =
    result.status === 204 || result.body === undefined
      ? undefined
      : typeof result.body === 'string'
        ? result.body
        : JSON.stringify(result.body);
  const headers: OutgoingHttpHeaders =
    payload === undefined
      ? {}
      : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) };
  headers.via = '1.1 google';
  headers['x-stand-in'] = 'discord';
  if (!fault && !limited) addRateLimitHeaders(headers, path);
  if (result.headers) Object.assign(headers, result.headers);
  // A held post completed after its client went away: Discord did the work, nobody hears of it.
  if (!clientGone(res)) {
    res.writeHead(result.status, headers);
    if (payload === undefined) res.end();
    else res.end(payload);
  }
  host.record(record, interaction);
  held?.finish(record);
}

function findInteraction(host: RestHost, path: string): InteractionRecord | undefined {
  const cb = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(path);
  if (cb) {
    const rec = host.interactions.byId.get(cb[1]!);
    return rec && rec.token === cb[2] ? rec : undefined;
  }
  const wh = /^\/webhooks\/(\d+)\/([^/]+)(?:\/|$)/.exec(path);
  if (wh) return host.interactions.webhookRecord(wh[1]!, wh[2]!);
  return undefined;
}

function isBotAuthorized(host: RestHost, req: IncomingMessage): boolean {
  const auth = req.headers.authorization;
  return auth === `Bot ${host.token}`;
}

interface Routed {
  result: RouteResult;
  interaction?: InteractionRecord;
}

function route(
  host: RestHost,
  method: string,
  path: string,
  query: URLSearchParams,
  parsed: ParsedBody,
  req: IncomingMessage,
  at: number,
  receivedAt: number,
): Routed {
  const files: FileInfo[] = parsed.files.map((f) => ({
    filename: f.filename,
    contentType: f.contentType,
    size: f.size,
  }));
  const segments = path.split('/').filter((s) => s.length > 0);

  // Routes that authenticate with the interaction token instead of the bot token.
  if (segments[0] === 'interactions' && segments.length === 4 && segments[3] === 'callback') {
    if (method !== 'POST') return { result: methodNotAllowed() };
    const rec = host.interactions.byId.get(segments[1]!);
    const interaction = rec && rec.token === segments[2] ? rec : undefined;
    const withResponse = query.get('with_response') === 'true';
    const result = host.interactions.callback(
      segments[1]!,
      segments[2]!,
      parsed.body,
      withResponse,
      at,
      files,
    );
    return interaction ? { result, interaction } : { result };
  }
  if (segments[0] === 'webhooks' && segments.length >= 3) {
    return webhookRoute(host, method, segments, query, parsed.body, files);
  }
  if (segments[0] === 'gateway' && segments.length === 1 && method === 'GET') {
    return { result: { status: 200, body: { url: host.gatewayUrl() } } };
  }

  if (!isBotAuthorized(host, req)) return { result: unauthorized() };

  const [first, second, third, fourth, fifth] = segments;
  if (first === 'gateway' && second === 'bot' && segments.length === 2) {
    if (method !== 'GET') return { result: methodNotAllowed() };
    return {
      result: {
        status: 200,
        body: {
          url: host.gatewayUrl(),
          shards: host.shardCount,
          session_start_limit: {
            total: host.sessionStartLimit,
            remaining: Math.max(0, host.sessionStartLimit - host.sessionStarted()),
            reset_after: 86_400_000,
            max_concurrency: host.maxConcurrency,
          },
        },
      },
    };
  }
  if (first === 'users' && second === '@me' && third === 'channels' && segments.length === 3) {
    if (method !== 'POST') return { result: methodNotAllowed() };
    return { result: host.messages.createDm(parsed.body) };
  }
  if (first === 'users' && segments.length === 2 && method === 'GET') {
    if (second === '@me') {
      return {
        result: {
          status: 200,
          body: {
            ...host.botUser,
            bot: true,
            verified: true,
            mfa_enabled: false,
            locale: 'en-US',
            email: null,
          },
        },
      };
    }
    const user = host.users.get(second!);
    return {
      result: user
        ? { status: 200, body: user }
        : { status: 404, body: { message: 'Unknown User', code: 10013 } },
    };
  }
  if (first === 'applications' && second === '@me' && segments.length === 2 && method === 'GET') {
    return { result: { status: 200, body: applicationPayload(host) } };
  }
  if (first === 'applications' && second !== undefined && segments.length >= 3) {
    if (second !== host.applicationId && second !== '@me') return { result: missingAccess() };
    if (third === 'commands') return { result: commandsRoute(host, method, undefined, fourth, parsed.body) };
    if (third === 'guilds' && fourth !== undefined && fifth === 'commands') {
      if (!host.guilds.has(fourth)) return { result: missingAccess() };
      return { result: commandsRoute(host, method, fourth, segments[5], parsed.body) };
    }
    return { result: notFound() };
  }
  if (first === 'guilds' && second !== undefined) {
    const guild = host.guilds.get(second);
    if (!guild || guild.unavailable)
      return { result: { status: 404, body: { message: 'Unknown Guild', code: 10004 } } };
    if (third === 'members' && fourth !== undefined && fifth === 'roles' && segments.length === 6) {
      if (method !== 'PUT' && method !== 'DELETE') return { result: methodNotAllowed() };
      return { result: memberRole(host, guild, fourth, segments[5]!, method === 'PUT') };
    }
    if (method !== 'GET') return { result: missingAccess() };
    if (segments.length === 2) {
      return { result: { status: 200, body: restGuildPayload(guild, query.get('with_counts') === 'true') } };
    }
    if (third === 'channels' && segments.length === 3) {
      return { result: { status: 200, body: guild.channels.map((c) => channelPayload(c, guild.id)) } };
    }
    if (third === 'roles' && segments.length === 3) return { result: { status: 200, body: guild.roles } };
    if (third === 'members' && fourth !== undefined && segments.length === 4) {
      const member = memberOf(host, guild, fourth);
      return {
        result: member
          ? { status: 200, body: member }
          : { status: 404, body: { message: 'Unknown Member', code: 10007 } },
      };
    }
    return { result: notFound() };
  }
  if (first === 'channels' && second !== undefined && segments.length === 2) {
    if (method !== 'GET') return { result: missingAccess() };
    return { result: host.messages.getChannel(second) };
  }
  if (first === 'channels' && second !== undefined && third === 'messages' && segments.length === 4) {
    if (method === 'DELETE') return { result: host.messages.delete(second, segments[3]!) };
    if (method !== 'PATCH') return { result: methodNotAllowed() };
    return { result: host.messages.edit(second, segments[3]!, parsed.body) };
  }
  if (first === 'channels' && second !== undefined && third === 'messages' && segments.length === 3) {
    if (method !== 'POST') return { result: methodNotAllowed() };
    return { result: host.messages.post(second, parsed.body, { at, receivedAt, files }) };
  }
  return { result: notFound() };
}

/**
 * PUT / DELETE /guilds/{id}/members/{id}/roles/{id}: as Discord checks it, the bot needs Manage
 * Roles and a highest role above the role it gives or takes (50013 otherwise); the member keeps
 * the roles it is given, for the next interaction's payload.
 */
function memberRole(
  host: RestHost,
  guild: GuildFixture,
  userId: string,
  roleId: string,
  add: boolean,
): RouteResult {
  const role = guild.roles.find((r) => r.id === roleId);
  if (!role) return { status: 404, body: { message: 'Unknown Role', code: 10011 } };
  const member = memberOf(host, guild, userId);
  if (!member) return { status: 404, body: { message: 'Unknown Member', code: 10007 } };
  const botId = host.botUser.id;
  const botRoles = rolesOf(guild, botId);
  const bits = basePermissions(guild, { userId: botId, roles: botRoles });
  const highest = Math.max(0, ...guild.roles.filter((r) => botRoles.includes(r.id)).map((r) => r.position));
  if (!hasPermission(bits, Permission.ManageRoles) || role.position >= highest || role.managed) {
    return { status: 403, body: { message: 'Missing Permissions', code: 50013 } };
  }
  if (!guild.members.includes(member)) guild.members.push(member);
  member.roles = add ? [...new Set([...member.roles, roleId])] : member.roles.filter((r) => r !== roleId);
  return { status: 204 };
}

function memberOf(host: RestHost, guild: GuildFixture, userId: string): MemberFixture | undefined {
  const existing = guild.members.find((m) => m.user.id === userId);
  if (existing) return existing;
  if (userId === guild.owner_id) {
    const owner = host.users.get(userId);
    if (owner) return makeMember(owner, { joinedAt: new Date(Date.now() - 30 * 86_400_000).toISOString() });
  }
  return undefined;
}

function applicationPayload(host: RestHost): Record<string, unknown> {
  // A stable, different snowflake for the application's owner.
  const owner = makeUser({ id: (BigInt(host.applicationId) - 1n).toString(), username: 'stand_in_owner' });
  return {
    id: host.applicationId,
    name: host.botUser.username,
    icon: null,
    description: 'A Discord stand-in application',
    summary: '',
    type: null,
    hook: true,
    bot_public: true,
    bot_require_code_grant: false,
    verify_key: '0'.repeat(64),
    flags: APPLICATION_FLAGS,
    owner,
    team: null,
    bot: { ...host.botUser, bot: true },
    approximate_guild_count: host.guilds.size,
    approximate_user_install_count: 0,
    redirect_uris: [],
    interactions_endpoint_url: null,
    role_connections_verification_url: null,
    event_webhooks_url: null,
    event_webhooks_status: 1,
    install_params: { scopes: ['bot', 'applications.commands'], permissions: '0' },
    integration_types_config: { '0': { oauth2_install_params: null } },
    tags: [],
  };
}

/** GATEWAY_GUILD_MEMBERS_LIMITED | GATEWAY_MESSAGE_CONTENT_LIMITED | APPLICATION_COMMAND_BADGE. */
export const APPLICATION_FLAGS = (1 << 15) | (1 << 19) | (1 << 23);

// ---------------------------------------------------------------------------------------------

function webhookRoute(
  host: RestHost,
  method: string,
  segments: string[],
  query: URLSearchParams,
  body: unknown,
  files: FileInfo[],
): Routed {
  const [, appId, token, messages, messageId] = segments;
  const interaction = host.interactions.webhookRecord(appId!, token!);
  if (!interaction) return { result: errors.unknownWebhook() };
  const store = host.interactions;
  if (segments.length === 3) {
    if (method === 'POST') {
      return { result: store.followUp(interaction, body, query.get('wait') === 'true', files), interaction };
    }
    if (method === 'GET') {
      return {
        result: {
          status: 200,
          body: { type: 3, id: host.applicationId, application_id: host.applicationId },
        },
        interaction,
      };
    }
    return { result: methodNotAllowed(), interaction };
  }
  if (messages !== 'messages' || messageId === undefined || segments.length !== 5) {
    return { result: notFound(), interaction };
  }
  switch (method) {
    case 'GET':
      return { result: store.getWebhookMessage(interaction, messageId), interaction };
    case 'PATCH':
      return { result: store.editWebhookMessage(interaction, messageId, body, files), interaction };
    case 'DELETE':
      return { result: store.deleteWebhookMessage(interaction, messageId), interaction };
    default:
      return { result: methodNotAllowed(), interaction };
  }
}

// ---------------------------------------------------------------------------------------------

function commandsRoute(
  host: RestHost,
  method: string,
  guildId: string | undefined,
  commandId: string | undefined,
  body: unknown,
): RouteResult {
  const key = guildId ?? '';
  let registry = host.commands.get(key);
  if (!registry) {
    registry = new Map();
    host.commands.set(key, registry);
  }
  if (commandId === undefined) {
    if (method === 'GET') return { status: 200, body: [...registry.values()] };
    if (method === 'PUT') {
      if (!Array.isArray(body)) {
        return errors.invalidForm({ _errors: [{ code: 'BASE_TYPE_LIST', message: 'Must be a list.' }] });
      }
      const invalid = validateCommands(body);
      if (invalid) return invalid;
      const previous = [...registry.values()];
      registry.clear();
      const out: Record<string, unknown>[] = [];
      for (const input of body) {
        const cmd = isRecord(input) ? input : {};
        const same = previous.find((p) => p.name === cmd.name && (p.type ?? 1) === (cmd.type ?? 1));
        const created = commandPayload(
          host,
          cmd,
          guildId,
          typeof same?.id === 'string' ? same.id : undefined,
        );
        registry.set(String(created.id), created);
        out.push(created);
      }
      return { status: 200, body: out };
    }
    if (method === 'POST') {
      const invalid = validateCommands([body]);
      if (invalid) return invalid;
      const cmd = isRecord(body) ? body : {};
      const same = [...registry.values()].find(
        (p) => p.name === cmd.name && (p.type ?? 1) === (cmd.type ?? 1),
      );
      const created = commandPayload(host, cmd, guildId, typeof same?.id === 'string' ? same.id : undefined);
      registry.set(String(created.id), created);
      return { status: same ? 200 : 201, body: created };
    }
    return methodNotAllowed();
  }
  const existing = registry.get(commandId);
  if (!existing) return { status: 404, body: { message: 'Unknown application command', code: 10063 } };
  if (method === 'GET') return { status: 200, body: existing };
  if (method === 'DELETE') {
    registry.delete(commandId);
    return { status: 204 };
  }
  if (method === 'PATCH') {
    const patch = isRecord(body) ? body : {};
    const updated = commandPayload(host, { ...existing, ...patch }, guildId, commandId);
    registry.set(commandId, updated);
    return { status: 200, body: updated };
  }
  return methodNotAllowed();
}

function validateCommands(list: unknown[]): RouteResult | null {
  const tree: Record<string, unknown> = {};
  list.forEach((input, i) => {
    const errs: Record<string, unknown> = {};
    if (!isRecord(input)) {
      tree[String(i)] = {
        _errors: [{ code: 'MODEL_TYPE_CONVERT', message: 'Only dictionaries may be used in a ModelType' }],
      };
      return;
    }
    const type = typeof input.type === 'number' ? input.type : 1;
    const name = input.name;
    if (typeof name !== 'string' || name.length < 1 || name.length > 32) {
      errs.name = {
        _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 32 in length.' }],
      };
    } else if (type === 1 && !/^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u.test(name)) {
      errs.name = {
        _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME', message: 'Command name is invalid' }],
      };
    } else if (type === 1 && name !== name.toLowerCase()) {
      errs.name = {
        _errors: [{ code: 'APPLICATION_COMMAND_INVALID_NAME', message: 'Command name is invalid' }],
      };
    }
    if (type === 1) {
      const description = input.description;
      if (typeof description !== 'string' || description.length < 1 || description.length > 100) {
        errs.description = {
          _errors: [{ code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 1 and 100 in length.' }],
        };
      }
    }
    if (Array.isArray(input.options) && input.options.length > 25) {
      errs.options = {
        _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 25 or fewer in length.' }],
      };
    }
    if (Object.keys(errs).length > 0) tree[String(i)] = errs;
  });
  const names = list.filter(isRecord).map((c) => `${String(c.type ?? 1)}:${String(c.name)}`);
  if (new Set(names).size !== names.length) {
    tree._errors = [
      { code: 'APPLICATION_COMMANDS_DUPLICATE_NAME', message: 'Application command names must be unique' },
    ];
  }
  return Object.keys(tree).length > 0 ? errors.invalidForm(tree) : null;
}

function commandPayload(
  host: RestHost,
  input: Record<string, unknown>,
  guildId: string | undefined,
  id: string | undefined,
): Record<string, unknown> {
  const type = typeof input.type === 'number' ? input.type : 1;
  const cmd: Record<string, unknown> = {
    id: id ?? snowflake(),
    application_id: host.applicationId,
    version: snowflake(),
    default_member_permissions: input.default_member_permissions ?? null,
    type,
    name: input.name,
    name_localizations: input.name_localizations ?? null,
    description: type === 1 ? (input.description ?? '') : '',
    description_localizations: input.description_localizations ?? null,
    dm_permission: input.dm_permission ?? true,
    contexts: input.contexts ?? (guildId ? null : [0, 1, 2]),
    integration_types: input.integration_types ?? [0],
    nsfw: input.nsfw ?? false,
  };
  if (guildId) cmd.guild_id = guildId;
  if (Array.isArray(input.options)) cmd.options = input.options;
  return cmd;
}
