/**
 * The outbox engine: work a store holds until it is done once (a reminder posted, a webhook event
 * announced), shared by the processes of the bot. The store is the queue; a process keeps in memory
 * only what falls due within `horizonMs`, looks at the store every `pollMs` (what other processes
 * stored, claims that ran out) and when woken (`wake(dueAt)`: this process stored something due
 * before its next look), and has one timer armed for the earliest thing due.
 *
 * Each due item is claimed in the store for a lease (one conditional UPDATE: of several processes
 * exactly one wins; store/claims.ts), acted on (the feature's sender), and recorded:
 *
 * - sent (or nothing to do): done;
 * - failed (the channel is gone, a permission is missing): given up, and recorded so;
 * - retry (Discord 5xx, a lost connection, the sender threw): the claim is set to run out after a
 *   backoff (doubling from `retryBaseMs`, jittered, at most `leaseMs`), and the item is tried again
 *   then, here or by another process, with the same nonce.
 *
 * A process killed between the claim and the record leaves the claim to run out: the next look,
 * here or elsewhere, takes it over with its nonce, and Discord drops the second copy of a message
 * that did get posted (`enforce_nonce`). So each item is posted once across restarts, kill -9 and
 * several processes.
 *
 * Items of one lane (a server's webhook events) go one after the other, in the order they are
 * due; one left to be tried again holds its lane's later items back. Lanes and items without one
 * go side by side, `concurrency` at most.
 *
 * It runs on TaskLoop: the batch in flight is the loop's one job (it goes on while anything is
 * being sent, so an item that falls due meanwhile does not wait for a slow send), the loop's timer
 * slot is the one timer (unref'd, clamped, silent after stop), and stop() is the loop's bounded one.
 *
 * One file past 400 lines on purpose: the batch, its lanes and the claim → act → record cycle are
 * one state machine, and a fifth of the file is this description of it.
 */
import type { Logger } from '../log/logger.js';
import type { Lease } from '../store/claims.js';
import { annotate, inSpan, linkTo, SpanKind } from '../trace/spans.js';
import { failureOf } from './failure.js';
import { ABORT_GRACE_MS, backoffDelay, type SetTimer, settle, TaskLoop } from './loop.js';

/** What became of one item: what the feature's sender says. */
export type SendOutcome =
  /**
   * Posted (or nothing to post): recorded as done; or, for an item that recurs (a server's reminder
   * posted again until someone ups), due `again` at `again.at`, its `step`-th time (the feature's count).
   */
  | { kind: 'sent'; again?: { at: number; step: number } }
  /** Sending again would not help (the channel is gone, a permission is missing): recorded. */
  | { kind: 'failed'; reason: string }
  /** May work later (Discord 5xx, a lost connection): tried again after a backoff. */
  | { kind: 'retry'; detail: string };

/** The feature's half of the store. */
export interface OutboxSource<I, C extends Lease> {
  /** Items due by `until` (and those whose claim may have run out by `now`), earliest first. */
  due(now: number, until: number, limit: number): Promise<readonly I[]>;
  /** Claims a due item for `leaseMs`; undefined when it is not due, done, or held by another. */
  claim(item: I, by: string, leaseMs: number, now: number): Promise<C | undefined>;
  /** Records it done or given up. */
  finish(claim: C, outcome: Exclude<SendOutcome, { kind: 'retry' }>, now: number): Promise<unknown>;
  /** Lets the claim run out at `at`, when the item is tried again. */
  retryAt(claim: C, at: number): Promise<unknown>;
}

/** The feature's policy: what an item is, and what acting on it means. */
export interface OutboxPolicy<I, C extends Lease> {
  /** For the log lines: 'reminder', 'webhook event'. */
  noun: string;
  /** For the log lines: 'sent', 'announced'. */
  verb: string;
  /** Identifies an item across looks. */
  key(item: I): string;
  /** When it falls due; items go in this order. */
  dueAt(item: I): number;
  /** Items of one lane go one at a time, in order (a server's webhook events). Default: none. */
  lane?(item: I): string | undefined;
  /** Whether this process acts on the item (its shards' servers). Default: every item. */
  accepts?(item: I): boolean;
  /** The item in a log line (its key, never its content). */
  fields(item: I): Record<string, unknown>;
  /** From when its lateness counts (its due time, or when it was received). */
  since(item: I, claim: C): number;
  act(item: I, claim: C): Promise<SendOutcome>;
  /** The W3C traceparent stored with the item (the work that stored it), for the span's link. */
  traceParent?(item: I): string | null;
}

