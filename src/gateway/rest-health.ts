/**
 * Discord's REST as the operator sees it: two troubles, each told once when it begins (warn) and
 * once when it ends (info), never once per request. A reminder retried through a minute of 5xx
 * used to write a warning at every try (20 lines for 3 reminders), while a global 429 holding
 * every request for 20 s wrote nothing at all.
 *
 * - failing: a request of the bot's failed for its caller, every retry of @discordjs/rest spent
 *   (Discord answered 5xx each time, or could not be reached or did not answer in time). It lasts
 *   while some route's last request failed: a good answer on that route (a 2xx, or a 4xx, which
 *   is Discord answering) ends it there; a route not asked again for FORGET_MS is let go (nothing
 *   waits on it; the outboxes ask again within their lease, 30 s). Per route, because Discord can
 *   fail one route (posts) while others answer: any good answer anywhere would flap.
 * - rate-limited: Discord answered 429 with a hold worth telling, global of GLOBAL_HOLD_MS or more
 *   (a shorter one is the pace's own slip, over before anyone could act) or on a route of
 *   ROUTE_HOLD_MS or more. It lasts until the hold's end (a later 429 extends it), and GRACE_MS
 *   more in which the held requests go again.
 *
 * Two hooks, because @discordjs/rest's events do not tell both: its `rateLimited` event fires for
 * its own 50-a-second window (normal) and not at all for a route 429's wait, and its `response`
 * event clones every answer and never sees a request that could not reach Discord. So each
 * attempt's answer is read in `makeRequest` (the 429s and their Retry-After), and each request's
 * end in `queueRequest` (what its caller got), where the interaction answers sent apart
 * (answers-rest.ts) pass too.
 */
import type { InternalRequest, REST, RESTOptions } from '@discordjs/rest';
import type { Logger } from '../log/logger.js';

type MakeRequest = RESTOptions['makeRequest'];

/** What is wrong with Discord's REST now; both may be at once. */
export interface RestConditions {
  failing: boolean;
  rateLimited: boolean;
}

export interface RestHealthOptions {
  logger: Logger;
  /** After each change of the conditions (the metrics: metrics.discordRest). */
  onChange?: ((conditions: RestConditions) => void) | undefined;
  now?: () => number;
}

/** A global hold shorter than this is not told (debug only). */
export const GLOBAL_HOLD_MS = 1_000;
/** A route's hold (429 on one route or a shared resource) at least this long is told. */
export const ROUTE_HOLD_MS = 10_000;
/** A failed route not asked again for this long no longer counts as failing. */
export const FORGET_MS = 60_000;
/** After a hold ends, how long its requests have to go again before it is called over. */
export const GRACE_MS = 1_000;

/** The request's path with ids and tokens taken out: `POST /channels/:id/messages` (never a token). */
export function routeOf(method: string, path: string): string {
  const segments = path.split('?')[0]!.split('/');
  const out = segments.map((segment, i) => {
    const before = segments[i - 2];
    if (/^\d+$/.test(segment)) return ':id';
    // /webhooks/{id}/{token}, /interactions/{id}/{token}/callback.
    if ((before === 'webhooks' || before === 'interactions') && segment !== '') return ':token';
    return /^(?:[a-z][a-z0-9_-]*|@original)?$/.test(segment) ? segment : ':x';
  });
  return `${method.toUpperCase()} ${out.join('/')}`;
}

/** What a failed request met: Discord's status, or why it could not be reached (no address, no secret). */
export function failureOf(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  // HTTPError (5xx) or DiscordAPIError (4xx: Discord answered), read by shape: discord.js may
  // bring a copy of @discordjs/rest of its own, whose classes are not this one's.
  const status = (err as { status?: unknown }).status;
  if (typeof status === 'number') return status >= 500 ? String(status) : undefined;
  if (err.name === 'AbortError' || err.name === 'TimeoutError') return 'timeout';
  const cause = (err as { cause?: { code?: unknown } }).cause;
  const code = (err as { code?: unknown }).code ?? cause?.code;
  return typeof code === 'string' ? `unreachable: ${code}` : `unreachable: ${err.name}`;
}

interface FailingRoute {
  /** When its last failed request failed. */
  at: number;
}

interface Failing {
  since: number;
  routes: Map<string, FailingRoute>;
  failed: number;
}

interface Hold {
  since: number;
  until: number;
  scope: string;
  /** Requests in flight when it began, and made during it. */
  requests: number;
}

function secondsOf(ms: number): string {
  return (ms / 1000).toFixed(1);
}

