/**
 * The listener the directory delivers its webhooks to: `POST /hooks/directory/<guild id>` on
 * WEBHOOK_PORT (its own port: the operations endpoint stays private), over plain node:http. It
 * takes v2's deliveries and v3's HTTPS notifications alike (told apart by the body's shape), both
 * authenticated by the server's key in `X-Hook-Key` (a custom header on v3): never by v3's
 * `X-Boticord-Token`, which is the sender's own API key and is not read at all.
 *
 * A delivery is checked in the order that costs least first, and every refusal has an empty body
 * (no detail for whoever probes):
 *
 *   other path 404 · other method 405 (Allow: POST)
 *   not JSON 415 · Content-Length over 64 KB 413 (the body is never read: the connection closes)
 *   no webhook for this server, or a missing or wrong X-Hook-Key: 401 both (the same answer, so
 *     nobody can list which servers use a webhook)
 *   the source over its refusals 429 · the server over its deliveries 429
 *   a body over 64 KB after all 413 (reading stops there) · not an event 400
 *   a body that does not arrive whole (the client gone, or too slow: the listener answers 408)
 *   the store unavailable 503 (the directory may try again)
 *
 * An event is answered 200 once it is stored (store/webhooks.ts): a delivery repeated is stored
 * once. Announcing it comes after (announcer.ts), so a crash in between loses nothing.
 *
 * Limits (`WEBHOOK_RATE_LIMIT` per window for each): the key is checked first, in memory (a salted
 * HMAC, cheap); a delivery with the right key counts against its server's limit, whatever address
 * it comes from, and anything refused counts against its source address (the client's, behind a
 * proxy with TRUST_PROXY: http/client-address.ts; an IPv6 one by its /64), over every server. So a flood of wrong keys
 * from one address (a proxy's, even) is cut off and never holds the directory's deliveries back,
 * and changing the server id in the URL gets a source no further. A server not known in memory
 * (configured by another process) is looked up in the store at most once per LOOKUP_EVERY_MS, and
 * only for a source within its limit: guessed ids never reach the store one request at a time.
 */

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { looksLikeNotifyWebhook } from '../../directory/v3/notify.js';
import { clientAddress, isTrustedProxy, limitedSource, type TrustProxy } from '../../http/client-address.js';
import { guardedServer, type Listening, listen, listenProblem } from '../../http/listener.js';
import { errorLine } from '../../log/error-line.js';
import type { Logger } from '../../log/logger.js';
import { logThrottle } from '../../log/throttle.js';
import type { KeyCheck } from '../../store/webhooks.js';
import { annotate, inSpan, SpanKind } from '../../trace/spans.js';
import { parseNotifyDelivery } from '../notifications/intake.js';
import { type DirectoryEvent, type Parsed, parseDelivery } from './events.js';

/** The largest body taken: the directory's events are a few hundred bytes. */
export const MAX_BODY_BYTES = 64 * 1024;
export const WEBHOOK_PATH_PREFIX = '/hooks/directory/';
const ROUTE = new RegExp(`^${WEBHOOK_PATH_PREFIX}(\\d{17,20})/?$`);
/** How many windows a limiter keeps at most; past it, new ones are refused (never an open one dropped). */
const MAX_WINDOWS = 50_000;
/** A server not known in memory, or a key that does not match there, is looked up at most this often. */
export const LOOKUP_EVERY_MS = 5_000;
/** Deliveries the store could not take are told at most this often, with their number. */
export const STORE_WARN_EVERY_MS = 10_000;

export type DeliveryOutcome =
  | 'stored'
  | 'duplicate'
  | 'ignored'
  | 'not-found'
  | 'method'
  /** The source address over its refusals (WEBHOOK_RATE_LIMIT): a flood, whatever the server. */
  | 'limited'
  /** The right key, its server over WEBHOOK_RATE_LIMIT deliveries in this process. */
  | 'server-limited'
  /** The right key, its server over the store's limits (WEBHOOK_SERVER_PENDING, WEBHOOK_SERVER_RATE). */
  | 'server-full'
  | 'media-type'
  | 'too-large'
  | 'unknown-server'
  | 'bad-key'
  | 'invalid'
  /** The body did not arrive whole: the client went away, or was cut for being too slow. */
  | 'incomplete'
  | 'unavailable';

