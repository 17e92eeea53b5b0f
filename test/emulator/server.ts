// A stateful stand-in for the directory HTTP API (v1, v2 and v3 with its search service) on
// 127.0.0.1, built on node:http.
// Pipeline per request: record -> read body -> fault rules -> route -> rate limit -> handler.

import { createServer, type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import { LOCALHOST } from '../support/local.js';
import { fastifyError, type Reply } from './body.js';
import { driftValue, type FaultRule, Faults } from './faults.js';
import { NOT_UPDATED_FAULT_MESSAGE } from './messages.js';
import {
  RateLimiter,
  type RateLimitSettings,
  type RateLimitVerdict,
  rateLimitBody,
  rateLimitHeaders,
} from './rate-limit.js';
import { matchRoute, type NextUpStyle, type RouteMatch } from './routes.js';
import {
  createSeedState,
  type EmulatorState,
  resetState,
  type SearchDocument,
  type V3IndexName,
  type V3StatsRecord,
} from './state.js';
import { type V3HookDelivery, V3HookSender, type V3HookTarget } from './v3/hooks.js';
import {
  type CommentNotifyType,
  type NotifyEvent,
  type NotifyFrame,
  NotifyGateway,
  type NotifySocketInfo,
} from './v3/notifications.js';
import {
  issueSearchKey,
  isV3SearchPath,
  matchV3Route,
  rotateSearchKeys,
  type V3Match,
  v3Error,
  v3ErrorForStatus,
  v3RateKey,
} from './v3/routes.js';
import { meiliError } from './v3/search.js';
import { WebhookSender } from './webhooks.js';

export const DEFAULT_COOLDOWN_MS = 14_400_000;
/** Fastify's default body limit. */
const BODY_LIMIT_BYTES = 1024 * 1024;
const JSON_TYPE = 'application/json; charset=utf-8';

export interface EmulatorOptions {
  /** Default 0: an ephemeral port. */
  port?: number;
  /** Time between two ups of one server; default 4 h. */
  cooldownMs?: number;
  /** How timeToNextUpInMs is written; default 'epoch' (like the published example). */
  nextUpStyle?: NextUpStyle;
  /**
   * Default: global 5 per 5000 ms, plus 1 per 2000 ms for POST /server and POST /stats (v1/v2);
   * v3: 25 per 10 s per key (per address without one), then the key is blocked 10 s.
   * `false` disables all; a bucket set to `false` is disabled, an absent one takes its default.
   */
  rateLimits?: RateLimitSettings;
  /** Default true: answers carry x-ratelimit-*, 429s also retry-after. false: bare 429s. */
  rateLimitHeaders?: boolean;
  /** Clock for cooldowns, rate limits, link dates and `at`; default Date.now. */
  now?: () => number;
  /** Called once per answered request (for the CLI's request log). */
  log?: (request: RecordedRequest) => void;
}

export interface RecordedRequest {
  method: string;
  /** Raw path as received, including the query. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Status answered; 0 while pending or when the socket was dropped. */
  status: number;
  at: number;
}

export interface Emulator {
  /** 'http://127.0.0.1:PORT', without a version segment. */
  url: string;
  port: number;
  /** Every request received, in order of arrival (404s and 429s included). */
  requests: RecordedRequest[];
  state: EmulatorState;
  faults: Faults;
  /** The servers' webhooks: a successful up sends `new_server_bump` to its server's URL. */
  webhooks: WebhookSender;
  /** API v3 (routes under `${url}/v3`, search under `${url}/v3/search`). */
  v3: V3Controls;
  /** Replaces the limits and clears the counters. */
  setRateLimits(r: EmulatorOptions['rateLimits']): void;
  setNextUpStyle(s: NextUpStyle): void;
  setCooldownMs(ms: number): void;
  /** Clears requests, faults and rate-limit counters and restores the seed state (in place). Settings
   * changed by the setters are kept. */
  reset(): void;
  /** Stops listening and destroys every connection, keep-alive and pending ones included. */
  close(): Promise<void>;
}

export interface V3Controls {
  /** 'http://127.0.0.1:PORT/v3': the v3 base address (the SDKs' `https://api.boticord.top/v3`). */
  url: string;
  /** 'http://127.0.0.1:PORT/v3/search': the Meilisearch host (POST {searchUrl}/indexes/{index}/search). */
  searchUrl: string;
  /** The last accepted POST /v3/bots/:id/stats of a bot (only the counts it sent; `guilds` as servers). */
  lastStats(botId: string): V3StatsRecord | undefined;
  /** The search key GET /v3/search-key gives this API key now (issued if needed). */
  searchKey(apiKey: string): string;
  /** Invalidates every search key: the next search with one gets 403 invalid_api_key. */
  rotateSearchKey(): void;
  /** Adds (or, with a seeded id, replaces) a document of a search index; cleared by reset(). */
  addSearchDocument(index: V3IndexName, doc: SearchDocument): void;

  // --- notifications (v3/notifications.ts, v3/hooks.ts; docs/directory-v3-sources.md §4) ---
  /** 'ws://127.0.0.1:PORT/websocket/': the gateway (the SDKs' `wss://gateway.boticord.top/websocket/`). */
  notifyUrl: string;
  /** Emits an event to the owners' sockets and the resource's v3 webhook; the data sent. */
  notify(event: NotifyEvent): NotifyFrame;
  /** An up on the site: the resource gains an up (expires at + 14 days), then `up_added` {upCount}. */
  upOnSite(resourceId: string, userId: string, options?: { at?: number; upCount?: number }): NotifyFrame;
  /** A review event {content, rating} (notification only: the emulator's comments stay as they are). */
  comment(
    type: CommentNotifyType,
    resourceId: string,
    userId: string,
    review: { content: string; rating: number },
    options?: { at?: number },
  ): NotifyFrame;
  /** Sends the last `count` notify frames again, byte-identical, to the owners' sockets open now. */
  replay(count?: number): NotifyFrame[];
  /** A raw frame (a Buffer as a binary frame) to every authenticated socket, or that key's; how many got it. */
  sendRaw(frame: string | Buffer, apiKey?: string): number;
  /** Drops every socket: 'terminate' (default, 1006 at the client) or 'close' (1001). */
  dropSockets(how?: 'close' | 'terminate'): void;
  /** Removes the key from state.v3.keys (REST too) and terminates its sockets. */
  revokeKey(apiKey: string): void;
  restoreKey(apiKey: string): void;
  /** Default 90 000 ms; applies to open sockets at once (measured from their last ping or open). */
  setPingTimeout(ms: number): void;
  /** Default 10 000 ms; for sockets opened afterwards. */
  setAuthTimeout(ms: number): void;
  /** The open sockets. */
  sockets(): NotifySocketInfo[];
  /** Upgrade requests seen since start / reset (refused ones included). */
  readonly connectionAttempts: number;
  /** Every event emitted, in order (replays not repeated). */
  notifications: NotifyFrame[];
  /** The resource's v3 webhook (null removes it): each event POSTed once, never retried. */
  setWebhook(resourceId: string, target: V3HookTarget | null): void;
  /** Every v3 webhook post, in order of completion (status 0: not reached). */
  hookDeliveries: V3HookDelivery[];
  /** Waits for the v3 webhook posts on their way. */
  hooksSettled(): Promise<void>;
}

type Resolved = { ok: true; match: RouteMatch; version: 1 | 2 } | { ok: false; reply: Reply };

function notFound(method: string, url: string): Reply {
  return fastifyError(404, 'Not Found', `Route ${method}:${url} not found`);
}

function pathnameOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** Decodes each raw segment on its own, so '%2F' never splits a segment and '..' is literal. */
function decodeSegments(pathname: string): string[] | null {
  const decoded: string[] = [];
  for (const raw of pathname.split('/').slice(1)) {
    try {
      decoded.push(decodeURIComponent(raw));
    } catch {
      return null;
    }
  }
  return decoded;
}

/** The API version a path is under, or null. */
function versionOf(url: string): 1 | 2 | 3 | null {
  const m = /^\/v([123])(?=\/|$)/.exec(pathnameOf(url));
  return m === null ? null : (Number(m[1]) as 1 | 2 | 3);
}

type ResolvedV3 = { ok: true; match: V3Match } | { ok: false; reply: Reply };

/** Anything under /v3 that is not a v3 route: 404 with code 2 NotFound. */
function resolveV3(method: string, url: string): ResolvedV3 {
  const decoded = decodeSegments(pathnameOf(url));
  if (decoded === null) return { ok: false, reply: v3Error(400, 'BadRequest') };
  const match = matchV3Route(method === 'HEAD' ? 'GET' : method, decoded.slice(1));
  return match === null ? { ok: false, reply: v3Error(404, 'NotFound') } : { ok: true, match };
}

function resolveRoute(method: string, url: string): Resolved {
  const pathname = pathnameOf(url);
  if (!pathname.startsWith('/')) return { ok: false, reply: notFound(method, url) };
  const decoded = decodeSegments(pathname);
  if (decoded === null) {
    return { ok: false, reply: fastifyError(400, 'Bad Request', `'${url}' is not a valid url component`) };
  }
  const [first, ...rest] = decoded;
  const version = first === 'v1' ? 1 : first === 'v2' ? 2 : null;
  if (version !== null && /^v\d+$/.test(rest[0] ?? '')) {
    // A client whose base address already ends in the version; "not found" alone would not say so.
    const hint = `the address has the version twice: set DIRECTORY_API_URL without /${first}`;
    return { ok: false, reply: fastifyError(404, 'Not Found', `Route ${method}:${url} not found: ${hint}`) };
  }
  const match = version === null ? null : matchRoute(method === 'HEAD' ? 'GET' : method, version, rest);
  if (match === null || version === null) return { ok: false, reply: notFound(method, url) };
  return { ok: true, match, version };
}

/** The path a fault rule sees: the raw pathname after /v1, /v2 or /v3, without the query. */
function faultPath(url: string): string {
  const pathname = pathnameOf(url);
  const m = /^\/v[123](?=\/|$)/.exec(pathname);
  return m === null ? pathname : pathname.slice(m[0].length) || '/';
}

/** A v3 error whose message a fault rule names. */
function withV3Message(reply: Reply, message: string): Reply {
  const body = reply.body as { errors: { code: number; message: string }[] };
  return { ...reply, body: { ...body, errors: body.errors.map((e) => ({ ...e, message })) } };
}

function htmlPage(status: number): string {
  const title = `${status} ${STATUS_CODES[status] ?? 'Error'}`;
  return (
    `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n` +
    '<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n'
  );
}

async function readBody(req: IncomingMessage): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buf.length;
    // Keep draining past the limit so a 413 can still be written on the connection.
    if (size <= BODY_LIMIT_BYTES) chunks.push(buf);
  }
  return size > BODY_LIMIT_BYTES ? null : Buffer.concat(chunks).toString('utf8');
}

