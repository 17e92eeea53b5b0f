/**
 * The directory's limits kept across processes and hosts: the same rule as the in-process
 * limiter (rate-limiter.ts: sliding windows, priority classes, deadlines), decided over a
 * ledger that every process shares instead of memory that each process has its own of.
 *
 * Each waiting request takes turns at the ledger. A turn is serialized with every other turn
 * of every process and reads the ledger at the ledger's clock (never a host's): the grants that
 * still count, the 429 holds, and the requests waiting anywhere. The waiter's start is projected
 * with `projectStarts`, the function the in-process limiter uses: when it is now and the real
 * grants leave room, the turn writes a grant; when it would pass the deadline, the request fails
 * at once with the expected wait; otherwise the waiter sleeps until its projected start (at most
 * POLL_MS) and takes another turn. Waiting is registered in the ledger, so that a background
 * request on one host does not take the slot an /up on another host is waiting for; a waiter
 * whose process died stops counting when its registration expires (EXPIRES_MS).
 *
 * A grant whose process dies before it is settled counts as in flight until `inFlightCapMs`
 * (the longest a request's attempt can last, and some): a slot is lost for that long, never the
 * limit. When the ledger cannot be reached, nothing is sent: the request tries again every
 * 250 ms, for `unreachableWaitMs` (10 s) at most and never past its deadline, then fails as
 * unavailable. Sending without
 * the ledger could overrun the limits, and repeated overruns can get the token restricted.
 */
import { RateLimitedError, UnavailableError } from './errors.js';
import type { AcquireOptions, BucketLimit, Grant, GrantInfo } from './rate-limiter.js';
import { type Priority, type ProjectedBucket, projectStarts } from './schedule.js';

/** A grant as the ledger keeps it; times on the ledger's clock (ms). */
export interface LedgerGrant {
  buckets: readonly string[];
  grantedAt: number;
  /** When its answer came; null while in flight. */
  settledAt: number | null;
}

/** A request waiting somewhere, registered in the ledger. */
export interface LedgerWaiter {
  id: string;
  priority: Priority;
  buckets: readonly string[];
  /** On the ledger's clock, set at its first turn: the order within a priority class. */
  enqueuedAt: number;
}

/** What a turn reads. */
export interface LedgerState {
  now: number;
  grants: readonly LedgerGrant[];
  /** Every live waiter, this one included. */
  waiters: readonly LedgerWaiter[];
  /** Bucket → until when a 429 holds it. */
  holds: ReadonlyMap<string, number>;
}

/**
 * What a turn decides, for the ledger to write in the same transaction: a grant (the waiter
 * leaves), leaving without one (it would wait past its deadline), or staying registered.
 */
export type LedgerDecision =
  | { kind: 'grant'; grant: { id: string; buckets: readonly string[] } }
  | { kind: 'leave'; waitMs: number }
  | { kind: 'stay'; waitMs: number };

/**
 * Storage for the shared limits: a database table set, for example (the bot's is in
 * src/store/rate-limit-ledger.ts, on PostgreSQL). Every method may throw when unreachable.
 */
export interface RateLimitLedger {
  /**
   * One turn, serialized with every other turn of every process: registers (or refreshes) the
   * waiter until `expiresInMs` from now, reads the state, and applies what `decide` returns in
   * the same transaction. Returns the ledger's `now` with the decision.
   */
  turn(
    waiter: { id: string; priority: Priority; buckets: readonly string[]; expiresInMs: number },
    keepMs: number,
    decide: (state: LedgerState) => LedgerDecision,
  ): Promise<LedgerDecision>;
  /** The grant's answer came: it counts from now (the ledger's clock). */
  settle(grantId: string): Promise<void>;
  /** Holds a bucket for `forMs` from now (the ledger's clock); a longer hold already there stays. */
  hold(bucket: string, forMs: number): Promise<void>;
  /** Removes a waiter (aborted, closed). */
  leave(waiterId: string): Promise<void>;
}

