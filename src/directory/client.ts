/**
 * The typed client for the whole directory interface (v1 and v2). Every method validates its
 * input before anything is sent, checks the v2 token-kind table, goes through the rate limiter
 * and the retrying transport, and returns our own types or throws one of errors.ts.
 */
import type { z } from 'zod';
import { retryAfterFromHeaders } from '../http/retry-after.js';
import { authorizationFor, ENDPOINTS, type Endpoint, type EndpointName, routeOf } from './endpoints.js';
import {
  BadRequestError,
  type DirectoryError,
  ForbiddenError,
  InvalidArgumentError,
  InvalidResponseError,
  isDirectoryError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  UnavailableError,
} from './errors.js';
import {
  type BucketLimit,
  type GrantInfo,
  type Limiter,
  type Priority,
  RateLimiter,
} from './rate-limiter.js';
import { assertRef, assertSnowflake, buildPath, SHORT_CODE_PATTERN } from './refs.js';
import {
  botReferenceListSchema,
  botSchema,
  commentListSchema,
  errorBodySchema,
  fastifyErrorSchema,
  linkListSchema,
  okSchema,
  profileCommentsSchema,
  profileSchema,
  serverSchema,
  serverUpSchema,
  tokenInfoSchema,
  validateBotSchema,
} from './schemas.js';
import { type RateLimitLedger, SharedRateLimiter } from './shared-rate-limiter.js';
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

export const DEFAULT_BASE_URL = 'https://api.boticord.top';
/** The directory's published limits. */
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
  version?: ApiVersion;
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
  /** 'interactive' (a person waits) goes before 'background'. Default: interactive. */
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

