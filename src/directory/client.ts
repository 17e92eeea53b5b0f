/**
 * The typed client for the whole directory interface (v1 and v2). Every method validates its
 * input before anything is sent, checks the v2 token-kind table, goes through the rate limiter
 * and the retrying transport, and returns our own types or throws one of errors.ts. Its options
 * are client-options.ts's; the checking of what the directory answered is answers.ts's.
 */
import type { z } from 'zod';
import { inSpan, SpanKind } from '../trace/spans.js';
import { networkError, parseAnswer } from './answers.js';
import {
  DEFAULT_BASE_URL,
  DEFAULT_RATE_LIMITS,
  type DirectoryClientOptions,
  type RequestEvent,
  type RequestOptions,
} from './client-options.js';
import { authorizationFor, ENDPOINTS, type Endpoint, type EndpointName, routeOf } from './endpoints.js';
import { InvalidArgumentError, UnavailableError } from './errors.js';
import { type Limiter, RateLimiter } from './rate-limiter.js';
import {
  assertDomain,
  assertHttpUrl,
  assertLinkCode,
  assertRef,
  assertSnowflake,
  buildPath,
} from './refs.js';
import {
  botReferenceListSchema,
  botSchema,
  commentListSchema,
  linkListSchema,
  okSchema,
  profileCommentsSchema,
  profileSchema,
  serverSchema,
  serverUpSchema,
  tokenInfoSchema,
  validateBotSchema,
} from './schemas.js';
import { SharedRateLimiter } from './shared-rate-limiter.js';
import { Transport, type TransportResponse } from './transport.js';
import type {
  ApiVersion,
  BotReference,
  BotStatsUpdate,
  DirectoryBot,
  DirectoryComment,
  DirectoryProfile,
  DirectoryServer,
  LinkDomainCode,
  OkResult,
  ProfileComments,
  ServerUpdate,
  ServerUpResult,
  ShortLink,
  TokenInfo,
  TokenKind,
  ValidateBotResult,
} from './types.js';

// The client's options go with it, for whoever imports the client from here.
export {
  DEFAULT_BASE_URL,
  DEFAULT_RATE_LIMITS,
  type DirectoryClientOptions,
  type RequestEvent,
  type RequestOptions,
};

export class DirectoryClient {
  readonly version: ApiVersion;
  readonly tokenKind: TokenKind;
  readonly baseUrl: URL;
  readonly #limiter: Limiter | undefined;
  readonly #token: string | undefined;
  readonly #transport: Transport;
  readonly #now: () => number;
  readonly #maxWaitMs: number | undefined;
  readonly #onRequest: ((event: RequestEvent) => void) | undefined;