/** The engine's settings; the defaults are OUTBOX_DEFAULTS, a feature's own, then what is given. */
export interface OutboxSettings {
  /** How long a claim holds before another process may take it over. */
  leaseMs: number;
  /** How far ahead a look loads. */
  horizonMs: number;
  /** How often the store is looked at without being woken. */
  pollMs: number;
  /** Items loaded per look. */
  batch: number;
  /** Items being acted on at once, at most. */
  concurrency: number;
  /** How long stop() waits for the batch in flight (ABORT_GRACE_MS more, then it gives up). */
  stopTimeoutMs: number;
  /** The first retry's delay; it doubles with each failure of the item, up to leaseMs. */
  retryBaseMs: number;
}

export const OUTBOX_DEFAULTS: Readonly<OutboxSettings> = {
  leaseMs: 30_000,
  horizonMs: 30_000,
  pollMs: 10_000,
  batch: 500,
  concurrency: 16,
  // stop() ends within 3 s: 2 s for the batch, then the loop's grace.
  stopTimeoutMs: 3_000 - ABORT_GRACE_MS,
  retryBaseMs: 1_000,
};

/** What a feature's runner takes besides its own options (ReminderScheduler, WebhookAnnouncer). */
export interface RunnerOptions extends Partial<OutboxSettings> {
  logger: Logger;
  /** Who claims: unique per process (host, pid, random). */
  owner: string;
  now?: (() => number) | undefined;
  /** For the retries' jitter. Default Math.random. */
  random?: (() => number) | undefined;
  /** Default: unrefTimer. */
  setTimer?: SetTimer | undefined;
}

/** One item done (or left to be tried again): for the metrics. */
export interface OutboxDone<I, C> {
  item: I;
  claim: C;
  outcome: SendOutcome;
  /** How long after `policy.since` it was done. */
  latenessMs: number;
}

export interface OutboxOptions<I, C extends Lease> extends RunnerOptions {
  source: OutboxSource<I, C>;
  policy: OutboxPolicy<I, C>;
  /** The feature's defaults, over OUTBOX_DEFAULTS. */
  defaults?: Partial<OutboxSettings>;
  onDone?: ((done: OutboxDone<I, C>) => void) | undefined;
}

/** Looks at the store at most this often, even through a backlog. */
const MIN_LOOK_GAP_MS = 100;

/** One turn of the event loop (its I/O and timers run before this resolves). */
function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

interface Entry<I> {
  item: I;
  key: string;
  dueAt: number;
  lane: string | undefined;
  /** When it may be acted on: its due time, or when its retry is. */
  at: number;
  /** Its failures in a row here (claims that could not be made, sends to try again). */
  failures: number;
  /** Load order: items due at the same time keep the store's order. */
  seq: number;
}

/** Settings given as undefined keep their default. */
function settingsOf(
  options: Partial<OutboxSettings>,
  defaults: Partial<OutboxSettings> = {},
): OutboxSettings {
  const given = Object.fromEntries(
    Object.keys(OUTBOX_DEFAULTS).flatMap((name) => {
      const value = options[name as keyof OutboxSettings];
      return value === undefined ? [] : [[name, value]];
    }),
  );
  return { ...OUTBOX_DEFAULTS, ...defaults, ...given };
}

export class Outbox<I, C extends Lease> {
  readonly #s: OutboxSettings;
  readonly #source: OutboxSource<I, C>;
  readonly #policy: OutboxPolicy<I, C>;
  readonly #log: Logger;
  readonly #owner: string;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #onDone: ((done: OutboxDone<I, C>) => void) | undefined;
  readonly #loop: TaskLoop;

  /** The loaded window: key → item, acted on when due. */
  readonly #window = new Map<string, Entry<I>>();
  #order: Entry<I>[] | undefined;
  readonly #inFlight = new Set<string>();
  readonly #busyLanes = new Set<string>();
  /** Loaded again while being acted on: back into the window when that is done. */
  readonly #again = new Map<string, I>();
  #seq = 0;
  #nextLookAt = 0;
  #lastLookAt = 0;
  #lookWanted = false;
  #looking: Promise<void> | undefined;
  /** The last look filled its batch: look again as soon as the window drains. */
  #full = false;
  /** Settles when an item is done, or on wake: what idle workers of the batch wait for. */
  #changed!: Promise<void>;
  #change!: () => void;

