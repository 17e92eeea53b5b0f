/**
 * The listener the directory delivers its webhooks to: `POST /hooks/directory/<guild id>` on
 * WEBHOOK_PORT (its own port: the operations endpoint stays private), over plain node:http.
 *
 * A delivery is checked in the order that costs least first, and every refusal has an empty body
 * (no detail for whoever probes):
 *
 *   other path 404 · other method 405 (Allow: POST) · over the per-source limit 429
 *   not JSON 415 · Content-Length over 64 KB 413 (the body is never read: the connection closes)
 *   no webhook for this server 404 · missing or wrong X-Hook-Key 401
 *   a body over 64 KB after all 413 (reading stops there) · not an event 400
 *   the store unavailable 503 (the directory may try again)
 *
 * An event is answered 200 once it is stored (store/webhooks.ts): a delivery repeated is stored
 * once. Announcing it comes after (announcer.ts), so a crash in between loses nothing.
 *
 * Per-source limit: `WEBHOOK_RATE_LIMIT` deliveries per window for each address and server: the
 * directory delivers each server's events one at a time, whoever floods one URL (or guesses keys)
 * is cut off without touching the store, and one server's flood never slows another's.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { guard, type Listening, listen, listenProblem } from '../../http/listener.js';
import { errorLine } from '../../log/error-line.js';
import type { Logger } from '../../log/logger.js';
import type { KeyCheck } from '../../store/webhooks.js';
import { type DirectoryEvent, parseDelivery } from './events.js';

/** The largest body taken: the directory's events are a few hundred bytes. */
export const MAX_BODY_BYTES = 64 * 1024;
export const WEBHOOK_PATH_PREFIX = '/hooks/directory/';
const ROUTE = new RegExp(`^${WEBHOOK_PATH_PREFIX}(\\d{17,20})/?$`);
/** How many sources the limiter remembers at most; past it, the oldest windows are dropped. */
const MAX_SOURCES = 50_000;

export type DeliveryOutcome =
  | 'stored'
  | 'duplicate'
  | 'ignored'
  | 'not-found'
  | 'method'
  | 'limited'
  | 'media-type'
  | 'too-large'
  | 'unknown-server'
  | 'bad-key'
  | 'invalid'
  | 'unavailable';

export interface WebhookReceiverOptions {
  /** 0 picks a free port (tests). */
  port: number;
  /** Default 0.0.0.0: the directory reaches it from outside. */
  host?: string;
  webhooks: {
    check(guildId: string, key: string): Promise<KeyCheck>;
    enqueue(event: {
      id: string;
      guildId: string;
      type: string;
      payload: string;
      receivedAt: number;
    }): Promise<'stored' | 'duplicate' | 'full'>;
  };
  logger: Logger;
  rateLimit: { max: number; windowMs: number };
  now?: () => number;
  /** An event was stored (not a duplicate): announce it soon. */
  onStored?: (guildId: string, event: DirectoryEvent) => void;
  /** Every delivery, answered: for the metrics. */
  onDelivery?: (outcome: DeliveryOutcome, seconds: number) => void;
}

export type WebhookReceiver = Listening;

const STATUS: Record<DeliveryOutcome, number> = {
  stored: 200,
  duplicate: 200,
  ignored: 200,
  'not-found': 404,
  method: 405,
  limited: 429,
  'media-type': 415,
  'too-large': 413,
  'unknown-server': 404,
  'bad-key': 401,
  invalid: 400,
  unavailable: 503,
};

/** Fixed windows per key, forgotten once over: a Map in insertion order is its own LRU. */
class SourceLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();
  readonly #max: number;
  readonly #windowMs: number;

  constructor(limit: { max: number; windowMs: number }) {
    this.#max = limit.max;
    this.#windowMs = limit.windowMs;
  }

  /** Seconds to wait when over the limit, else 0 (and the delivery is counted). */
  take(key: string, now: number): number {
    let window = this.#windows.get(key);
    if (!window || now - window.start >= this.#windowMs) {
      this.#windows.delete(key);
      window = { start: now, count: 0 };
      this.#windows.set(key, window);
      while (this.#windows.size > MAX_SOURCES) {
        const oldest = this.#windows.keys().next().value;
        if (oldest === undefined) break;
        this.#windows.delete(oldest);
      }
    }
    if (window.count >= this.#max)
      return Math.max(1, Math.ceil((window.start + this.#windowMs - now) / 1000));
    window.count += 1;
    return 0;
  }
}

class TooLarge extends Error {}

/** WEBHOOK_PORT or WEBHOOK_HOST cannot be listened on: the message says which to change. */
export class WebhookListenError extends Error {
  override name = 'WebhookListenError';
}

/** Reads at most MAX_BODY_BYTES; past that, stops reading and throws TooLarge. */
async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > MAX_BODY_BYTES) throw new TooLarge();
    chunks.push(buf);
  }
  return Buffer.concat(chunks, size);
}

function isJson(type: string | undefined): boolean {
  if (!type) return false;
  const media = type.split(';', 1)[0]?.trim().toLowerCase();
  return media === 'application/json';
}

