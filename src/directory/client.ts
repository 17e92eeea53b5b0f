/**
 * The typed client for the whole directory interface: v3 (the directory's current one, the
 * default) and v1/v2. Every method validates its input before anything is sent, checks the v2
 * token-kind table, goes through the rate limiter and the retrying transport, and returns our own
 * types or throws one of errors.ts: the same records whatever the version (v3's adapter is
 * v3/schemas.ts, its answers v3/answers.ts, its search v3/search.ts). The look-ups may be served
 * from a cache (lookup-cache.ts). Its options are client-options.ts's; the checking of what v1/v2
 * answered is answers.ts's.
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
import {
  authorizationFor,
  ENDPOINTS,
  type Endpoint,
  type EndpointName,
  requestOf,
  routeOf,
} from './endpoints.js';
import { InvalidArgumentError, NotFoundError, RateLimitedError, UnavailableError } from './errors.js';
import { type CacheStats, LookupCache, type LookupKind } from './lookup-cache.js';
import { type Limiter, RateLimiter } from './rate-limiter.js';
import {
  assertDomain,
  assertHttpUrl,
  assertLinkCode,
  assertRef,
  assertSnowflake,
  buildPath,
  isSnowflake,
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
  SearchHit,
  ServerUpdate,
  ServerUpResult,
  ShortLink,
  TokenInfo,
  TokenKind,
  ValidateBotResult,
} from './types.js';
import { parseV3Answer } from './v3/answers.js';
import { V3_BLOCK_MS } from './v3/codes.js';
import {
  v3BotHitsSchema,
  v3BotSchema,
  v3CommentHitsSchema,
  v3DeveloperBotsSchema,
  v3ProfileSchema,
  v3SearchKeySchema,
  v3ServerHitsSchema,
  v3ServerSchema,
  v3StatsSchema,
} from './v3/schemas.js';
import { type SearchBody, SearchService } from './v3/search.js';
import { DEFAULT_API_VERSION, PUBLISHED_LIMITS } from './versions.js';

// The client's options go with it, for whoever imports the client from here.
export {
  DEFAULT_BASE_URL,
  DEFAULT_RATE_LIMITS,
  type DirectoryClientOptions,
  type RequestEvent,
  type RequestOptions,
};

/** The search service's address: DIRECTORY_SEARCH_URL, else the API's /v3/search. */
function searchAddress(given: string | undefined, baseUrl: URL): URL {
  let url: URL;
  try {
    url = new URL(given ?? `${baseUrl.href.replace(/\/+$/, '')}/v3/search`);
  } catch {
    throw new InvalidArgumentError('searchUrl must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidArgumentError('searchUrl must be an absolute http(s) URL');
  }
  return url;
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
  readonly #cache: LookupCache;
  readonly #search: SearchService | undefined;
  readonly #searchTransport: Transport | undefined;

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
    this.version = options.version ?? DEFAULT_API_VERSION;
    if (!(['v1', 'v2', 'v3'] as const).includes(this.version)) {
      throw new InvalidArgumentError('version must be v1, v2 or v3');
    }
    this.tokenKind = options.tokenKind ?? 'Bot';
    this.#token = options.token === '' ? undefined : options.token;
    this.#now = options.now ?? Date.now;
    this.#onRequest = options.onRequest;
    const { maxWaitMs } = options;
    if (maxWaitMs !== undefined && !(Number.isSafeInteger(maxWaitMs) && maxWaitMs > 0)) {
      throw new InvalidArgumentError('maxWaitMs must be a whole number of milliseconds above 0');
    }
    this.#maxWaitMs = maxWaitMs;
    const published = PUBLISHED_LIMITS[this.version];
    const limits =
      options.rateLimits === false
        ? undefined
        : { ...published, marginMs: DEFAULT_RATE_LIMITS.marginMs, ...options.rateLimits };
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
    const routeWindow = limits?.routes.windowMs ?? published.routes.windowMs;
    // v3: an overrun blocks for 10 s (the Russian docs), whatever the window.
    const globalWindow =
      this.version === 'v3' ? V3_BLOCK_MS : (limits?.global.windowMs ?? published.global.windowMs);
    const transportOptions = {
      timeoutMs,
      maxRetries: options.maxRetries ?? 2,
      limiter: this.#limiter,
      fallbackRetryAfterMs: (bucket: string | undefined) => (bucket ? routeWindow : globalWindow),
      userAgent: options.userAgent ?? 'directory-bot (typed directory client; undici)',
      now: this.#now,
      random: options.random ?? Math.random,
    };
    this.#transport = new Transport({ ...transportOptions, baseUrl, connections: options.connections ?? 8 });
    this.#cache = new LookupCache({
      ...(options.cache ? options.cache : { maxEntries: 0 }),
      now: this.#now,
    });
    if (this.version === 'v3') {
      const searchUrl = searchAddress(options.searchUrl, baseUrl);
      this.#searchTransport = new Transport({ ...transportOptions, baseUrl: searchUrl, connections: 2 });
      this.#search = new SearchService({
        transport: this.#searchTransport,
        fetchKey: (request) =>
          this.#call(ENDPOINTS.searchKey, {}, undefined, v3SearchKeySchema, {
            priority: request.priority,
            ...(request.deadline === undefined ? {} : { deadline: request.deadline }),
            ...(request.signal ? { signal: request.signal } : {}),
          }),
        now: this.#now,
        onAnswer: (status, started, attempts) =>
          this.#emit('search', routeOf(ENDPOINTS.search, 'v3'), status, started, attempts),
        mapError: networkError,
      });
    }
  }

  // ---- the look-ups' cache ----

  /**
   * Forgets what the cache holds of a record (the directory said it changed): `bot`, `server`,
   * `profile` (the profile and that user's list of bots). Returns how many entries went.
   */
  forget(kind: 'bot' | 'server' | 'profile', id: string): number {
    if (kind === 'profile') return this.#cache.drop('profile', id) + this.#cache.drop('developerBots', id);
    return this.#cache.drop(kind, id);
  }

  /** What the look-ups' cache holds and how it answered (metrics, the bench). */
  cacheStats(): CacheStats {
    return this.#cache.stats();
  }

  #cached<T>(
    kind: LookupKind,
    ref: string,
    options: RequestOptions | undefined,
    load: (options: RequestOptions) => Promise<T>,
    idOf: (value: T) => string | null,
  ): Promise<T> {
    // A caller that asks for something of its own (a signal, a send hook) gets its own request.
    if (options?.signal || options?.onSend) return load(options);
    return this.#cache.get(
      kind,
      ref,
      options?.priority ?? 'interactive',
      (priority) => load({ ...options, priority }),
      idOf,
    );
  }

  // ---- bots ----

  /**
   * A bot by ID or short code. v3 looks bots up by ID only: a short code is found through the
   * search (v3ByCode), or the answer is a NotFoundError that says so, never another bot's card.
   */
  async getBot(ref: string, options?: RequestOptions): Promise<DirectoryBot> {
    const endpoint = ENDPOINTS.getBot;
    const checked = assertRef(ref, 'bot reference', endpoint.name);
    return this.#cached(
      'bot',
      checked,
      options,
      (o) =>
        this.version === 'v3' && !isSnowflake(checked)
          ? this.#v3ByCode('bot', checked, o)
          : this.#call(
              endpoint,
              { ref: checked },
              undefined,
              this.version === 'v3' ? v3BotSchema : botSchema,
              o,
            ),
      (bot) => bot.id,
    );
  }

  async getBotComments(botId: string, options?: RequestOptions): Promise<DirectoryComment[]> {
    const endpoint = ENDPOINTS.getBotComments;
    const id = assertSnowflake(botId, 'bot ID', endpoint.name);
    if (this.version === 'v3') return this.#v3Comments(`resource = "${id}"`, options);
    return this.#call(endpoint, { id }, undefined, commentListSchema, options);
  }

  /**
   * POST /stats (v3: POST /bots/{botId}/stats). Critical priority (before look-ups) unless told
   * otherwise. v1/v2 take all three counts. v3 takes what is known: a count left undefined is left
   * out, and so is a 0 (v3 refuses it: boticordpy, "None of the values must be equal to 0").
   */
  async postBotStats(stats: BotStatsUpdate, options?: RequestOptions): Promise<OkResult> {
    const endpoint = ENDPOINTS.postBotStats;
    const body: Record<string, number> = {};
    const v3 = this.version === 'v3';
    // v3's names: servers, shards, members (docs-v3 bots.mdx UpdateBotStats).
    const names = { servers: 'servers', shards: 'shards', users: v3 ? 'members' : 'users' } as const;
    for (const key of ['servers', 'shards', 'users'] as const) {
      const value = stats[key];
      if (v3 && (value === undefined || value === 0)) continue;
      if (value === undefined || !Number.isSafeInteger(value) || value < 0) {
        throw new InvalidArgumentError(`${key} must be a whole number of at least 0`, {
          method: endpoint.name,
        });
      }
      body[names[key]] = value;
    }
    const priority = { priority: 'critical' as const, ...options };
    if (!v3) return this.#call(endpoint, {}, body, okSchema, priority);
    const id = assertSnowflake(stats.botId, 'botId (the bot whose statistics these are)', endpoint.name);
    if (Object.keys(body).length === 0) {
      throw new InvalidArgumentError('no count to post: v3 takes servers, shards or members above 0', {
        method: endpoint.name,
      });
    }
    return this.#call(endpoint, { id }, body, v3StatsSchema, priority);
  }

  // ---- servers ----

  /** A server by ID or short code (v3: by ID, a short code through the search, as getBot). */
  async getServer(ref: string, options?: RequestOptions): Promise<DirectoryServer> {
    const endpoint = ENDPOINTS.getServer;
    const checked = assertRef(ref, 'server reference', endpoint.name);
    return this.#cached(
      'server',
      checked,
      options,
      (o) =>
        this.version === 'v3' && !isSnowflake(checked)
          ? this.#v3ByCode('server', checked, o)
          : this.#call(
              endpoint,
              { ref: checked },
              undefined,
              this.version === 'v3' ? v3ServerSchema : serverSchema,
              o,
            ),
      (server) => server.id,
    );
  }

  async getServerComments(serverId: string, options?: RequestOptions): Promise<DirectoryComment[]> {
    const endpoint = ENDPOINTS.getServerComments;
    const id = assertSnowflake(serverId, 'server ID', endpoint.name);
    if (this.version === 'v3') return this.#v3Comments(`resource = "${id}"`, options);
    return this.#call(endpoint, { id }, undefined, commentListSchema, options);
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

  /** A user's profile (v3: with their bots and servers). */
  async getProfile(userId: string, options?: RequestOptions): Promise<DirectoryProfile> {
    const endpoint = ENDPOINTS.getProfile;
    const id = assertSnowflake(userId, 'user ID', endpoint.name);
    return this.#cached(
      'profile',
      id,
      options,
      (o) =>
        this.#call(endpoint, { id }, undefined, this.version === 'v3' ? v3ProfileSchema : profileSchema, o),
      (profile) => profile.id,
    );
  }

  /**
   * What a user wrote. v3 has no route for it: the search's comments index, by author (the
   * comments cannot be told apart by what they are about there, so they come as `other`).
   */
  async getProfileComments(userId: string, options?: RequestOptions): Promise<ProfileComments> {
    const endpoint = ENDPOINTS.getProfileComments;
    const id = assertSnowflake(userId, 'user ID', endpoint.name);
    if (this.version === 'v3') {
      return { bots: [], servers: [], other: await this.#v3Comments(`author = "${id}"`, options) };
    }
    return this.#call(endpoint, { id }, undefined, profileCommentsSchema, options);
  }

  /** A developer's bots (v3: as the user's profile lists them). */
  async getDeveloperBots(userId: string, options?: RequestOptions): Promise<BotReference[]> {
    const endpoint = ENDPOINTS.getDeveloperBots;
    const id = assertSnowflake(userId, 'user ID', endpoint.name);
    return this.#cached(
      'developerBots',
      id,
      options,
      (o) =>
        this.#call(
          endpoint,
          { id },
          undefined,
          this.version === 'v3' ? v3DeveloperBotsSchema : botReferenceListSchema,
          o,
        ),
      () => id,
    );
  }

  // ---- search (v3) ----

  /**
   * The directory's search (v3 only): bots or servers whose name or descriptions match `query`,
   * best first, at most `limit` (1 to 100, default 10).
   */
  async search(
    kind: 'bot' | 'server',
    query: string,
    options: RequestOptions & { limit?: number } = {},
  ): Promise<SearchHit[]> {
    const search = this.#searchService('search');
    const q = typeof query === 'string' ? query.trim() : '';
    if (q.length === 0 || q.length > 200) {
      throw new InvalidArgumentError('the search needs 1 to 200 characters', { method: 'search' });
    }
    const limit = options.limit ?? 10;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) {
      throw new InvalidArgumentError('limit must be a whole number from 1 to 100', { method: 'search' });
    }
    return search.search(
      kind === 'bot' ? 'bots' : 'servers',
      { q, limit },
      kind === 'bot' ? v3BotHitsSchema : v3ServerHitsSchema,
      this.#searchRequest(options),
    );
  }

  /** The key of the directory's search service (v3 only; GET /v3/search-key). */
  async searchKey(options?: RequestOptions): Promise<string> {
    return this.#call(ENDPOINTS.searchKey, {}, undefined, v3SearchKeySchema, options);
  }

  #searchService(method: string): SearchService {
    if (!this.#search) {
      throw new InvalidArgumentError(`${method} exists only in API v3`, { method });
    }
    return this.#search;
  }

  #searchRequest(options: RequestOptions | undefined) {
    const started = this.#now();
    const deadline =
      options?.deadline instanceof Date
        ? options.deadline.getTime()
        : (options?.deadline ?? (this.#maxWaitMs === undefined ? undefined : started + this.#maxWaitMs));
    return { priority: options?.priority ?? 'interactive', deadline, signal: options?.signal };
  }

  /** The comments index, newest first (as boticordjava asks it): at most 100. */
  #v3Comments(filter: string, options: RequestOptions | undefined): Promise<DirectoryComment[]> {
    const body: SearchBody = { q: '', limit: 100, filter: [filter], sort: ['created:desc'] };
    return this.#searchService('comments').search(
      'comments',
      body,
      v3CommentHitsSchema,
      this.#searchRequest(options),
    );
  }

  /**
   * A bot or server by short code on v3, which looks up by ID only: the search for the code, then
   * the records of its first three hits, and the one whose short link is that code. Otherwise a
   * NotFoundError that says so: never the card of a record that merely matched.
   */
  async #v3ByCode<K extends 'bot' | 'server'>(
    kind: K,
    code: string,
    options: RequestOptions,
  ): Promise<K extends 'bot' ? DirectoryBot : DirectoryServer> {
    type Found = K extends 'bot' ? DirectoryBot : DirectoryServer;
    const method = kind === 'bot' ? 'getBot' : 'getServer';
    if (this.#token === undefined) {
      throw new InvalidArgumentError(
        `API v3 looks ${kind}s up by ID; finding the short code ${JSON.stringify(code)} needs the search, which needs DIRECTORY_TOKEN`,
        { method },
      );
    }
    const hits = await this.search(kind, code, { ...options, limit: 5 });
    const wanted = code.toLowerCase();
    for (const hit of hits.slice(0, 3)) {
      const record = (
        kind === 'bot' ? await this.getBot(hit.id, options) : await this.getServer(hit.id, options)
      ) as Found;
      if (record.shortCode?.toLowerCase() === wanted) return record;
    }
    throw new NotFoundError(
      `no ${kind} has the short code ${JSON.stringify(code)}: API v3 looks ${kind}s up by ID, and its search found none with it`,
      { method },
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
    await Promise.all([this.#transport.close(), this.#searchTransport?.close()]);
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
    const request = requestOf(endpoint, this.version);
    const path = `/${this.version}${buildPath(request.path, params)}`;
    const route = routeOf(endpoint, this.version);
    const context = { method: endpoint.name, route };
    const started = this.#now();
    const deadline =
      options.deadline instanceof Date
        ? options.deadline.getTime()
        : (options.deadline ?? (this.#maxWaitMs === undefined ? undefined : started + this.#maxWaitMs));
    // A span for the call, its rate limiter's wait one inside it: nothing unless tracing is on.
    const attributes = { 'http.request.method': request.method, 'url.template': request.path };
    return inSpan(`directory ${endpoint.name}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      let response: TransportResponse;
      try {
        response = await this.#transport.request({
          method: request.method,
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
      if (this.version !== 'v3') return parseAnswer(response, context, schema, this.#token);
      try {
        return parseV3Answer(
          response,
          context,
          typeof schema === 'function' ? schema(response.receivedAt) : schema,
          this.#token,
        );
      } catch (err) {
        // Code 1 with another status than 429 (which the transport honours already): everyone waits.
        if (err instanceof RateLimitedError && response.status !== 429 && err.retryAfterMs !== undefined) {
          this.#limiter?.penalize('global', this.#now() + err.retryAfterMs);
        }
        throw err;
      }
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
