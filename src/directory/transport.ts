/**
 * HTTP transport: one undici Pool per client (keep-alive), deadlines, and a retry policy of ours:
 * - GET: retried on network errors, timeouts, 429 and 5xx;
 * - POST: retried only when the directory cannot have acted on it: 429, 503, or a refused
 *   connection. A POST that may have reached the server (reset, timeout, 500) is not retried.
 * Delays honour Retry-After / x-ratelimit-reset when present, otherwise capped exponential
 * backoff with full jitter. Every attempt, first or retry, takes a slot from the rate limiter.
 *
 * Deadlines: each attempt has one timer for the whole of it, headers and every byte of the body.
 * undici's bodyTimeout is only the longest gap between two chunks, so a body dripped a byte at a
 * time never trips it. Each request has one deadline across its attempts: the caller's, or
 * when none is given, `attemptBudgetMs` from its first attempt (timeout × attempts plus the
 * longest backoffs). An attempt is cut short to end by it, and a wait before a retry that would
 * pass it (a long Retry-After) is not waited: the last answer or failure is the result at once.
 *
 * Why a loop of our own rather than undici's retry interceptor (which this file used before):
 * the interceptor wraps every request in a RetryHandler even when nothing fails, and that cost
 * was a measured third of the client's overhead over plain undici (bench scenario 1). What it
 * adds beyond a loop, resuming a partly read body with Range requests, does not apply to small
 * JSON answers, and the policy (which failures, how long, the limiter slot per attempt, the
 * deadline, cancellation) was already ours. So each attempt is a plain `Pool.request`.
 */
import { type Dispatcher, errors, Pool } from 'undici';
import { header, retryAfterFromHeaders } from '../http/retry-after.js';
import { inSpan } from '../trace/spans.js';
import { DeadlineTimer } from './deadline-timer.js';
import type { RouteBucket } from './endpoints.js';
import { UnavailableError } from './errors.js';
import type { Grant, Limiter, Priority } from './rate-limiter.js';

export interface TransportOptions {
  baseUrl: URL;
  /** The longest one attempt may take, headers and whole body. */
  timeoutMs: number;
  maxRetries: number;
  connections: number;
  limiter: Limiter | undefined;
  /** Fallback wait for a 429 that names none, per bucket. */
  fallbackRetryAfterMs: (bucket: RouteBucket | undefined) => number;
  userAgent: string;
  now: () => number;
  random: () => number;
}

export interface TransportRequest {
  method: 'GET' | 'POST';
  /** Full path after the origin, already encoded, e.g. /v2/bot/123. */
  path: string;
  /** The Authorization header, when the method takes a token. */
  authorization: string | undefined;
  body?: string;
  bucket?: RouteBucket | undefined;
  priority: Priority;
  /** When the request must be over, waits and attempts included; see attemptBudgetMs when undefined. */
  deadline: number | undefined;
  signal: AbortSignal | undefined;
  methodName: string;
  /** Called right before each attempt goes out (after the limiter), with the time. */
  onSend?: ((at: number) => void) | undefined;
}

export interface TransportResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  receivedAt: number;
  attempts: number;
}

const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 5_000;

/**
 * How long a request without a deadline of the caller may take from its first attempt: every
 * attempt at its full timeout and every backoff at its longest (40 s with the defaults, 10 s
 * timeout and 2 retries). A Retry-After that would pass it is not waited.
 */
export function attemptBudgetMs(timeoutMs: number, maxRetries: number): number {
  return timeoutMs * (maxRetries + 1) + BACKOFF_CAP_MS * maxRetries;
}
/** A response body larger than this is cut: nothing the directory sends legitimately comes near it. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

const GET_RETRY_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);
/** Errors where the request cannot have reached the server. */
const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

export function isRetryable(method: string, status: number | undefined, code: string | undefined): boolean {
  if (status !== undefined) {
    if (status === 429 || status === 503) return true;
    return method === 'GET' && (status === 500 || status === 502 || status === 504);
  }
  if (code === undefined) return false;
  return method === 'GET' ? GET_RETRY_CODES.has(code) : NEVER_SENT_CODES.has(code);
}

function ignore(): void {}

