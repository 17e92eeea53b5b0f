// A stateful stand-in for the directory HTTP API (v1 and v2) on 127.0.0.1, built on node:http.
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
import { createSeedState, type EmulatorState, resetState } from './state.js';
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
   * Default: global 5 per 5000 ms, plus 1 per 2000 ms for POST /server and POST /stats.
   * `false` disables both; a bucket set to `false` is disabled, an absent one takes its default.
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

type Resolved = { ok: true; match: RouteMatch; version: 1 | 2 } | { ok: false; reply: Reply };

function notFound(method: string, url: string): Reply {
  return fastifyError(404, 'Not Found', `Route ${method}:${url} not found`);
}

/** Decodes each raw segment on its own, so '%2F' never splits a segment and '..' is literal. */
function resolveRoute(method: string, url: string): Resolved {
  const q = url.indexOf('?');
  const pathname = q < 0 ? url : url.slice(0, q);
  if (!pathname.startsWith('/')) return { ok: false, reply: notFound(method, url) };
  const decoded: string[] = [];
  for (const raw of pathname.split('/').slice(1)) {
    try {
      decoded.push(decodeURIComponent(raw));
    } catch {
      return { ok: false, reply: fastifyError(400, 'Bad Request', `'${url}' is not a valid url component`) };
    }
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

/** The path a fault rule sees: the raw pathname after /v1 or /v2, without the query. */
function faultPath(url: string): string {
  const q = url.indexOf('?');
  const pathname = q < 0 ? url : url.slice(0, q);
  const m = /^\/v[12](?=\/|$)/.exec(pathname);
  return m === null ? pathname : pathname.slice(m[0].length) || '/';
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

  /** Runs the route's handler; rate limits apply unless a fault answers in place of the service. */
  function dispatch(
    req: IncomingMessage,
    record: RecordedRequest,
    limited: boolean,
    forceNotUpdated: string | null,
  ): Reply {
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
      case 'status':
        writeReply(res, record, {
          status: rule.status,
          body: {
            error: { code: rule.status, message: rule.message ?? STATUS_CODES[rule.status] ?? 'Error' },
          },
        });
        return true;
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
        writeReply(res, record, { status: 429, body: rateLimitBody(retry ?? null), headers });
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
    const rule = faults.take(record.method, faultPath(record.path), body);
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
    },
    close,
  };
}