export function startWebhookReceiver(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const host = options.host ?? '0.0.0.0';
  const now = options.now ?? Date.now;
  const log = options.logger.child({ component: 'webhook-receiver' });
  const limiter = new SourceLimiter(options.rateLimit);

  async function handle(
    req: IncomingMessage,
  ): Promise<{ outcome: DeliveryOutcome; retryAfter?: number; guildId?: string }> {
    const url = req.url ?? '/';
    const q = url.search(/[?#]/);
    const match = ROUTE.exec(q === -1 ? url : url.slice(0, q));
    const guildId = match?.[1];
    if (guildId === undefined) return { outcome: 'not-found' };
    if (req.method !== 'POST') return { outcome: 'method' };
    const retryAfter = limiter.take(`${req.socket.remoteAddress ?? '?'} ${guildId}`, now());
    if (retryAfter > 0) return { outcome: 'limited', retryAfter, guildId };
    if (!isJson(req.headers['content-type'])) return { outcome: 'media-type', guildId };
    const length = Number(req.headers['content-length']);
    if (Number.isFinite(length) && length > MAX_BODY_BYTES) return { outcome: 'too-large', guildId };
    const key = req.headers['x-hook-key'];
    const check = await options.webhooks.check(guildId, typeof key === 'string' ? key : '');
    if (check.kind === 'unknown') return { outcome: 'unknown-server', guildId };
    if (check.kind === 'wrong' || typeof key !== 'string' || key === '')
      return { outcome: 'bad-key', guildId };
    let body: unknown;
    try {
      body = JSON.parse((await readBody(req)).toString('utf8'));
    } catch (err) {
      return { outcome: err instanceof TooLarge ? 'too-large' : 'invalid', guildId };
    }
    const receivedAt = now();
    const parsed = parseDelivery(body, guildId, receivedAt);
    if (parsed.kind === 'invalid') return { outcome: 'invalid', guildId };
    if (parsed.kind === 'ignored') {
      log.debug(
        { guildId, type: parsed.type, reason: parsed.reason },
        'a webhook event not for this bot; ignored',
      );
      return { outcome: 'ignored', guildId };
    }
    const stored = await options.webhooks.enqueue({
      id: parsed.id,
      guildId,
      type: parsed.type,
      payload: JSON.stringify(parsed.event),
      receivedAt,
    });
    // The server is over its limits (WEBHOOK_SERVER_PENDING, WEBHOOK_SERVER_RATE): nothing stored.
    if (stored === 'full') return { outcome: 'limited', guildId };
    if (stored === 'stored') options.onStored?.(guildId, parsed.event);
    return { outcome: stored, guildId };
  }

  function answer(
    req: IncomingMessage,
    res: ServerResponse,
    outcome: DeliveryOutcome,
    retryAfter: number | undefined,
  ): void {
    if (res.headersSent || res.destroyed) return;
    const status = STATUS[outcome];
    // A body not read (or not read to its end) must not be taken for the next request.
    const close = !req.complete;
    res.writeHead(status, {
      'Content-Length': '0',
      'Cache-Control': 'no-store',
      ...(outcome === 'method' ? { Allow: 'POST' } : {}),
      ...(retryAfter ? { 'Retry-After': String(retryAfter) } : {}),
      ...(close ? { Connection: 'close' } : {}),
    });
    res.end();
    // The socket is detached from the request once the answer is out: keep it to close it.
    const socket = req.socket;
    if (close) res.once('finish', () => socket?.destroySoon());
  }

  const server: Server = createServer((req, res) => {
    const started = performance.now();
    res.on('error', (err) => log.debug({ error: errorLine(err) }, 'webhook response failed'));
    req.on('error', (err) => log.debug({ error: errorLine(err) }, 'webhook request failed'));
    handle(req)
      .catch((err: unknown) => {
        log.warn({ error: errorLine(err) }, 'a webhook delivery could not be stored; answered 503');
        return { outcome: 'unavailable' as const, retryAfter: 5 };
      })
      .then(
        ({
          outcome,
          retryAfter,
          guildId,
        }: {
          outcome: DeliveryOutcome;
          retryAfter?: number;
          guildId?: string;
        }) => {
          answer(req, res, outcome, retryAfter);
          const level = outcome === 'stored' || outcome === 'duplicate' ? 'info' : 'debug';
          log[level]({ guildId, outcome, status: STATUS[outcome] }, 'webhook delivery');
          options.onDelivery?.(outcome, (performance.now() - started) / 1000);
        },
      )
      .catch((err: unknown) => {
        log.error({ error: errorLine(err) }, 'webhook answer failed');
        res.destroy();
      });
  });
  guard(server, log, 'webhook');
  return listen(server, {
    port: options.port,
    host,
    closeGraceMs: 1_000,
    log,
    what: 'webhook receiver',
    listenError: (err) =>
      new WebhookListenError(
        `the webhook receiver could not start: ${listenProblem(err, host, options.port, { port: 'WEBHOOK_PORT', host: 'WEBHOOK_HOST' })}`,
      ),
  });
}