export interface SharedRateLimiterOptions {
  ledger: RateLimitLedger;
  global: BucketLimit;
  routes: BucketLimit;
  marginMs?: number;
  /** How long an unsettled grant counts as in flight; default 30 s. */
  inFlightCapMs?: number;
  /** How long a request keeps trying a ledger that cannot be reached (at most to its deadline); default 10 s. */
  unreachableWaitMs?: number;
  /** Called when the ledger fails (a turn, a settle, a hold), for logs. */
  onLedgerError?: (err: unknown, what: 'turn' | 'settle' | 'hold' | 'leave') => void;
  now?: () => number;
  /** Unique per process and request (tests); default crypto.randomUUID. */
  newId?: () => string;
}

/** The longest sleep between two turns: a waiter's registration is refreshed at least this often. */
const POLL_MS = 1_000;
/** A waiter that took no turn for this long is taken for dead. */
const EXPIRES_MS = 5_000;
/** Pause before another try when the ledger failed. */
const UNREACHABLE_RETRY_MS = 250;
const GLOBAL = 'global';

interface LocalWaiter {
  id: string;
  abort: (reason: unknown) => void;
}

export class SharedRateLimiter {
  readonly #options: Required<Omit<SharedRateLimiterOptions, 'onLedgerError'>> &
    Pick<SharedRateLimiterOptions, 'onLedgerError'>;
  readonly #waiting = new Set<LocalWaiter>();
  #closed: unknown;
  /** Called on every grant (metrics hook). */
  onGrant: ((info: GrantInfo) => void) | undefined;