export interface WebhookReceiverOptions {
  /** 0 picks a free port (tests). */
  port: number;
  /** Default 0.0.0.0: the directory reaches it from outside. */
  host?: string;
  webhooks: {
    /** Reads every server's key into memory; done before listening. */
    loadKeys(): Promise<void>;
    /** The key against memory only. */
    knows(guildId: string, key: string): KeyCheck['kind'];
    /** The key against the store (memory learns what it found). */
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
  /** Deliveries with the right key per server, and refused ones per source address, per window. */
  rateLimit: { max: number; windowMs: number };
  /** TRUST_PROXY: whose forwarded addresses name the source; undefined: the socket's address. */
  trustProxy?: TrustProxy;
  now?: () => number;
  /** An event was stored (not a duplicate): announce it soon. */
  onStored?: (guildId: string, event: DirectoryEvent) => void;
  /** The bot's own id: v3 notifications of the bot itself (its page) are not a server's. */
  botId?: string | undefined;
  /** Every delivery, answered: for the metrics. */
  onDelivery?: (outcome: DeliveryOutcome, seconds: number) => void;
}

export type WebhookReceiver = Listening;

/** How a delivery was answered, for the answer, the log line and the metrics. */
type Handled = { outcome: DeliveryOutcome; retryAfter?: number; guildId?: string };

/** Each outcome's answer (docs/webhooks.md lists them for operators: a test holds the two equal). */
export const STATUS: Record<DeliveryOutcome, number> = {
  stored: 200,
  duplicate: 200,
  ignored: 200,
  'not-found': 404,
  method: 405,
  limited: 429,
  'server-limited': 429,
  'server-full': 429,
  'media-type': 415,
  'too-large': 413,
  'unknown-server': 401,
  'bad-key': 401,
  invalid: 400,
  // What the listener answers a body cut for being too slow (http/listener.ts); a client that went
  // away is sent nothing.
  incomplete: 408,
  unavailable: 503,
};

/**
 * Fixed windows per key, forgotten once over. A Map keeps insertion order and a window is inserted
 * again when it starts over, so the oldest windows come first: the closed ones are dropped from the
 * front, and a table still full of open windows refuses a new key rather than forget one.
 */
export class WindowLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();
  readonly #max: number;
  readonly #windowMs: number;
  readonly #maxWindows: number;

  constructor(limit: { max: number; windowMs: number }, maxWindows = MAX_WINDOWS) {
    this.#max = limit.max;
    this.#windowMs = limit.windowMs;
    this.#maxWindows = maxWindows;
  }