function errorCode(err: unknown): string | undefined {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

export class Transport {
  readonly #options: TransportOptions;
  readonly #pool: Pool;
  readonly #prefix: string;
  /** The headers of a request with no token and no body; undici only reads them, so one object serves all. */
  readonly #baseHeaders: Readonly<Record<string, string>>;
  /** Retries waiting for their delay: close() ends them instead of letting the pool wait. */
  readonly #waiting = new Set<(reason: unknown) => void>();
  /** A request's deadline, from its first attempt, when the caller gives none. */
  readonly #budgetMs: number;
  /** Every attempt's timer. */
  readonly #deadlines = new DeadlineTimer();

  constructor(options: TransportOptions) {
    this.#options = options;
    this.#pool = new Pool(options.baseUrl.origin, {
      connections: options.connections,
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 60_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: { timeout: Math.min(options.timeoutMs, 10_000) },
    });
    this.#budgetMs = attemptBudgetMs(options.timeoutMs, options.maxRetries);
    this.#prefix = options.baseUrl.pathname.replace(/\/+$/, '');
    this.#baseHeaders = Object.freeze({ accept: 'application/json', 'user-agent': options.userAgent });
  }

  async request(req: TransportRequest): Promise<TransportResponse> {
    const { limiter, now, maxRetries, timeoutMs } = this.#options;
    const buckets = req.bucket ? [req.bucket] : [];
    let headers = this.#baseHeaders;
    if (req.authorization !== undefined || req.body !== undefined) {
      const own: Record<string, string> = { ...headers };
      if (req.body !== undefined) own['content-type'] = 'application/json';
      if (req.authorization !== undefined) own.authorization = req.authorization;
      headers = own;
    }
    const options: Dispatcher.RequestOptions = {
      path: `${this.#prefix}${req.path}`,
      method: req.method,
      headers,
    };
    if (req.body !== undefined) options.body = req.body;
    if (req.signal) options.signal = req.signal;
    let deadline = req.deadline;

    for (let attempt = 1; ; attempt++) {
      const grant = limiter
        ? await inSpan(
            'directory rate-limit wait',
            {
              attributes: { 'directory.priority': req.priority, 'directory.bucket': req.bucket ?? 'global' },
            },
            () =>
              limiter.acquire({
                buckets,
                priority: req.priority,
                ...(deadline !== undefined ? { deadline } : {}),
                ...(req.signal ? { signal: req.signal } : {}),
                method: req.methodName,
              }),
          )
        : undefined;
      const started = now();
      deadline ??= started + this.#budgetMs;
      if (req.onSend) {
        try {
          req.onSend(started);
        } catch {
          // The caller's bookkeeping: it must not stop the request.
        }
      }
      let answer: TransportResponse | undefined;
      let failure: unknown;
      try {
        answer = await this.#attempt(options, Math.min(timeoutMs, deadline - started), grant, attempt);
      } catch (err) {
        failure = err;
      }
      const status = answer?.status;
      const retryable =
        attempt <= maxRetries &&
        !req.signal?.aborted &&
        isRetryable(req.method, status, answer ? undefined : errorCode(failure));
      const delay = retryable ? this.#retryDelay(req, deadline, attempt, answer) : undefined;
      if (delay === undefined) {
        if (!answer) throw failure;
        return answer;
      }
      await this.#wait(delay, req.signal);
    }
  }

  /**
   * One attempt within `ms`: the head and the whole body under one timer. The timer reaches undici
   * through no AbortSignal: a signal on a request costs about half again undici's own CPU for it
   * (measured, bench scenario 1). So the head is raced against the timer (a head that comes later
   * has its body dropped at once, and the pool's headersTimeout frees a connection whose head
   * never comes), then the body is (its read destroyed when the timer wins). The limiter's slot is
   * settled when the head or a failure comes: the server counted the request by then.
   */
  async #attempt(
    options: Dispatcher.RequestOptions,
    ms: number,
    grant: Grant | undefined,
    attempt: number,
  ): Promise<TransportResponse> {
    const { now } = this.#options;
    if (ms <= 0) {
      // The deadline came while waiting for the slot: nothing is sent that could not be answered.
      grant?.settle(now());
      throw new errors.HeadersTimeoutError('the request had no time left before its deadline');
    }
    const timer = new AttemptTimer(ms);
    const entry = this.#deadlines.add(ms, timer.expire);
    try {
      let response: Dispatcher.ResponseData;
      try {
        // undici's callback form: its promise form would add a promise of its own per attempt.
        response = await new Promise<Dispatcher.ResponseData>((resolve, reject) => {
          timer.fail = reject;
          this.#pool.request(options, (err, head) => {
            if (err) reject(err);
            // Too late: drop it and its connection. Destroying emits an error nobody else reads.
            else if (timer.expired) head.body.on('error', ignore).destroy();
            else resolve(head);
          });
        });
      } finally {
        timer.fail = undefined;
        grant?.settle(now());
      }
      let text: string;
      try {
        text = await timer.race(readBody(response));
      } catch (err) {
        // The deadline won: the body still arriving is dropped, and its connection with it.
        if (timer.expired) response.body.on('error', ignore).destroy();
        throw err;
      } finally {
        timer.fail = undefined;
      }
      return {
        status: response.statusCode,
        headers: response.headers,
        text,
        receivedAt: now(),
        attempts: attempt,
      };
    } finally {
      this.#deadlines.remove(entry);
    }
  }

  /** How long to wait before the next attempt, or undefined when it would pass the deadline. */
  #retryDelay(
    req: TransportRequest,
    deadline: number,
    attempt: number,
    answer: TransportResponse | undefined,
  ): number | undefined {
    const { limiter, now } = this.#options;
    const t = now();
    let delay = retryAfterFromHeaders(answer?.headers, t);
    if (answer?.status === 429) {
      delay ??= this.#options.fallbackRetryAfterMs(req.bucket);
      // Everyone sharing the bucket waits, not only this request.
      limiter?.penalize(req.bucket ?? 'global', t + delay);
    }
    if (delay === undefined) {
      const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** (attempt - 1));
      delay = Math.round(ceiling / 2 + (this.#options.random() * ceiling) / 2);
    }
    if (t + delay > deadline) return undefined;
    return delay;
  }

  /** Waits `ms`; rejects at once when the request's signal aborts or the transport closes. */
  #wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.#waiting.delete(cancel);
        signal?.removeEventListener('abort', onAbort);
      };
      const cancel = (reason: unknown): void => {
        finish();
        reject(reason);
      };
      const onAbort = (): void => cancel(signal?.reason);
      const timer = setTimeout(() => {
        finish();
        resolve();
      }, ms);
      this.#waiting.add(cancel);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  async close(): Promise<void> {
    for (const cancel of [...this.#waiting]) {
      cancel(new UnavailableError('the directory client was closed', { reason: 'network' }));
    }
    await this.#pool.close();
    this.#deadlines.clear();
  }

  destroy(): Promise<void> {
    return this.#pool.destroy();
  }
}