export async function startEmulator(opts: EmulatorOptions = {}): Promise<Emulator> {
  const now = opts.now ?? Date.now;
  let cooldownMs = opts.cooldownMs ?? DEFAULT_COOLDOWN_MS;
  let nextUpStyle: NextUpStyle = opts.nextUpStyle ?? 'epoch';
  const withHeaders = opts.rateLimitHeaders ?? true;
  const state = createSeedState(now());
  const faults = new Faults();
  const limiter = new RateLimiter(opts.rateLimits, now);
  const requests: RecordedRequest[] = [];
  const webhooks = new WebhookSender(now);
  const hooks = new V3HookSender(now);
  const gateway = new NotifyGateway(state, now, hooks);
  const pendingDelays = new Set<() => void>();
  let closed = false;

  /** Resolves true after `ms`, or false at once when the emulator closes first. */
  function delay(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const cancel = (): void => {
        clearTimeout(timer);
        pendingDelays.delete(cancel);
        resolve(false);
      };
      const timer = setTimeout(() => {
        pendingDelays.delete(cancel);
        resolve(true);
      }, ms);
      pendingDelays.add(cancel);
    });
  }

  function write(
    res: ServerResponse,
    record: RecordedRequest,
    status: number,
    body: string,
    contentType: string,
    headers: Record<string, string> = {},
  ): void {
    record.status = status;
    if (res.destroyed || res.headersSent) return;
    res.writeHead(status, {
      ...headers,
      'content-type': contentType,
      'content-length': String(Buffer.byteLength(body)),
    });
    res.end(record.method === 'HEAD' ? undefined : body);
    opts.log?.(record);
  }

  function writeReply(res: ServerResponse, record: RecordedRequest, reply: Reply): void {
    write(res, record, reply.status, JSON.stringify(reply.body), JSON_TYPE, reply.headers);
  }

  /** v3: one bucket per API key (a search key counts for its API key), else per address. */
  function dispatchV3(req: IncomingMessage, record: RecordedRequest, limited: boolean): Reply {
    const resolved = resolveV3(record.method, record.path);
    if (!resolved.ok) return resolved.reply;
    const { route, params } = resolved.match;
    const authorization = req.headers.authorization;
    if (limited) {
      const key =
        v3RateKey(state, authorization, route.search) ?? `addr\u0000${req.socket.remoteAddress ?? ''}`;
      const verdict = limiter.hitV3(key);
      if (verdict !== null && !verdict.allowed) return v3Error(429, 'RateLimited');
    }
    return gateway.decorate(
      route.handle({
        params,
        authorization,
        contentType: req.headers['content-type'],
        rawBody: record.body,
        now: now(),
        state,
      }),
    );
  }

  /** Runs the route's handler; rate limits apply unless a fault answers in place of the service. */
  function dispatch(
    req: IncomingMessage,
    record: RecordedRequest,
    limited: boolean,
    forceNotUpdated: string | null,
  ): Reply {
    if (versionOf(record.path) === 3) return dispatchV3(req, record, limited);
    const resolved = resolveRoute(record.method, record.path);
    if (!resolved.ok) return resolved.reply;
    const { match, version } = resolved;
    let verdict: RateLimitVerdict | null = null;
    if (limited) {
      const auth = req.headers.authorization;
      const key = auth !== undefined && auth !== '' ? auth : (req.socket.remoteAddress ?? 'unknown');
      verdict = limiter.hit(key, match.route.ownLimit ? match.id : null);
      if (verdict !== null && !verdict.allowed) {
        return {
          status: 429,
          body: rateLimitBody(verdict.resetMs),
          ...(withHeaders ? { headers: rateLimitHeaders(verdict) } : {}),
        };
      }
    }
    const contentType = req.headers['content-type'];
    const reply = match.route.handle({
      version,
      params: match.params,
      authorization: req.headers.authorization,
      contentType,
      rawBody: record.body,
      now: now(),
      state,
      cooldownMs,
      nextUpStyle,
      forceNotUpdated,
    });
    if (verdict !== null && withHeaders) reply.headers = { ...rateLimitHeaders(verdict), ...reply.headers };
    return reply;
  }

  /** Answers per the fault; returns true when the request is finished, false to continue normally. */
  async function applyFault(
    rule: FaultRule,
    req: IncomingMessage,
    res: ServerResponse,
    record: RecordedRequest,
  ): Promise<boolean> {
    switch (rule.kind) {
      case 'latency':
      case 'stall':
        if (!(await delay(rule.ms))) {
          req.socket.destroy();
          return true;
        }
        return false;
      case 'not-updated':
      case 'late-answer':
        return false;
      case 'drop':
        record.status = 0;
        req.socket.destroy();
        return true;
      case 'status': {
        const message = rule.message ?? STATUS_CODES[rule.status] ?? 'Error';
        const v3 = versionOf(record.path) === 3;
        if (v3 && isV3SearchPath(pathnameOf(record.path))) {
          const type = rule.status >= 500 ? 'internal' : 'invalid_request';
          writeReply(
            res,
            record,
            meiliError(rule.status, rule.status >= 500 ? 'internal' : 'bad_request', type, message),
          );
        } else if (v3) {
          const reply = v3ErrorForStatus(rule.status);
          writeReply(res, record, rule.message === undefined ? reply : withV3Message(reply, rule.message));
        } else {
          writeReply(res, record, { status: rule.status, body: { error: { code: rule.status, message } } });
        }
        return true;
      }
      case 'html':
        write(res, record, rule.status, rule.body ?? htmlPage(rule.status), 'text/html');
        return true;
      case 'text':
        write(
          res,
          record,
          rule.status,
          rule.body ?? `${rule.status} ${STATUS_CODES[rule.status] ?? 'Error'}`,
          'text/plain; charset=utf-8',
        );
        return true;
      case 'rate-limit': {
        const retry = rule.retryAfterMs;
        const headers: Record<string, string> =
          retry === undefined ? {} : { 'retry-after': String(Math.ceil(retry / 1000)) };
        const body =
          versionOf(record.path) === 3 ? v3Error(429, 'RateLimited').body : rateLimitBody(retry ?? null);
        writeReply(res, record, { status: 429, body, headers });
        return true;
      }
      case 'invalid-json': {
        const text = JSON.stringify(dispatch(req, record, false, null).body);
        write(res, record, 200, text.slice(0, Math.max(1, Math.floor(text.length / 2))), JSON_TYPE);
        return true;
      }
      case 'drift':
        writeReply(res, record, { status: 200, body: driftValue(dispatch(req, record, false, null).body) });
        return true;
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse, record: RecordedRequest): Promise<void> {
    const body = await readBody(req);
    if (body === null) {
      writeReply(res, record, fastifyError(413, 'Payload Too Large', 'Request body is too large'));
      return;
    }
    record.body = body;
    const rule = faults.take(record.method, faultPath(record.path), body, versionOf(record.path));
    if (rule !== undefined && (await applyFault(rule, req, res, record))) return;
    if (closed) return;
    const forceNotUpdated = rule?.kind === 'not-updated' ? (rule.message ?? NOT_UPDATED_FAULT_MESSAGE) : null;
    const reply = dispatch(req, record, true, forceNotUpdated);
    if (rule?.kind === 'late-answer') {
      // Done before the answer: a client that goes away in the meantime never learns of it.
      bumpWebhook(record, reply);
      if (!(await delay(rule.ms)) || req.socket.destroyed) {
        req.socket.destroy();
        return;
      }
      writeReply(res, record, reply);
      return;
    }
    writeReply(res, record, reply);
    bumpWebhook(record, reply);
  }

  /** An up given through a service bot: the directory tells the server's webhook. */
  function bumpWebhook(record: RecordedRequest, reply: Reply): void {
    if (record.method !== 'POST' || !/^\/v[12]\/server\/?(\?|$)/.test(record.path) || reply.status !== 200)
      return;
    const body = reply.body as { upSuccessfully?: unknown; result?: { upSuccessfully?: unknown } } | null;
    if (body?.upSuccessfully !== true && body?.result?.upSuccessfully !== true) return;
    try {
      const sent = JSON.parse(record.body) as { serverID?: unknown; upUserID?: unknown };
      if (
        typeof sent.serverID === 'string' &&
        typeof sent.upUserID === 'string' &&
        webhooks.target(sent.serverID)
      ) {
        void webhooks.bump(sent.serverID, sent.upUserID);
      }
    } catch {
      // Not JSON: the up was not a success either.
    }
  }

  const server = createServer((req, res) => {
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: { ...req.headers },
      body: '',
      status: 0,
      at: now(),
    };
    requests.push(record);
    handle(req, res, record).catch((err: unknown) => {
      // A client that went away mid-body ends up here; anything else is a bug worth a 500.
      if (res.headersSent || res.destroyed || req.destroyed) return;
      const message = err instanceof Error ? err.message : String(err);
      writeReply(res, record, fastifyError(500, 'Internal Server Error', message));
    });
  });

  gateway.attach(server);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, LOCALHOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('emulator: not listening on TCP');
  const { port } = address;

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    for (const cancel of [...pendingDelays]) cancel();
    await gateway.close();
    await webhooks.settled();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  return {
    url: `http://${LOCALHOST}:${port}`,
    port,
    requests,
    state,
    faults,
    webhooks,
    v3: {
      url: `http://${LOCALHOST}:${port}/v3`,
      searchUrl: `http://${LOCALHOST}:${port}/v3/search`,
      lastStats: (botId) => state.v3.stats.get(botId),
      searchKey: (apiKey) => issueSearchKey(state, apiKey),
      rotateSearchKey: () => rotateSearchKeys(state),
      addSearchDocument: (index, doc) => {
        const docs = state.v3.documents[index];
        const at = docs.findIndex((d) => d.id === doc.id);
        if (at < 0) docs.push(doc);
        else docs[at] = doc;
      },
      notifyUrl: `ws://${LOCALHOST}:${port}/websocket/`,
      notify: (event) => gateway.notify(event),
      upOnSite: (resourceId, userId, options) => gateway.upOnSite(resourceId, userId, options),
      comment: (type, resourceId, userId, review, options) =>
        gateway.comment(type, resourceId, userId, review, options),
      replay: (count) => gateway.replay(count),
      sendRaw: (frame, apiKey) => gateway.sendRaw(frame, apiKey),
      dropSockets: (how) => gateway.dropSockets(how),
      revokeKey: (apiKey) => gateway.revokeKey(apiKey),
      restoreKey: (apiKey) => gateway.restoreKey(apiKey),
      setPingTimeout: (ms) => gateway.setPingTimeout(ms),
      setAuthTimeout: (ms) => gateway.setAuthTimeout(ms),
      sockets: () => gateway.sockets(),
      get connectionAttempts() {
        return gateway.connectionAttempts;
      },
      notifications: gateway.notifications,
      setWebhook: (resourceId, target) => hooks.set(resourceId, target),
      hookDeliveries: hooks.deliveries,
      hooksSettled: () => hooks.settled(),
    },
    setRateLimits: (r) => limiter.configure(r),
    setNextUpStyle: (s) => {
      nextUpStyle = s;
    },
    setCooldownMs: (ms) => {
      cooldownMs = ms;
    },
    reset: () => {
      requests.length = 0;
      faults.clear();
      limiter.reset();
      webhooks.reset();
      resetState(state, now());
      gateway.reset();
    },
    close,
  };
}