  constructor(options: OutboxOptions<I, C>) {
    this.#s = settingsOf(options, options.defaults);
    this.#source = options.source;
    this.#policy = options.policy;
    this.#log = options.logger;
    this.#owner = options.owner;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    this.#onDone = options.onDone;
    this.#loop = new TaskLoop({
      name: `${options.policy.noun} outbox`,
      logger: options.logger,
      setTimer: options.setTimer,
      stopTimeoutMs: this.#s.stopTimeoutMs,
      onStopped: (unanswered) => {
        this.#window.clear();
        this.#order = undefined;
        this.#again.clear();
        if (unanswered)
          this.#log.warn(
            `stopped with a ${this.#policy.noun} still being ${this.#policy.verb}; its claim runs out and it goes again with the same nonce`,
          );
      },
    });
    this.#resetChange();
  }

  /** How many items are held in memory now (the due-soon window and those in flight). */
  get held(): number {
    return this.#window.size + this.#inFlight.size;
  }

  /** Looks at the store now (what fell due while the bot was down goes), then every pollMs. */
  start(): void {
    if (!this.#loop.start()) return;
    this.#lookWanted = true;
    this.#kick();
  }

  /** Something this process stored falls due at `dueAt` (default: now): look before then. */
  wake(dueAt: number = this.#now()): void {
    if (this.#loop.state !== 'running' || !Number.isFinite(dueAt)) return;
    if (dueAt >= this.#nextLookAt) return;
    this.#lookWanted = true;
    if (this.#loop.busy) this.#change();
    else this.#kick();
  }

  /** Stops looking and waits (bounded) for the batch in flight; what is left is claimed later. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  #resetChange(): void {
    this.#changed = new Promise((resolve) => {
      this.#change = () => {
        this.#resetChange();
        resolve();
      };
    });
  }

  /** Starts a batch now, unless one runs (it sees what changed). */
  #kick(): void {
    if (this.#loop.state !== 'running' || this.#loop.busy) return;
    this.#loop.cancel();
    void this.#loop.run(() => this.#batch()).then(() => this.#after());
  }

  /** `concurrency` workers, until nothing is due and nothing is in flight. Never rejects. */
  async #batch(): Promise<void> {
    try {
      await Promise.all(Array.from({ length: this.#s.concurrency }, () => this.#worker()));
    } catch (err) {
      this.#loop.internalError(err, 'batch');
    }
  }

  async #worker(): Promise<void> {
    for (;;) {
      if (this.#loop.stopRequested) return;
      // Another worker's look is waited for too: a worker that found the window empty before it
      // was filled would end, and leave the batch to one that may wait on a slow send meanwhile,
      // deaf to wakes, while what other lanes have stored waits.
      // Woken while the window has an item due: that one first, and what was stored meanwhile with
      // the next look, at most one per MIN_LOOK_GAP_MS (a burst of events is not a look each).
      let entry =
        this.#lookWanted && !this.#looking && this.#now() - this.#lastLookAt < MIN_LOOK_GAP_MS
          ? this.#next()
          : undefined;
      if (!entry) {
        if (this.#lookWanted || this.#looking || this.#now() >= this.#nextLookAt) await this.#look();
        if (this.#loop.stopRequested) return;
        entry = this.#next();
      }
      if (entry) {
        await this.#one(entry);
        // A turn of the event loop between items: a store that answers synchronously (SQLite)
        // would otherwise run a whole backlog as one chain of promises, with no socket read and no
        // timer in between (an interaction, a ping, the next notification).
        await yieldTurn();
        continue;
      }
      if (this.#inFlight.size === 0) return;
      // Others are sending: wait for one to end (its lane frees, or it is to be tried again), for
      // the next item due, or for a wake.
      const at = Math.min(this.#earliest(), this.#nextLookAt);
      await this.#loop.within(this.#changed, at - this.#now(), true);
    }
  }

  /** Arms the one timer for the earliest item due or the next look, once the batch is over. */
  #after(): void {
    try {
      if (this.#loop.state !== 'running') return;
      if (this.#lookWanted) {
        this.#kick();
        return;
      }
      if (this.#full && this.#window.size === 0) {
        // A backlog (the bot was down): the next batch as soon as this one is done.
        this.#nextLookAt = Math.min(this.#nextLookAt, this.#lastLookAt + MIN_LOOK_GAP_MS);
      }
      const at = Math.min(this.#earliest(), this.#nextLookAt);
      this.#loop.schedule(at - this.#now(), () => this.#kick(), 'outbox timer');
    } catch (err) {
      this.#loop.internalError(err, 'after');
    }
  }

  /** One look at a time; workers that want one meanwhile wait for it. */
  #look(): Promise<void> {
    this.#looking ??= this.#load()
      .catch((err: unknown) => {
        this.#log.warn(
          { err },
          `could not read the ${this.#policy.noun}s due; trying again at the next look`,
        );
      })
      .finally(() => {
        this.#looking = undefined;
      });
    return this.#looking;
  }

  async #load(): Promise<void> {
    const { horizonMs, batch, pollMs } = this.#s;
    const t = this.#now();
    this.#lookWanted = false;
    this.#lastLookAt = t;
    this.#nextLookAt = t + pollMs;
    const due = await this.#source.due(t, t + horizonMs, batch);
    this.#full = due.length >= batch;
    const policy = this.#policy;
    if (this.#full) {
      // The window is as far as the batch reached: look again before going past it, yet not in a
      // tight loop when the batch is all claims that other processes hold.
      const last = due.at(-1);
      const reached = (last === undefined ? t : policy.dueAt(last)) + 1;
      this.#nextLookAt = Math.max(t + MIN_LOOK_GAP_MS, Math.min(this.#nextLookAt, reached));
    }
    for (const item of due) {
      if (policy.accepts && !policy.accepts(item)) continue;
      const key = policy.key(item);
      // Being acted on still (its record not yet written): looked at again once that is done, as
      // it may have been set again meanwhile.
      if (this.#inFlight.has(key)) {
        this.#again.set(key, item);
        continue;
      }
      this.#put(key, item);
    }
  }

  /** Into the window; an item there already keeps its place, and its retry time if it failed. */
  #put(key: string, item: I): void {
    const dueAt = this.#policy.dueAt(item);
    const known = this.#window.get(key);
    this.#order = undefined;
    if (known) {
      known.item = item;
      known.dueAt = dueAt;
      known.at = known.failures > 0 ? Math.max(dueAt, known.at) : dueAt;
      return;
    }
    const lane = this.#policy.lane?.(item);
    this.#window.set(key, { item, key, dueAt, lane, at: dueAt, failures: 0, seq: this.#seq++ });
  }

  /** The window in going order (due time, then load order), sorted again when an item comes in. */
  #ordered(): readonly Entry<I>[] {
    this.#order ??= [...this.#window.values()].sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq);
    return this.#order;
  }

  /**
   * The items that may go next, in order: the first of each lane not busy, and those of no lane.
   * Stops at the first for which `visit` returns true.
   */
  #heads(visit: (entry: Entry<I>) => boolean): void {
    const seen = new Set<string>();
    for (const entry of this.#ordered()) {
      // Gone from the window since it was sorted.
      if (this.#window.get(entry.key) !== entry) continue;
      if (entry.lane !== undefined) {
        if (seen.has(entry.lane) || this.#busyLanes.has(entry.lane)) continue;
        seen.add(entry.lane);
      }
      if (visit(entry)) return;
    }
  }

  #next(): Entry<I> | undefined {
    const t = this.#now();
    let next: Entry<I> | undefined;
    this.#heads((entry) => {
      if (entry.at > t) return false;
      next = entry;
      return true;
    });
    return next;
  }

  #earliest(): number {
    let earliest = Number.POSITIVE_INFINITY;
    this.#heads((entry) => {
      earliest = Math.min(earliest, entry.at);
      return false;
    });
    return earliest;
  }

  async #one(entry: Entry<I>): Promise<void> {
    const { key, lane } = entry;
    this.#window.delete(key);
    this.#inFlight.add(key);
    if (lane !== undefined) this.#busyLanes.add(lane);
    let retry = false;
    try {
      retry = await this.#act(entry);
    } finally {
      this.#inFlight.delete(key);
      if (retry && !this.#loop.stopRequested) {
        // Back into the window at its retry time, ahead of its lane's later items.
        this.#window.set(key, entry);
        this.#order = undefined;
      }
      if (lane !== undefined) this.#busyLanes.delete(lane);
      const again = this.#again.get(key);
      this.#again.delete(key);
      if (again !== undefined && !this.#loop.stopRequested) this.#put(key, again);
      this.#change();
    }
  }

  /** To be tried again after a backoff (doubling, at most leaseMs): when, and the delay. */
  #retryLater(entry: Entry<I>): number {
    entry.failures += 1;
    const backoff = { baseMs: this.#s.retryBaseMs, capMs: this.#s.leaseMs };
    const delay = Math.min(backoffDelay(entry.failures, backoff, this.#random), this.#s.leaseMs);
    entry.at = this.#now() + delay;
    return delay;
  }

  /**
   * Claims, acts and records; true when the item is to be tried again (at `entry.at`). A trace of
   * its own, linked to the one that stored the item (an /up, a delivery), whatever host that was.
   */
  #act(entry: Entry<I>): Promise<boolean> {
    const { noun, verb } = this.#policy;
    return inSpan(
      `${noun} ${verb}`,
      {
        root: true,
        kind: SpanKind.CONSUMER,
        links: linkTo(this.#policy.traceParent?.(entry.item)),
        attributes: { 'outbox.item': this.#policy.key(entry.item) },
      },
      async (span) => {
        const retry = await this.#actOnce(entry);
        span.setAttribute('outbox.retry', retry);
        return retry;
      },
    );
  }

  async #actOnce(entry: Entry<I>): Promise<boolean> {
    const { item } = entry;
    const { noun, verb } = this.#policy;
    const fields = this.#policy.fields(item);
    const claimed = await settle(() => this.#source.claim(item, this.#owner, this.#s.leaseMs, this.#now()));
    if (!claimed.ok) {
      const retryInMs = this.#retryLater(entry);
      this.#log.warn({ err: claimed.error, ...fields, retryInMs }, `could not claim a ${noun}; trying again`);
      return true;
    }
    const claim = claimed.value;
    // Not due any more (moved later), done already, or another process holds it.
    if (!claim) return false;
    const acted = await settle(() => this.#policy.act(item, claim));
    const outcome: SendOutcome = acted.ok
      ? acted.value
      : { kind: 'retry', detail: failureOf(acted.error).message };
    const t = this.#now();
    const latenessMs = Math.max(0, t - this.#policy.since(item, claim));
    if (outcome.kind === 'retry') {
      const retryInMs = this.#retryLater(entry);
      const recorded = await settle(() => this.#source.retryAt(claim, entry.at));
      if (!recorded.ok) {
        // The claim runs out at the end of its lease instead.
        entry.at = Math.max(entry.at, claim.expiresAt);
        this.#log.warn(
          { err: recorded.error, ...fields },
          `could not record a ${noun}; its claim will expire`,
        );
      }
      // Discord's 5xx or absence (the sender's own answer) is told once per outage, not per try
      // (gateway/rest-health.ts): debug here. A sender that threw (the store, a bug) stays a warning.
      const level = acted.ok ? 'debug' : 'warn';
      this.#log[level](
        { ...fields, detail: outcome.detail, retryInMs },
        `a ${noun} could not be ${verb} now; it is tried again (same nonce)`,
      );
    } else {
      const recorded = await settle(() => this.#source.finish(claim, outcome, this.#now()));
      if (!recorded.ok) {
        // The claim expires and the item goes again with the same nonce: Discord drops it.
        this.#log.warn(
          { err: recorded.error, ...fields },
          `could not record a ${noun}; its claim will expire`,
        );
      }
      if (outcome.kind === 'failed')
        this.#log.warn({ ...fields, reason: outcome.reason }, `a ${noun} could not be ${verb}; recorded`);
      else this.#log.debug({ ...fields, latenessMs }, `${noun} ${verb}`);
    }
    annotate({ 'outbox.outcome': outcome.kind, 'outbox.lateness_ms': latenessMs });
    const onDone = this.#onDone;
    if (onDone) this.#loop.callHook('onDone', () => onDone({ item, claim, outcome, latenessMs }), fields);
    return outcome.kind === 'retry';
  }
}