  constructor(options: DirectoryClientOptions = {}) {
    let baseUrl: URL;
    try {
      baseUrl = new URL(options.baseUrl ?? DEFAULT_BASE_URL);
    } catch {
      throw new InvalidArgumentError('baseUrl must be an absolute http(s) URL');
    }
    if (baseUrl.protocol !== 'http:' && baseUrl.protocol !== 'https:') {
      throw new InvalidArgumentError('baseUrl must be an absolute http(s) URL');
    }
    this.baseUrl = baseUrl;
    this.version = options.version ?? 'v2';
    this.tokenKind = options.tokenKind ?? 'Bot';
    this.#token = options.token === '' ? undefined : options.token;
    this.#now = options.now ?? Date.now;
    this.#onRequest = options.onRequest;
    const { maxWaitMs } = options;
    if (maxWaitMs !== undefined && !(Number.isSafeInteger(maxWaitMs) && maxWaitMs > 0)) {
      throw new InvalidArgumentError('maxWaitMs must be a whole number of milliseconds above 0');
    }
    this.#maxWaitMs = maxWaitMs;
    const limits =
      options.rateLimits === false ? undefined : { ...DEFAULT_RATE_LIMITS, ...options.rateLimits };
    const timeoutMs = options.timeoutMs ?? 10_000;
    const shared = options.sharedRateLimits;
    this.#limiter = !limits
      ? undefined
      : shared
        ? new SharedRateLimiter({
            ledger: shared.ledger,
            global: limits.global,
            routes: limits.routes,
            ...(limits.marginMs === undefined ? {} : { marginMs: limits.marginMs }),
            // An attempt lasts timeoutMs at most: a grant unsettled longer belongs to a dead process.
            inFlightCapMs: timeoutMs + 5_000,
            ...(shared.onLedgerError ? { onLedgerError: shared.onLedgerError } : {}),
            now: this.#now,
          })
        : new RateLimiter({
            global: limits.global,
            routes: limits.routes,
            marginMs: limits.marginMs,
            now: this.#now,
          });
    if (this.#limiter) this.#limiter.onGrant = options.onRateLimitGrant;
    const routeWindow = limits?.routes.windowMs ?? DEFAULT_RATE_LIMITS.routes.windowMs;
    const globalWindow = limits?.global.windowMs ?? DEFAULT_RATE_LIMITS.global.windowMs;
    this.#transport = new Transport({
      baseUrl,
      timeoutMs,
      maxRetries: options.maxRetries ?? 2,
      connections: options.connections ?? 8,
      limiter: this.#limiter,
      fallbackRetryAfterMs: (bucket) => (bucket ? routeWindow : globalWindow),
      userAgent: options.userAgent ?? 'directory-bot (typed directory client; undici)',
      now: this.#now,
      random: options.random ?? Math.random,
    });
  }

  // ---- bots ----

  async getBot(ref: string, options?: RequestOptions): Promise<DirectoryBot> {
    const endpoint = ENDPOINTS.getBot;
    return this.#call(
      endpoint,
      { ref: assertRef(ref, 'bot reference', endpoint.name) },
      undefined,
      botSchema,
      options,
    );
  }

  async getBotComments(botId: string, options?: RequestOptions): Promise<DirectoryComment[]> {
    const endpoint = ENDPOINTS.getBotComments;
    return this.#call(
      endpoint,
      { id: assertSnowflake(botId, 'bot ID', endpoint.name) },
      undefined,
      commentListSchema,
      options,
    );
  }

  /** POST /stats. Background priority unless told otherwise. */
  async postBotStats(stats: BotStatsUpdate, options?: RequestOptions): Promise<OkResult> {
    const endpoint = ENDPOINTS.postBotStats;
    const body: Record<string, number> = {};
    for (const key of ['servers', 'shards', 'users'] as const) {
      const value = stats[key];
      if (!Number.isSafeInteger(value) || value < 0) {
        throw new InvalidArgumentError(`${key} must be a whole number of at least 0`, {
          method: endpoint.name,
        });
      }
      body[key] = value;
    }
    return this.#call(endpoint, {}, body, okSchema, { priority: 'background', ...options });
  }

  // ---- servers ----

  async getServer(ref: string, options?: RequestOptions): Promise<DirectoryServer> {
    const endpoint = ENDPOINTS.getServer;
    return this.#call(
      endpoint,
      { ref: assertRef(ref, 'server reference', endpoint.name) },
      undefined,
      serverSchema,
      options,
    );
  }

  async getServerComments(serverId: string, options?: RequestOptions): Promise<DirectoryComment[]> {
    const endpoint = ENDPOINTS.getServerComments;
    return this.#call(
      endpoint,
      { id: assertSnowflake(serverId, 'server ID', endpoint.name) },
      undefined,
      commentListSchema,
      options,
    );
  }

  /** POST /server: update a server's statistics and, with `up: true`, raise it if possible. */
  async postServer(update: ServerUpdate, options?: RequestOptions): Promise<ServerUpResult> {
    const endpoint = ENDPOINTS.postServer;
    const method = endpoint.name;
    const body: Record<string, string | number> = {
      serverID: assertSnowflake(update.serverId, 'serverId', method),
      up: update.up ? 1 : 0,
      status: update.botPresent ? 1 : 0,
    };
    const optionalText = (key: string, value: string | undefined, max: number): void => {
      if (value === undefined) return;
      if (typeof value !== 'string' || value.length > max) {
        throw new InvalidArgumentError(`${key} must be text of at most ${max} characters`, { method });
      }
      body[key] = value;
    };
    const optionalCount = (key: string, value: number | undefined): void => {
      if (value === undefined) return;
      if (!Number.isSafeInteger(value) || value < 0) {
        throw new InvalidArgumentError(`${key} must be a whole number of at least 0`, { method });
      }
      body[key] = value;
    };
    optionalText('serverName', update.name, 200);
    optionalText('serverAvatar', update.avatar, 2048);
    optionalCount('serverMembersAllCount', update.membersAll);
    optionalCount('serverMembersOnlineCount', update.membersOnline);
    if (update.ownerId !== undefined) body.serverOwnerID = assertSnowflake(update.ownerId, 'ownerId', method);
    optionalText('serverOwnerTag', update.ownerTag, 64);
    body.upUserID = assertSnowflake(update.upUserId, 'upUserId', method);
    body.upChannelID = assertSnowflake(update.upChannelId, 'upChannelId', method);
    if (typeof update.upChannelName !== 'string' || update.upChannelName.length === 0) {
      throw new InvalidArgumentError('upChannelName must not be empty', { method });
    }
    optionalText('upChannelName', update.upChannelName, 200);
    return this.#call(endpoint, {}, body, (receivedAt) => serverUpSchema(receivedAt), options);
  }

  /** GET /v2/server/{serverId}/validateBot/{botId} (v2 only). */
  async validateBot(serverId: string, botId: string, options?: RequestOptions): Promise<ValidateBotResult> {
    const endpoint = ENDPOINTS.validateBot;
    return this.#call(
      endpoint,
      {
        serverId: assertSnowflake(serverId, 'server ID', endpoint.name),
        botId: assertSnowflake(botId, 'bot ID', endpoint.name),
      },
      undefined,
      validateBotSchema,
      options,
    );
  }

  // ---- profiles ----

  async getProfile(userId: string, options?: RequestOptions): Promise<DirectoryProfile> {
    const endpoint = ENDPOINTS.getProfile;
    return this.#call(
      endpoint,
      { id: assertSnowflake(userId, 'user ID', endpoint.name) },
      undefined,
      profileSchema,
      options,
    );
  }

  async getProfileComments(userId: string, options?: RequestOptions): Promise<ProfileComments> {
    const endpoint = ENDPOINTS.getProfileComments;
    return this.#call(
      endpoint,
      { id: assertSnowflake(userId, 'user ID', endpoint.name) },
      undefined,
      profileCommentsSchema,
      options,
    );
  }

  async getDeveloperBots(userId: string, options?: RequestOptions): Promise<BotReference[]> {
    const endpoint = ENDPOINTS.getDeveloperBots;
    return this.#call(
      endpoint,
      { id: assertSnowflake(userId, 'user ID', endpoint.name) },
      undefined,
      botReferenceListSchema,
      options,
    );
  }

  // ---- short links (Profile token) ----

  async getLinks(filter: { code?: string } = {}, options?: RequestOptions): Promise<ShortLink[]> {
    const endpoint = ENDPOINTS.getLinks;
    const body: Record<string, string> = {};
    if (filter.code !== undefined) body.code = assertLinkCode(filter.code, endpoint.name);
    return this.#call(endpoint, {}, body, linkListSchema, options);
  }

  async createLink(
    link: { code: string; link: string; domain?: LinkDomainCode },
    options?: RequestOptions,
  ): Promise<OkResult> {
    const endpoint = ENDPOINTS.createLink;
    const body: Record<string, string | number> = {
      code: assertLinkCode(link.code, endpoint.name),
      link: assertHttpUrl(link.link, endpoint.name),
    };
    if (link.domain !== undefined) body.domain = assertDomain(link.domain, [1, 3], endpoint.name);
    return this.#call(endpoint, {}, body, okSchema, options);
  }

  async deleteLink(
    link: { code: string; domain?: LinkDomainCode },
    options?: RequestOptions,
  ): Promise<OkResult> {
    const endpoint = ENDPOINTS.deleteLink;
    const body: Record<string, string | number> = { code: assertLinkCode(link.code, endpoint.name) };
    if (link.domain !== undefined) body.domain = assertDomain(link.domain, [1, 2, 3], endpoint.name);
    return this.#call(endpoint, {}, body, okSchema, options);
  }

  /** GET /v2/token: what the directory says of the configured token (v2 only). */
  async checkToken(options?: RequestOptions): Promise<TokenInfo> {
    const info = await this.#call(ENDPOINTS.checkToken, {}, undefined, tokenInfoSchema, options);
    // Should the directory ever echo the token, it must not travel on in `raw`.
    const token = this.#token;
    const raw = Object.fromEntries(
      Object.entries(info.raw).filter(([, v]) => !(token && JSON.stringify(v ?? null).includes(token))),
    );
    return { ...info, raw };
  }

  /** Requests waiting for the rate limiter now (0 without client-side limits). */
  get waiting(): number {
    return this.#limiter?.pending ?? 0;
  }

  /** Closes the connection pool and fails every request still waiting for the rate limiter. */
  async close(): Promise<void> {
    this.#limiter?.close(new UnavailableError('the directory client was closed', { reason: 'network' }));
    await this.#transport.close();
  }

  // ---- internals ----

  async #call<S extends z.ZodType>(
    endpoint: Endpoint,
    params: Record<string, string>,
    body: Record<string, unknown> | undefined,
    schema: S | ((receivedAt: number) => S),
    options: RequestOptions = {},
  ): Promise<z.output<S>> {
    // Everything that can fail without the network fails here, before anything is sent.
    const authorization = authorizationFor(endpoint, this.version, this.#token, this.tokenKind);
    const path = `/${this.version}${buildPath(endpoint.path, params)}`;
    const route = routeOf(endpoint);
    const context = { method: endpoint.name, route };
    const started = this.#now();
    const deadline =
      options.deadline instanceof Date
        ? options.deadline.getTime()
        : (options.deadline ?? (this.#maxWaitMs === undefined ? undefined : started + this.#maxWaitMs));
    // A span for the call, its rate limiter's wait one inside it: nothing unless tracing is on.
    const attributes = { 'http.request.method': endpoint.method, 'url.template': endpoint.path };
    return inSpan(`directory ${endpoint.name}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      let response: TransportResponse;
      try {
        response = await this.#transport.request({
          method: endpoint.method,
          path,
          authorization,
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          bucket: endpoint.bucket,
          priority: options.priority ?? 'interactive',
          deadline,
          signal: options.signal,
          methodName: endpoint.name,
          onSend: options.onSend,
        });
      } catch (err) {
        const mapped = networkError(err, context, options.signal);
        this.#emit(endpoint.name, route, mapped.code, started, 1);
        span.setAttribute('error.type', mapped.code);
        throw mapped;
      }
      this.#emit(endpoint.name, route, response.status, started, response.attempts);
      span.setAttributes({
        'http.response.status_code': response.status,
        'directory.attempts': response.attempts,
      });
      return parseAnswer(response, context, schema, this.#token);
    });
  }

  #emit(
    method: EndpointName,
    route: string,
    status: number | string,
    started: number,
    attempts: number,
  ): void {
    this.#onRequest?.({
      method,
      route,
      status,
      durationMs: this.#now() - started,
      attempts,
    });
  }
}