  /** Seconds to wait when over the limit (or the table is full), else 0 (and this one is counted). */
  take(key: string, now: number): number {
    let window = this.#windows.get(key);
    if (!window || now - window.start >= this.#windowMs) {
      this.#windows.delete(key);
      if (this.#windows.size >= this.#maxWindows) this.#dropClosed(now);
      if (this.#windows.size >= this.#maxWindows) return this.#wait(this.#windows.values().next().value, now);
      window = { start: now, count: 0 };
      this.#windows.set(key, window);
    }
    if (window.count >= this.#max) return this.#wait(window, now);
    window.count += 1;
    return 0;
  }

  /** Takes back one counted by `take` in the window still open (a charge that proved undue). */
  giveBack(key: string, now: number): void {
    const window = this.#windows.get(key);
    if (window && now - window.start < this.#windowMs && window.count > 0) window.count -= 1;
  }

  #dropClosed(now: number): void {
    for (const [key, window] of this.#windows) {
      if (now - window.start < this.#windowMs) break;
      this.#windows.delete(key);
    }
  }

  #wait(window: { start: number } | undefined, now: number): number {
    return Math.max(1, Math.ceil(((window?.start ?? now) + this.#windowMs - now) / 1000));
  }
}

/** Which server ids were looked up in the store lately: each at most once per LOOKUP_EVERY_MS. */
class Lookups {
  readonly #at = new Map<string, number>();

  /** True (and remembered) when `guildId` may be looked up now. */
  due(guildId: string, now: number): boolean {
    const last = this.#at.get(guildId);
    if (last !== undefined && now - last < LOOKUP_EVERY_MS) return false;
    this.#at.delete(guildId);
    for (const [id, at] of this.#at) {
      if (now - at < LOOKUP_EVERY_MS) break;
      this.#at.delete(id);
    }
    if (this.#at.size >= MAX_WINDOWS) return false;
    this.#at.set(guildId, now);
    return true;
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

/** What one receiver keeps from delivery to delivery. */
interface Receiving {
  options: WebhookReceiverOptions;
  now: () => number;
  log: Logger;
  /** Refusals per source address (an IPv6 one by its /64), over every server. */
  sources: WindowLimiter;
  /** Deliveries with the right key per server. */
  servers: WindowLimiter;
  lookups: Lookups;
  /** Deliveries not stored since the last line about them, and whether a line may be written now. */
  unstored: { count: number; mayWarn: () => boolean };
}

/** The server id of `POST /hooks/directory/<guild id>` (query and fragment aside), else undefined. */
function guildOf(url: string): string | undefined {
  const q = url.search(/[?#]/);
  return ROUTE.exec(q === -1 ? url : url.slice(0, q))?.[1];
}

/** A refusal, counted against its source: 429 once the source is over its limit. */
type Refuse = (outcome: DeliveryOutcome) => Handled;

function refuserFor(r: Receiving, source: string, guildId: string): Refuse {
  return (outcome) => {
    const retryAfter = r.sources.take(source, r.now());
    return retryAfter > 0 ? { outcome: 'limited', retryAfter, guildId } : { outcome, guildId };
  };
}

/**
 * The delivery's X-Hook-Key for its server, in memory first, then in the store (seldom, and only
 * for a source within its limit), and the server's own limit. Undefined: the delivery may be read.
 */
async function authenticate(
  r: Receiving,
  req: IncomingMessage,
  guildId: string,
  source: string,
  refuse: Refuse,
): Promise<Handled | undefined> {
  const header = req.headers['x-hook-key'];
  const key = typeof header === 'string' ? header : '';
  const refused = (kind: KeyCheck['kind']) => refuse(kind === 'unknown' ? 'unknown-server' : 'bad-key');
  const inMemory = key === '' ? 'wrong' : r.options.webhooks.knows(guildId, key);
  let checked: KeyCheck | undefined;
  if (inMemory !== 'ok') {
    // Not known in memory or not matching there: another process may have set it up or given it
    // a new key since. The store is asked, seldom, and only for a source within its limit. The
    // source is charged before the look-up, so that look-ups in flight together cannot pass its
    // limit, and given the charge back if the key proves right.
    if (key === '') return refused(inMemory);
    const retryAfter = r.sources.take(source, r.now());
    if (retryAfter > 0) return { outcome: 'limited', retryAfter, guildId };
    const outcomeOf = (kind: KeyCheck['kind']): Handled => ({
      outcome: kind === 'unknown' ? 'unknown-server' : 'bad-key',
      guildId,
    });
    if (!r.lookups.due(guildId, r.now())) return outcomeOf(inMemory);
    checked = await r.options.webhooks.check(guildId, key);
    if (checked.kind !== 'ok') return outcomeOf(checked.kind);
    r.sources.giveBack(source, r.now());
  }
  const retryAfter = r.servers.take(guildId, r.now());
  if (retryAfter > 0) return { outcome: 'server-limited', retryAfter, guildId };
  // The store has the last word: a webhook turned off or re-keyed by another process.
  checked ??= await r.options.webhooks.check(guildId, key);
  if (checked.kind !== 'ok') return refused(checked.kind);
  return undefined;
}

/** The body as JSON (at most MAX_BODY_BYTES read), or why it is refused. */
async function readJson(req: IncomingMessage): Promise<{ body: unknown } | { refused: DeliveryOutcome }> {
  try {
    return { body: JSON.parse((await readBody(req)).toString('utf8')) };
  } catch (err) {
    if (err instanceof TooLarge) return { refused: 'too-large' };
    // Reading stopped before the body's end: the client went away, or the listener cut it for
    // dripping past its deadline. Not a body we could judge, nor a fault of the store.
    return { refused: req.complete ? 'invalid' : 'incomplete' };
  }
}

/** A v3 notification (told apart by its shape) or a v2 delivery, for the server of the URL. */
function parseBody(body: unknown, guildId: string, receivedAt: number, botId: string | undefined): Parsed {
  return looksLikeNotifyWebhook(body)
    ? parseNotifyDelivery(body, guildId, receivedAt, botId)
    : parseDelivery(body, guildId, receivedAt);
}

/** The event into the store (once, however often it is delivered); stored, it is to be announced. */
async function store(
  r: Receiving,
  guildId: string,
  parsed: Extract<Parsed, { kind: 'event' }>,
  receivedAt: number,
): Promise<Handled> {
  const stored = await r.options.webhooks.enqueue({
    id: parsed.id,
    guildId,
    type: parsed.type,
    payload: JSON.stringify(parsed.event),
    receivedAt,
  });
  // The server is over its limits (WEBHOOK_SERVER_PENDING, WEBHOOK_SERVER_RATE): nothing stored.
  if (stored === 'full') return { outcome: 'server-full', guildId };
  if (stored === 'stored') r.options.onStored?.(guildId, parsed.event);
  return { outcome: stored, guildId };
}

/** One delivery, checked in the order that costs least first (the file's opening lists it). */
async function handle(r: Receiving, req: IncomingMessage): Promise<Handled> {
  const guildId = guildOf(req.url ?? '/');
  if (guildId === undefined) return { outcome: 'not-found' };
  if (req.method !== 'POST') return { outcome: 'method' };
  // An IPv6 source by its /64: one subscriber's whole block shares one limit.
  const source = limitedSource(clientAddress(req.socket.remoteAddress, req.headers, r.options.trustProxy));
  const refuse = refuserFor(r, source, guildId);
  if (!isJson(req.headers['content-type'])) return refuse('media-type');
  const length = Number(req.headers['content-length']);
  if (Number.isFinite(length) && length > MAX_BODY_BYTES) return refuse('too-large');
  const unauthenticated = await authenticate(r, req, guildId, source, refuse);
  if (unauthenticated) return unauthenticated;
  const read = await readJson(req);
  if ('refused' in read) return refuse(read.refused);
  const receivedAt = r.now();
  const parsed = parseBody(read.body, guildId, receivedAt, r.options.botId);
  if (parsed.kind === 'invalid') return refuse('invalid');
  if (parsed.kind === 'ignored') {
    r.log.debug(
      { guildId, type: parsed.type, reason: parsed.reason },
      'a webhook event not for this bot; ignored',
    );
    return { outcome: 'ignored', guildId };
  }
  return store(r, guildId, parsed, receivedAt);
}

/**
 * The store's calls (check, enqueue) are what throw in handle: a body that did not arrive whole is
 * answered there, as 'incomplete'. A store that is down fails every delivery: said once per
 * STORE_WARN_EVERY_MS with how many, not once each.
 */
function unavailable(r: Receiving, err: unknown): Handled {
  r.unstored.count += 1;
  if (r.unstored.mayWarn()) {
    r.log.warn(
      { error: errorLine(err), deliveries: r.unstored.count },
      'a webhook delivery could not be stored; answered 503',
    );
    r.unstored.count = 0;
  }
  return { outcome: 'unavailable', retryAfter: 5 };
}

/** The answer: its status, no body, and the connection closed when the body was not read whole. */
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

/** One delivery, from its request to its answer, its log line and its metrics; in a trace of its own. */
function deliver(r: Receiving, req: IncomingMessage, res: ServerResponse): void {
  const { log } = r;
  const started = performance.now();
  res.on('error', (err) => log.debug({ error: errorLine(err) }, 'webhook response failed'));
  req.on('error', (err) => log.debug({ error: errorLine(err) }, 'webhook request failed'));
  // A trace a delivery: the event stored keeps it, and its announcement links back to it.
  inSpan('webhook delivery', { kind: SpanKind.SERVER, root: true }, async () => {
    const handled = await handle(r, req);
    annotate({
      'webhook.outcome': handled.outcome,
      ...(handled.guildId ? { 'discord.guild.id': handled.guildId } : {}),
    });
    return handled;
  })
    .catch((err: unknown) => unavailable(r, err))
    .then(({ outcome, retryAfter, guildId }: Handled) => {
      answer(req, res, outcome, retryAfter);
      const level = outcome === 'stored' || outcome === 'duplicate' ? 'info' : 'debug';
      log[level]({ guildId, outcome, status: STATUS[outcome] }, 'webhook delivery');
      r.options.onDelivery?.(outcome, (performance.now() - started) / 1000);
    })
    .catch((err: unknown) => {
      log.error({ error: errorLine(err) }, 'webhook answer failed');
      res.destroy();
    });
}

export async function startWebhookReceiver(options: WebhookReceiverOptions): Promise<WebhookReceiver> {
  const host = options.host ?? '0.0.0.0';
  const log = options.logger.child({ component: 'webhook-receiver' });
  const receiving: Receiving = {
    options,
    now: options.now ?? Date.now,
    log,
    sources: new WindowLimiter(options.rateLimit),
    servers: new WindowLimiter(options.rateLimit),
    lookups: new Lookups(),
    unstored: { count: 0, mayWarn: logThrottle(STORE_WARN_EVERY_MS) },
  };
  // A trusted proxy's connections carry many clients: the bound per client is the proxy's to keep.
  const server: Server = guardedServer(log, 'webhook', (req, res) => deliver(receiving, req, res), {
    bounded: (address) => !isTrustedProxy(address, options.trustProxy),
  });
  await options.webhooks.loadKeys();
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