  constructor(options: SharedRateLimiterOptions) {
    this.#options = {
      marginMs: 25,
      inFlightCapMs: 30_000,
      unreachableWaitMs: 10_000,
      now: Date.now,
      newId: () => crypto.randomUUID(),
      ...options,
    };
  }

  get pending(): number {
    return this.#waiting.size;
  }

  async acquire(options: AcquireOptions = {}): Promise<Grant> {
    const { signal } = options;
    if (signal?.aborted) throw signal.reason;
    if (this.#closed !== undefined) throw this.#closed;
    const { ledger, now, onLedgerError } = this.#options;
    const me = {
      id: this.#options.newId(),
      priority: options.priority ?? 'interactive',
      buckets: [GLOBAL, ...(options.buckets ?? []).filter((b) => b !== GLOBAL)],
      expiresInMs: EXPIRES_MS,
    };
    const startedAt = now();
    // Set when the ledger first fails, cleared when it answers.
    let giveUpAt: number | undefined;
    let wake: (() => void) | undefined;
    // Set by an abort or close, from outside the loop.
    const stop: { stopped: boolean; reason?: unknown } = { stopped: false };
    const local: LocalWaiter = {
      id: me.id,
      abort: (reason) => {
        if (!stop.stopped) Object.assign(stop, { stopped: true, reason });
        wake?.();
      },
    };
    const onAbort = (): void => local.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    this.#waiting.add(local);
    let registered = false;
    try {
      for (;;) {
        if (stop.stopped) throw stop.reason;
        let sleepMs: number;
        try {
          const remaining = options.deadline === undefined ? undefined : options.deadline - now();
          const decision = await ledger.turn(me, this.#keepMs(), (state) =>
            this.#decide(state, me, remaining),
          );
          registered = decision.kind === 'stay';
          giveUpAt = undefined;
          if (decision.kind === 'grant') return this.#granted(decision.grant.id, me, now() - startedAt);
          if (decision.kind === 'leave') {
            throw new RateLimitedError(
              `${options.method ?? 'request'} would wait ${Math.ceil(decision.waitMs / 1000)} s for the directory's rate limit, past its deadline`,
              {
                retryAfterMs: decision.waitMs,
                local: true,
                ...(options.method ? { method: options.method } : {}),
              },
            );
          }
          sleepMs = Math.min(POLL_MS, decision.waitMs);
        } catch (err) {
          if (err instanceof RateLimitedError) throw err;
          onLedgerError?.(err, 'turn');
          giveUpAt ??= Math.min(
            options.deadline ?? Number.POSITIVE_INFINITY,
            now() + this.#options.unreachableWaitMs,
          );
          if (now() + UNREACHABLE_RETRY_MS > giveUpAt) {
            throw new UnavailableError(
              'the shared rate limit (the store) cannot be reached, so nothing was sent to the directory',
              { reason: 'limits', cause: err },
            );
          }
          sleepMs = UNREACHABLE_RETRY_MS;
        }
        if (stop.stopped) throw stop.reason;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.max(1, sleepMs));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#waiting.delete(local);
      if (registered) ledger.leave(me.id).catch((err: unknown) => onLedgerError?.(err, 'leave'));
    }
  }

  /** The server said to wait (429 with Retry-After): hold the bucket until then, for every process. */
  penalize(bucket: string, untilMs: number): void {
    const forMs = Math.max(0, untilMs - this.#options.now());
    this.#options.ledger
      .hold(bucket, forMs)
      .catch((err: unknown) => this.#options.onLedgerError?.(err, 'hold'));
  }

  /** Fails every request of this process still waiting (shutdown). */
  close(reason: unknown = new Error('rate limiter closed')): void {
    this.#closed = reason;
    for (const waiter of this.#waiting) waiter.abort(reason);
  }

  /** How long a grant is worth keeping in the ledger: in flight to the cap, then the longest window. */
  #keepMs(): number {
    const { global, routes, marginMs, inFlightCapMs } = this.#options;
    return Math.max(global.windowMs, routes.windowMs) + marginMs + inFlightCapMs;
  }

  #bucket(name: string, holds: ReadonlyMap<string, number>): ProjectedBucket {
    const limit = name === GLOBAL ? this.#options.global : this.#options.routes;
    return {
      max: limit.max,
      windowMs: limit.windowMs + this.#options.marginMs,
      blockedUntil: holds.get(name) ?? 0,
    };
  }

  #decide(
    state: LedgerState,
    me: { id: string; buckets: readonly string[] },
    remainingMs: number | undefined,
  ): LedgerDecision {
    const { now, holds } = state;
    const cap = this.#options.inFlightCapMs;
    // Where each grant counts, as the in-process limiter's countsAt: in flight, it may be counted
    // by the server at any moment up to the cap.
    const logs = new Map<string, number[]>();
    for (const grant of state.grants) {
      const at = grant.settledAt ?? Math.max(grant.grantedAt, Math.min(now, grant.grantedAt + cap));
      for (const b of grant.buckets) {
        if (at <= now - this.#bucket(b, holds).windowMs) continue;
        let log = logs.get(b);
        if (!log) {
          log = [];
          logs.set(b, log);
        }
        log.push(at);
      }
    }
    for (const log of logs.values()) log.sort((a, b) => a - b);
    const fitsNow = [...me.buckets].every((b) => {
      const bucket = this.#bucket(b, holds);
      return bucket.blockedUntil <= now && (logs.get(b)?.length ?? 0) < bucket.max;
    });
    const waiters = [...state.waiters].sort((a, b) => a.enqueuedAt - b.enqueuedAt || (a.id < b.id ? -1 : 1));
    const mine = waiters.find((w) => w.id === me.id);
    if (!mine) return { kind: 'stay', waitMs: POLL_MS };
    const t = projectStarts(now, logs, waiters, (b) => this.#bucket(b, holds)).get(mine) ?? now;
    if (t <= now && fitsNow) return { kind: 'grant', grant: { id: me.id, buckets: me.buckets } };
    const waitMs = Math.max(1, t - now);
    if (remainingMs !== undefined && waitMs > remainingMs) return { kind: 'leave', waitMs };
    return { kind: 'stay', waitMs };
  }

  #granted(id: string, me: { priority: Priority; buckets: readonly string[] }, waitedMs: number): Grant {
    const info: GrantInfo = { waitedMs, priority: me.priority, buckets: me.buckets };
    let settled = false;
    this.onGrant?.(info);
    return {
      ...info,
      settle: () => {
        if (settled) return;
        settled = true;
        this.#options.ledger.settle(id).catch((err: unknown) => this.#options.onLedgerError?.(err, 'settle'));
      },
    };
  }
}