export class RestHealth {
  readonly #log: Logger;
  readonly #onChange: RestHealthOptions['onChange'];
  readonly #now: () => number;
  #failing: Failing | undefined;
  #hold: Hold | undefined;
  #inFlight = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: RestHealthOptions) {
    this.#log = options.logger;
    this.#onChange = options.onChange;
    this.#now = options.now ?? Date.now;
  }

  conditions(): RestConditions {
    return { failing: this.#failing !== undefined, rateLimited: this.#hold !== undefined };
  }

  /** `inner` (the REST's own makeRequest), with each attempt's 429 read. */
  attempts(inner: MakeRequest): MakeRequest {
    return async (url, init) => {
      const res = await inner(url, init);
      if (res.status === 429) this.#limited(res.headers, init.method ?? 'GET', url);
      return res;
    };
  }

  /** Every request of `rest` from now on ends here: what its caller got. */
  watch(rest: REST): void {
    const queue = rest.queueRequest.bind(rest);
    rest.queueRequest = async (request: InternalRequest) => {
      const started = this.#now();
      this.#inFlight += 1;
      if (this.#hold) this.#hold.requests += 1;
      try {
        const res = await queue(request);
        this.#answered(request);
        return res;
      } catch (err) {
        const failure = failureOf(err);
        if (failure === undefined) this.#answered(request);
        else this.#failed(request, failure, started);
        throw err;
      } finally {
        this.#inFlight -= 1;
      }
    };
  }

  /** Stops the timer (the bot stopping); the conditions stay as they are. */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #failed(request: InternalRequest, failure: string, started: number): void {
    const now = this.#now();
    const route = routeOf(request.method, request.fullRoute);
    if (this.#failing) {
      this.#failing.routes.set(route, { at: now });
      this.#failing.failed += 1;
      return;
    }
    this.#failing = { since: started, routes: new Map([[route, { at: now }]]), failed: 1 };
    this.#log.warn(
      { discordRest: 'failing', route, failure, failingForMs: now - started },
      `Discord failing: ${route} got ${failure} after every retry (for ${secondsOf(now - started)} s); work is tried again later`,
    );
    this.#changed();
  }

  #answered(request: InternalRequest): void {
    const failing = this.#failing;
    if (!failing) return;
    failing.routes.delete(routeOf(request.method, request.fullRoute));
    this.#forget();
  }

  /** Lets go of routes not asked again for FORGET_MS; the end of failing once none is left. */
  #forget(): void {
    const failing = this.#failing;
    if (!failing) return;
    const now = this.#now();
    for (const [route, { at }] of failing.routes) if (now - at >= FORGET_MS) failing.routes.delete(route);
    if (failing.routes.size > 0) return;
    this.#failing = undefined;
    this.#log.info(
      { discordRest: 'ok', was: 'failing', lastedMs: now - failing.since, failedRequests: failing.failed },
      `Discord recovered: its REST answers again after ${secondsOf(now - failing.since)} s failing (${failing.failed} requests failed, their work tried again)`,
    );
    this.#changed();
  }

  #limited(headers: Headers, method: string, url: string): void {
    const retryAfterMs = Number(headers.get('retry-after')) * 1000;
    if (!Number.isFinite(retryAfterMs) || retryAfterMs <= 0) return;
    const global = headers.has('x-ratelimit-global');
    const scope = global ? 'global' : (headers.get('x-ratelimit-scope') ?? 'user');
    const route = routeOf(method, new URL(url).pathname.replace(/^\/api(?:\/v\d+)?/, ''));
    const now = this.#now();
    const until = now + retryAfterMs;
    if (this.#hold) {
      this.#hold.until = Math.max(this.#hold.until, until);
      this.#arm();
      return;
    }
    if (retryAfterMs < (global ? GLOBAL_HOLD_MS : ROUTE_HOLD_MS)) {
      this.#log.debug({ scope, route, retryAfterMs }, 'Discord answered 429: a short hold');
      return;
    }
    this.#hold = { since: now, until, scope, requests: this.#inFlight };
    this.#log.warn(
      { discordRest: 'rate-limited', scope, route, retryAfterMs },
      `Discord rate-limited: a ${scope} hold of ${secondsOf(retryAfterMs)} s (429 on ${route}); requests wait for it`,
    );
    this.#changed();
    this.#arm();
  }

  /** One timer: the hold's end (and its grace), or the first failing route to let go. */
  #arm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const ends: number[] = [];
    if (this.#hold) ends.push(this.#hold.until + GRACE_MS);
    for (const { at } of this.#failing?.routes.values() ?? []) ends.push(at + FORGET_MS);
    if (ends.length === 0) return;
    const delay = Math.max(0, Math.min(...ends) - this.#now());
    this.#timer = setTimeout(() => this.#tick(), delay);
    this.#timer.unref();
  }

  #tick(): void {
    this.#timer = undefined;
    const hold = this.#hold;
    const now = this.#now();
    if (hold && now >= hold.until + GRACE_MS) {
      this.#hold = undefined;
      // How long Discord held them (the grace after it is the requests going again).
      const lastedMs = hold.until - hold.since;
      this.#log.info(
        { discordRest: 'ok', was: 'rate-limited', scope: hold.scope, lastedMs, requests: hold.requests },
        `Discord recovered: the ${hold.scope} rate limit is over after ${secondsOf(lastedMs)} s (${hold.requests} requests held)`,
      );
      this.#changed();
    }
    this.#forget();
    this.#arm();
  }

  #changed(): void {
    if (this.#failing && !this.#timer) this.#arm();
    try {
      this.#onChange?.(this.conditions());
    } catch {
      // The metrics never throw (metrics.ts); nothing here may break a request.
    }
  }
}