/**
 * An attempt's deadline as the shared timer holds it: a flag, and a way to fail what the attempt
 * awaits (the head, then the body read). Never the answer itself: the timer's set lives as long
 * as the client, and an answer reachable from it for its whole read made the client's CPU per
 * request at 64 in flight 1.4x to 1.7x plain undici's in the same process, against 1.2x without
 * (bench scenario 1: more of each request survived the young generation's collections).
 */
class AttemptTimer {
  expired = false;
  /** Rejects what the attempt awaits now; undefined between the head and the body read. */
  fail: ((err: Error) => void) | undefined;
  #reading = false;
  readonly #ms: number;

  constructor(ms: number) {
    this.#ms = ms;
  }

  readonly expire = (): void => {
    this.expired = true;
    this.fail?.(
      this.#reading
        ? new errors.BodyTimeoutError(`the whole answer did not arrive within ${this.#ms} ms`)
        : new errors.HeadersTimeoutError(`no answer within ${this.#ms} ms`),
    );
  };

  /**
   * The body read, or a BodyTimeoutError when the deadline comes first (or came already). Not an
   * async function: one promise fewer per request. The caller clears `fail` once it settles.
   */
  race(read: Promise<string>): Promise<string> {
    this.#reading = true;
    if (this.expired) {
      read.catch(ignore);
      return Promise.reject(
        new errors.BodyTimeoutError(`the whole answer did not arrive within ${this.#ms} ms`),
      );
    }
    return Promise.race([
      read,
      new Promise<never>((_, reject) => {
        this.fail = reject;
      }),
    ]);
  }
}

/**
 * The whole body as text. With a Content-Length within the cap (the usual case) undici reads it
 * in one go; otherwise it is read in chunks and cut at the cap: nothing the directory sends
 * legitimately comes near it, and a cut body fails validation as "not JSON".
 */
async function readBody(response: Dispatcher.ResponseData): Promise<string> {
  const { body } = response;
  const declared = Number(header(response.headers, 'content-length'));
  if (Number.isFinite(declared) && declared <= MAX_BODY_BYTES) return body.text();
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      body.destroy();
      break;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