const EXCERPT_LENGTH = 200;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

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
      const mapped = this.#networkError(err, context, options.signal);
      this.#emit(endpoint.name, route, mapped.code, started, 1);
      throw mapped;
    }
    this.#emit(endpoint.name, route, response.status, started, response.attempts);
    if (response.status >= 200 && response.status < 300) {
      const json = this.#parseJson(response, context);
      const resolved = typeof schema === 'function' ? schema(response.receivedAt) : schema;
      const parsed = resolved.safeParse(json);
      if (!parsed.success) {
        const where = parsed.error.issues
          .slice(0, 3)
          .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
          .join('; ');
        throw new InvalidResponseError(`the directory's answer to ${endpoint.name} does not fit: ${where}`, {
          ...context,
          status: response.status,
          excerpt: this.#excerpt(response.text),
        });
      }
      return parsed.data;
    }
    throw this.#statusError(response, context);
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

  #parseJson(response: TransportResponse, context: { method: string; route: string }): unknown {
    try {
      return JSON.parse(response.text) as unknown;
    } catch {
      throw new InvalidResponseError(`the directory's answer to ${context.method} is not JSON`, {
        ...context,
        status: response.status,
        excerpt: this.#excerpt(response.text),
      });
    }
  }

  /** The first characters of a body, with the token scrubbed in case a proxy echoes it. */
  #excerpt(text: string): string {
    let excerpt = text.length > EXCERPT_LENGTH ? `${text.slice(0, EXCERPT_LENGTH)}…` : text;
    if (this.#token) excerpt = excerpt.split(this.#token).join('[REDACTED]');
    return excerpt.replace(/\s+/g, ' ').trim();
  }

  /** The directory's own error text, cut and scrubbed: it becomes an error message. */
  #errorMessage(text: string): string | undefined {
    const message = this.#rawErrorMessage(text);
    if (message === undefined) return undefined;
    let clean = message.length > 300 ? `${message.slice(0, 300)}…` : message;
    if (this.#token) clean = clean.split(this.#token).join('[REDACTED]');
    return clean;
  }

  #rawErrorMessage(text: string): string | undefined {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return undefined;
    }
    const usual = errorBodySchema.safeParse(json);
    if (usual.success && usual.data.error.message) return usual.data.error.message;
    const fastify = fastifyErrorSchema.safeParse(json);
    if (fastify.success && (fastify.data.message || fastify.data.error)) {
      return fastify.data.message ?? fastify.data.error;
    }
    if (isRecord(json) && typeof json.message === 'string') return json.message;
    return undefined;
  }

  #statusError(response: TransportResponse, context: { method: string; route: string }): DirectoryError {
    const { status } = response;
    const message = this.#errorMessage(response.text);
    const ctx = { ...context, status };
    switch (true) {
      case status === 400:
        return new BadRequestError(message ?? 'Bad request', ctx);
      case status === 401:
        return new UnauthorizedError(message ?? 'Unauthorized', ctx);
      case status === 403:
        return new ForbiddenError(message ?? 'Forbidden', ctx);
      case status === 404:
        return new NotFoundError(message ?? 'Not found', ctx);
      case status === 429: {
        const fromBody = /retry in (\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|seconds?)/i.exec(message ?? '');
        const retryAfterMs =
          retryAfterFromHeaders(response.headers, response.receivedAt) ??
          (fromBody ? Math.ceil(Number(fromBody[1]) * (fromBody[2]?.startsWith('m') ? 1 : 1000)) : undefined);
        return new RateLimitedError(message ?? 'Too many requests', { ...ctx, retryAfterMs });
      }
      case status >= 500:
        return new UnavailableError(`the directory answered ${status}${message ? `: ${message}` : ''}`, {
          ...ctx,
          reason: 'status',
        });
      default:
        return new InvalidResponseError(`the directory answered an unexpected ${status}`, {
          ...ctx,
          excerpt: this.#excerpt(response.text),
        });
    }
  }

  #networkError(
    err: unknown,
    context: { method: string; route: string },
    signal: AbortSignal | undefined,
  ): DirectoryError {
    if (isDirectoryError(err)) return err;
    const code = err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
    if (signal?.aborted) {
      return new UnavailableError(`${context.method} was cancelled`, {
        ...context,
        reason: 'timeout',
        cause: err,
      });
    }
    const timeout =
      code === 'UND_ERR_HEADERS_TIMEOUT' ||
      code === 'UND_ERR_BODY_TIMEOUT' ||
      code === 'UND_ERR_CONNECT_TIMEOUT';
    return new UnavailableError(
      timeout
        ? `the directory did not answer ${context.method} in time`
        : `could not reach the directory for ${context.method}${code ? ` (${code})` : ''}`,
      { ...context, reason: timeout ? 'timeout' : 'network', cause: sanitizeCause(err) },
    );
  }
}

/** Keep only the name, code and message of a low-level error: undici errors can carry request options. */
function sanitizeCause(err: unknown): Error | undefined {
  if (!(err instanceof Error)) return undefined;
  const copy = new Error(err.message);
  copy.name = err.name;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') (copy as Error & { code?: string }).code = code;
  return copy;
}

function assertLinkCode(code: unknown, method: string): string {
  if (typeof code !== 'string' || !SHORT_CODE_PATTERN.test(code)) {
    throw new InvalidArgumentError('a link code is 1 to 32 letters, digits, _ or -', { method });
  }
  return code;
}

function assertHttpUrl(value: unknown, method: string): string {
  if (typeof value === 'string' && value.length <= 2048) {
    try {
      const url = new URL(value);
      if (url.protocol === 'http:' || url.protocol === 'https:') return value;
    } catch {
      // falls through to the error below
    }
  }
  throw new InvalidArgumentError('the link must be an http(s) address of at most 2048 characters', {
    method,
  });
}

function assertDomain(value: unknown, allowed: readonly LinkDomainCode[], method: string): LinkDomainCode {
  if (typeof value !== 'number' || !allowed.includes(value as LinkDomainCode)) {
    throw new InvalidArgumentError(`domain must be one of ${allowed.join(', ')} here`, { method });
  }
  return value as LinkDomainCode;
}
