/**
 * Posts the bot's totals across every shard to the directory (POST /stats) on a fixed interval.
 *
 * People who use similar posters complain about four things, and each one shapes this module:
 * - one shard's count posted instead of the total: the poster adds up a snapshot of all shards.
 *   The snapshot is a function, so it works with internal shards and with a ShardingManager that
 *   gathers numbers from several processes;
 * - counts posted while shards are still starting (too low): nothing goes out until every expected
 *   shard is ready and reported exactly once, and the first post waits a little longer so that
 *   guild counts can settle;
 * - a poster that dies for good after one 401: no failure ends the loop. The operator gets an
 *   error line and the next interval tries again;
 * - posting every few seconds: the directory asks for 15 min between posts and may restrict a
 *   token for good. The configuration refuses a shorter STATS_INTERVAL, and retries inside one
 *   tick stay few and short.
 */
import type { DirectoryClient } from '../directory/client.js';
import { UnavailableError } from '../directory/errors.js';
import type { OkResult } from '../directory/types.js';
import type { Logger } from '../log/logger.js';
import { failureOf } from './failure.js';
import { backoffDelay, type Timer } from './server-reports.js';

export type { Timer };

export interface StatsSnapshot {
  /** Shards expected (the total shard count) and, for each, whether it is ready and its numbers. */
  expectedShards: number;
  shards: ReadonlyArray<{ id: number; ready: boolean; guilds: number; members: number }>;
}

/** The body of POST /stats. */
export interface StatsBody {
  servers: number;
  shards: number;
  users: number;
}

export interface StatsRetry {
  /** Attempts inside one tick, the first included. */
  attempts: number;
  baseMs: number;
  capMs: number;
}

export interface StatsPosterOptions {
  directory: Pick<DirectoryClient, 'postBotStats'>;
  logger: Logger;
  /** May throw or reject (e.g. a shard process still spawning): that tick is skipped. */
  snapshot: () => Promise<StatsSnapshot> | StatsSnapshot;
  /** STATS_INTERVAL, held to the directory's rule by the configuration. */
  intervalMs: number;
  /** From when every shard was first seen ready to the first post. Default 30 s. */
  firstDelayMs?: number;
  /** When a shard is not ready or not reported: try again after this, not a full interval. Default 15 s. */
  notReadyRetryMs?: number;
  /** Inside one tick, for 5xx, timeouts, InvalidResponse and short 429s. Default 3 / 2 s / 30 s. */
  retry?: StatsRetry;
  random?: () => number;
  now?: () => number;
  /** Default: setTimeout, unref'd so that the poster never keeps the process alive. */
  setTimer?: (fn: () => void, ms: number) => Timer;
  /** From start() to the first readiness check. Default 1 s. */
  startDelayMs?: number;
  /** A snapshot that has not answered after this is treated as failed. Default 30 s. */
  snapshotTimeoutMs?: number;
  /** A post that has not settled after this is cancelled (and retried). Default 2 min. */
  attemptTimeoutMs?: number;
  /** How long stop() waits for the post in flight before cancelling it. Default 5 s. */
  stopTimeoutMs?: number;
}

export type StatsOutcome =
  | 'posted'
  | 'skipped-not-ready'
  | 'skipped-snapshot-failed'
  | 'unauthorized'
  | 'forbidden'
  | 'rate-limited'
  | 'failed'
  | 'rejected';

export interface StatsOutcomeInfo {
  /** The whole tick: snapshot, every attempt and the waits between them. */
  durationMs: number;
  /** What was sent (or would have been) once the snapshot was complete. */
  body?: StatsBody;
  /** DirectoryError.code, 'Unexpected', 'NotOk', 'InvalidSnapshot', 'SnapshotTimeout' or 'Stopped'. */
  code?: string;
  /** Requests made in this tick. */
  attempts?: number;
}

/** Node's timers fire at once for anything longer than this. */
export const MAX_TIMER_MS = 2_147_483_647;
export const DEFAULT_FIRST_DELAY_MS = 30_000;
export const DEFAULT_NOT_READY_RETRY_MS = 15_000;
export const DEFAULT_RETRY: Readonly<StatsRetry> = { attempts: 3, baseMs: 2_000, capMs: 30_000 };
export const DEFAULT_START_DELAY_MS = 1_000;
export const DEFAULT_SNAPSHOT_TIMEOUT_MS = 30_000;
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 120_000;
export const DEFAULT_STOP_TIMEOUT_MS = 5_000;
/** After cancelling, how long the client still gets to let go of the request. */
const ABORT_GRACE_MS = 1_000;
/** Shard IDs listed per problem in a log line; a thousand-shard bot must not write a novel. */
const LISTED_SHARDS = 20;

/**
 * Failures that the same request would meet again: someone has to change the token, its kind or
 * the configuration. Logged at error; the loop goes on at the next interval, since a token can be
 * fixed on the directory's side without a restart.
 */
const OPERATOR_HINTS: Readonly<Record<string, string>> = {
  Unauthorized: "the directory refused the token; check DIRECTORY_TOKEN (POST /stats takes the bot's own)",
  Forbidden: 'the directory forbids this token to post stats; check DIRECTORY_TOKEN and DIRECTORY_TOKEN_KIND',
  TokenKindNotAccepted: 'POST /stats takes a Bot token in API v2; check DIRECTORY_TOKEN_KIND',
  InvalidArgument: 'nothing was sent; check that DIRECTORY_TOKEN is set and DIRECTORY_API_VERSION',
  BadRequest: 'the directory rejected the body of the stats',
  NotFound: 'the directory has no POST /stats here; check DIRECTORY_API_URL and DIRECTORY_API_VERSION',
};

const OUTCOME_OF: Readonly<Record<string, StatsOutcome>> = {
  Unauthorized: 'unauthorized',
  // A token of the wrong kind is a token problem, like a wrong token.
  TokenKindNotAccepted: 'unauthorized',
  Forbidden: 'forbidden',
};

// ---- pure helpers ----

export type SnapshotCheck =
  | { kind: 'ready'; totals: StatsBody }
  | {
      kind: 'not-ready';
      expectedShards: number;
      /** How many of the IDs 0..expectedShards-1 nobody reported. */
      missingCount: number;
      /** The first few of each, for the log. */
      missing: number[];
      notReady: number[];
      duplicate: number[];
      unexpected: number[];
    }
  | { kind: 'invalid'; problem: string };

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function note(list: number[], id: number): void {
  if (list.length < LISTED_SHARDS) list.push(id);
}

/**
 * Why a snapshot can or cannot be posted. The snapshot may come from other processes (a
 * broadcastEval), so it is checked as untrusted data.
 */
export function inspectSnapshot(snapshot: unknown): SnapshotCheck {
  const invalid = (problem: string): SnapshotCheck => ({ kind: 'invalid', problem });
  if (typeof snapshot !== 'object' || snapshot === null) return invalid('the snapshot is not an object');
  const { expectedShards, shards } = snapshot as Partial<Record<keyof StatsSnapshot, unknown>>;
  if (!isCount(expectedShards) || expectedShards < 1) {
    return invalid('expectedShards is not a whole number of at least 1');
  }
  if (!Array.isArray(shards)) return invalid('shards is not an array');
  const seen = new Set<number>();
  const notReady: number[] = [];
  const duplicate: number[] = [];
  const unexpected: number[] = [];
  let servers = 0;
  let users = 0;
  for (const shard of shards as unknown[]) {
    if (typeof shard !== 'object' || shard === null) return invalid('a shard entry is not an object');
    const { id, ready, guilds, members } = shard as Record<string, unknown>;
    if (!isCount(id)) return invalid('a shard id is not a whole number of at least 0');
    if (typeof ready !== 'boolean' || !isCount(guilds) || !isCount(members)) {
      return invalid(`shard ${id} reports a readiness or a count of the wrong type`);
    }
    // A shard reported twice (say, by a process and its respawn) makes the sum unreliable.
    if (id >= expectedShards) note(unexpected, id);
    else if (seen.has(id)) note(duplicate, id);
    else seen.add(id);
    if (!ready) note(notReady, id);
    servers += guilds;
    users += members;
  }
  const missingCount = expectedShards - seen.size;
  const missing: number[] = [];
  // Stops after a few finds: at most seen.size + LISTED_SHARDS steps, whatever expectedShards is.
  for (let id = 0; missingCount > 0 && id < expectedShards && missing.length < LISTED_SHARDS; id += 1) {
    if (!seen.has(id)) missing.push(id);
  }
  if (missingCount > 0 || notReady.length > 0 || duplicate.length > 0 || unexpected.length > 0) {
    return { kind: 'not-ready', expectedShards, missingCount, missing, notReady, duplicate, unexpected };
  }
  if (!Number.isSafeInteger(servers) || !Number.isSafeInteger(users)) {
    return invalid('the totals are too large to post');
  }
  return { kind: 'ready', totals: { servers, shards: expectedShards, users } };
}

/** Pure: totals from a snapshot, or null when a shard is missing or not ready. */
export function totals(s: StatsSnapshot): StatsBody | null {
  const check = inspectSnapshot(s);
  return check.kind === 'ready' ? check.totals : null;
}

// ---- the poster ----

function defaultSetTimer(fn: () => void, ms: number): Timer {
  const handle = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
  handle.unref();
  return { clear: () => clearTimeout(handle) };
}

function duration(name: string, value: number | undefined, fallback: number, min = 0): number {
  const ms = value ?? fallback;
  if (!Number.isFinite(ms) || ms < min || ms > MAX_TIMER_MS) {
    throw new RangeError(`${name} must be a number of milliseconds from ${min} to ${MAX_TIMER_MS}`);
  }
  return ms;
}

type Answer = { ok: true; result: OkResult } | { ok: false; error: unknown; abandoned?: boolean };
type Snapshotted = { ok: true; value: unknown } | { ok: false; error: unknown };
type Inspected = SnapshotCheck | { kind: 'failed'; code: string; message: string };
type Waited<T> = { settled: true; value: T } | { settled: false; interrupted: boolean };

interface TickResult {
  outcome: StatsOutcome;
  code?: string;
  body?: StatsBody;
  attempts?: number;
  /** Not before this time: a 429 that asked for longer than the interval. */
  notBefore?: number;
}

interface Flight {
  promise: Promise<StatsOutcome>;
  /** Cancels the request in flight; a new one per attempt. */
  controller: AbortController;
}

type State = 'idle' | 'running' | 'stopping' | 'stopped';

const SKIPPED: ReadonlySet<StatsOutcome> = new Set(['skipped-not-ready', 'skipped-snapshot-failed']);

export class StatsPoster {
  /** Metrics hook: one call per tick. */
  onOutcome?: (o: StatsOutcome, info: StatsOutcomeInfo) => void;

  readonly #directory: Pick<DirectoryClient, 'postBotStats'>;
  readonly #log: Logger;
  readonly #snapshot: () => Promise<StatsSnapshot> | StatsSnapshot;
  readonly #intervalMs: number;
  readonly #firstDelayMs: number;
  readonly #notReadyRetryMs: number;
  readonly #retry: StatsRetry;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #setTimer: (fn: () => void, ms: number) => Timer;
  readonly #startDelayMs: number;
  readonly #snapshotTimeoutMs: number;
  readonly #attemptTimeoutMs: number;
  readonly #stopTimeoutMs: number;

  #state: State = 'idle';
  #timer: Timer | undefined;
  /** Bumped on every reschedule, so that a readiness check finishing late knows it is stale. */
  #epoch = 0;
  #flight: Flight | undefined;
  /** Start of the last tick that reached the directory; the interval is measured from it. */
  #lastPostStartedAt: number | undefined;
  #lastSuccessAt: Date | null = null;
  #lastPosted: StatsBody | null = null;
  /** Ticks that reached the directory and failed since the last success, for the recovery line. */
  #failedTicks = 0;
  #lastFailureCode: string | undefined;
  /** Waits that stop() cuts short: backoff sleeps and snapshots. */
  readonly #wakers = new Set<() => void>();
  #stopping: Promise<void> | undefined;

  constructor(options: StatsPosterOptions) {
    const retry = options.retry ?? DEFAULT_RETRY;
    if (!Number.isSafeInteger(retry.attempts) || retry.attempts < 1) {
      throw new RangeError('retry.attempts must be a whole number of at least 1');
    }
    if (!(retry.baseMs > 0) || !(retry.capMs >= retry.baseMs) || retry.capMs > MAX_TIMER_MS) {
      throw new RangeError('retry needs baseMs > 0 and capMs >= baseMs');
    }
    if (typeof options.snapshot !== 'function') throw new TypeError('snapshot must be a function');
    this.#directory = options.directory;
    this.#log = options.logger.child({ task: 'stats-poster' });
    this.#snapshot = options.snapshot;
    this.#intervalMs = duration('intervalMs', options.intervalMs, Number.NaN, 1);
    this.#firstDelayMs = duration('firstDelayMs', options.firstDelayMs, DEFAULT_FIRST_DELAY_MS);
    this.#notReadyRetryMs = duration(
      'notReadyRetryMs',
      options.notReadyRetryMs,
      DEFAULT_NOT_READY_RETRY_MS,
      1,
    );
    this.#retry = { attempts: retry.attempts, baseMs: retry.baseMs, capMs: retry.capMs };
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
    this.#setTimer = options.setTimer ?? defaultSetTimer;
    this.#startDelayMs = duration('startDelayMs', options.startDelayMs, DEFAULT_START_DELAY_MS);
    this.#snapshotTimeoutMs = duration(
      'snapshotTimeoutMs',
      options.snapshotTimeoutMs,
      DEFAULT_SNAPSHOT_TIMEOUT_MS,
      1,
    );
    this.#attemptTimeoutMs = duration(
      'attemptTimeoutMs',
      options.attemptTimeoutMs,
      DEFAULT_ATTEMPT_TIMEOUT_MS,
      1,
    );
    this.#stopTimeoutMs = duration('stopTimeoutMs', options.stopTimeoutMs, DEFAULT_STOP_TIMEOUT_MS);
  }

  get lastSuccessAt(): Date | null {
    // A copy: a caller changing the Date must not change ours.
    return this.#lastSuccessAt === null ? null : new Date(this.#lastSuccessAt.getTime());
  }

  get lastPosted(): StatsBody | null {
    return this.#lastPosted === null ? null : { ...this.#lastPosted };
  }

  /** Idempotent; schedules the first readiness check. A stopped poster does not start again. */
  start(): void {
    if (this.#state !== 'idle') {
      if (this.#state !== 'running') this.#log.debug('stats poster is stopped; start ignored');
      return;
    }
    this.#state = 'running';
    this.#log.info(
      { intervalMs: this.#intervalMs, firstDelayMs: this.#firstDelayMs },
      'stats poster started; the first post waits until every shard is ready',
    );
    try {
      if (this.#lastPostStartedAt === undefined) {
        this.#schedule('check', this.#startDelayMs);
      } else {
        // A tick() before start() already posted: keep its interval rather than post again soon.
        this.#schedule('tick', this.#lastPostStartedAt + this.#intervalMs - this.#now());
      }
    } catch (err) {
      this.#internalError(err, 'start');
    }
  }

  /** Cancels timers and waits for the post in flight (bounded, then cancelled). Idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= this.#shutdown().catch((err: unknown) => this.#internalError(err, 'stop'));
    return this.#stopping;
  }

  /** Runs one attempt now; while one runs, returns the running one's promise. Never rejects. */
  tick(): Promise<StatsOutcome> {
    if (this.#flight) return this.#flight.promise;
    if (this.#state === 'stopping' || this.#state === 'stopped') {
      // The directory client is likely closed by now; nothing is sent and no outcome is reported.
      this.#log.debug('stats poster is stopped; tick ignored');
      return Promise.resolve('failed');
    }
    const started = this.#now();
    const flight: Flight = { promise: Promise.resolve('failed'), controller: new AbortController() };
    this.#flight = flight;
    flight.promise = this.#run(flight)
      .catch((err: unknown): TickResult => {
        this.#internalError(err, 'tick');
        return { outcome: 'failed', code: 'Unexpected' };
      })
      .then((result) => this.#finish(flight, result, started));
    return flight.promise;
  }

  // ---- one tick ----

  async #run(flight: Flight): Promise<TickResult> {
    const check = await this.#inspect();
    if (check.kind === 'failed') {
      if (check.code !== 'Stopped') {
        this.#log.warn({ code: check.code, error: check.message }, 'stats snapshot failed; tick skipped');
      }
      return { outcome: 'skipped-snapshot-failed', code: check.code };
    }
    if (check.kind === 'invalid') {
      this.#log.warn(
        { code: 'InvalidSnapshot', error: check.problem },
        'stats snapshot unusable; tick skipped',
      );
      return { outcome: 'skipped-snapshot-failed', code: 'InvalidSnapshot' };
    }
    if (check.kind === 'not-ready') {
      this.#log.info(notReadyFields(check), 'not every shard is ready; stats post skipped');
      return { outcome: 'skipped-not-ready' };
    }
    return this.#post(flight, check.totals);
  }

  async #post(flight: Flight, body: StatsBody): Promise<TickResult> {
    const { attempts, capMs } = this.#retry;
    for (let attempt = 1; ; attempt += 1) {
      const answer = await this.#send(flight, body);
      if (answer.ok) {
        if (answer.result.ok === true) {
          this.#lastSuccessAt = new Date(this.#now());
          this.#lastPosted = { ...body };
          return { outcome: 'posted', body, attempts: attempt };
        }
        // The same body would meet the same answer: for the operator to read, not to repeat.
        this.#log.warn({ body, attempt, code: 'NotOk' }, 'the directory answered ok: false to the stats');
        return { outcome: 'rejected', code: 'NotOk', body, attempts: attempt };
      }
      const failure = failureOf(answer.error);
      const fields = {
        body,
        attempt,
        attempts,
        code: failure.code,
        status: failure.status,
        error: failure.message,
      };
      const result = { code: failure.code, body, attempts: attempt };
      if (this.#state === 'stopping' || this.#state === 'stopped') {
        this.#log.warn(fields, 'stats post ended by stop');
        return { outcome: 'failed', ...result };
      }
      if (answer.abandoned) {
        // Retrying now could put two posts in flight; by the next interval this one is long gone.
        this.#log.error(
          fields,
          'stats post did not settle even when cancelled; waiting for the next interval',
        );
        return { outcome: 'failed', ...result };
      }
      const hint = OPERATOR_HINTS[failure.code];
      if (hint !== undefined) {
        this.#log.error({ ...fields, hint }, 'stats post refused; trying again at the next interval');
        return { outcome: OUTCOME_OF[failure.code] ?? 'failed', ...result };
      }
      if (failure.code === 'RateLimited') {
        const after = failure.retryAfterMs;
        const waitMs =
          after !== undefined && Number.isFinite(after) && after >= 0
            ? after
            : backoffDelay(attempt, this.#retry, this.#random);
        if (attempt < attempts && waitMs <= capMs) {
          this.#log.warn({ ...fields, retryInMs: waitMs }, 'stats post rate limited; retrying');
          if (await this.#sleep(waitMs)) continue;
          return { outcome: 'rate-limited', ...result };
        }
        this.#log.warn(
          { ...fields, retryInMs: waitMs },
          'stats post rate limited; waiting for the next interval',
        );
        return { outcome: 'rate-limited', ...result, notBefore: this.#now() + waitMs };
      }
      if (failure.code === 'Unavailable' || failure.code === 'InvalidResponse') {
        if (attempt < attempts) {
          const waitMs = backoffDelay(attempt, this.#retry, this.#random);
          this.#log.warn({ ...fields, retryInMs: waitMs }, 'stats post failed; retrying');
          if (await this.#sleep(waitMs)) continue;
          return { outcome: 'failed', ...result };
        }
        this.#log.warn(fields, 'stats post failed; waiting for the next interval');
        return { outcome: 'failed', ...result };
      }
      this.#log.error(fields, 'stats post failed unexpectedly; waiting for the next interval');
      return { outcome: 'failed', ...result };
    }
  }

  /** One request, bounded by attemptTimeoutMs so that a hung request cannot stall the loop for good. */
  async #send(flight: Flight, body: StatsBody): Promise<Answer> {
    const controller = new AbortController();
    flight.controller = controller;
    const request = this.#request(body, controller.signal);
    let waited = await this.#waitFor(request, this.#attemptTimeoutMs, false);
    if (waited.settled) return waited.value;
    controller.abort();
    waited = await this.#waitFor(request, ABORT_GRACE_MS, false);
    if (waited.settled) return waited.value;
    return {
      ok: false,
      abandoned: true,
      error: new UnavailableError(`postBotStats did not settle within ${this.#attemptTimeoutMs} ms`, {
        method: 'postBotStats',
        reason: 'timeout',
      }),
    };
  }

  /** Never rejects, even when the directory object throws synchronously. */
  async #request(body: StatsBody, signal: AbortSignal): Promise<Answer> {
    try {
      const result = await this.#directory.postBotStats(
        { ...body },
        // The deadline keeps a background post from queueing behind interactive ups past the cap.
        { priority: 'background', deadline: this.#now() + this.#retry.capMs, signal },
      );
      return { ok: true, result };
    } catch (error) {
      return { ok: false, error };
    }
  }

  async #inspect(): Promise<Inspected> {
    const waited = await this.#waitFor(this.#takeSnapshot(), this.#snapshotTimeoutMs, true);
    if (!waited.settled) {
      return waited.interrupted
        ? { kind: 'failed', code: 'Stopped', message: 'the poster is stopping' }
        : {
            kind: 'failed',
            code: 'SnapshotTimeout',
            message: `the snapshot did not answer within ${this.#snapshotTimeoutMs} ms`,
          };
    }
    if (!waited.value.ok) {
      const failure = failureOf(waited.value.error);
      return { kind: 'failed', code: failure.code, message: failure.message };
    }
    return inspectSnapshot(waited.value.value);
  }

  /** Never rejects, even when the snapshot function throws synchronously. */
  async #takeSnapshot(): Promise<Snapshotted> {
    try {
      return { ok: true, value: await this.#snapshot() };
    } catch (error) {
      return { ok: false, error };
    }
  }

  #finish(flight: Flight, result: TickResult, started: number): StatsOutcome {
    if (this.#flight === flight) this.#flight = undefined;
    try {
      const durationMs = this.#now() - started;
      const skipped = SKIPPED.has(result.outcome);
      if (!skipped) this.#lastPostStartedAt = started;
      if (result.outcome === 'posted') {
        this.#logPosted(result, durationMs);
      } else if (!skipped) {
        this.#failedTicks += 1;
        this.#lastFailureCode = result.code ?? result.outcome;
      }
      this.#emit(result, durationMs);
      if (this.#state === 'running') this.#scheduleAfter(result, started);
    } catch (err) {
      this.#internalError(err, 'finish');
    }
    return result.outcome;
  }

  #logPosted(result: TickResult, durationMs: number): void {
    const fields = { body: result.body, durationMs, attempts: result.attempts };
    if (this.#failedTicks > 0) {
      this.#log.info(
        { ...fields, recoveredFrom: this.#lastFailureCode, failedTicks: this.#failedTicks },
        `stats posted; recovered after ${this.#failedTicks} failed tick(s)`,
      );
    } else {
      this.#log.info(fields, 'stats posted');
    }
    this.#failedTicks = 0;
    this.#lastFailureCode = undefined;
  }

  // ---- scheduling ----

  #scheduleAfter(result: TickResult, started: number): void {
    const now = this.#now();
    if (SKIPPED.has(result.outcome)) {
      if (this.#lastPostStartedAt === undefined) {
        // Readiness was lost before the first post: counts may be settling again, so wait for it anew.
        this.#schedule('check', this.#notReadyRetryMs);
      } else {
        // Soon, not a full interval later; but never closer than the interval to the previous post.
        const at = Math.max(now + this.#notReadyRetryMs, this.#lastPostStartedAt + this.#intervalMs);
        this.#schedule('tick', at - now);
      }
      return;
    }
    let at = started + this.#intervalMs;
    if (result.notBefore !== undefined) at = Math.max(at, result.notBefore);
    this.#schedule('tick', at - now);
  }

  #schedule(kind: 'check' | 'tick', ms: number): void {
    this.#clearTimer();
    this.#epoch += 1;
    const epoch = this.#epoch;
    this.#timer = this.#setTimer(
      () => {
        if (epoch !== this.#epoch) return;
        this.#timer = undefined;
        if (this.#state !== 'running') return;
        if (kind === 'tick') void this.tick();
        else this.#check().catch((err: unknown) => this.#internalError(err, 'check'));
      },
      Math.max(0, ms),
    );
  }

  #clearTimer(): void {
    this.#timer?.clear();
    this.#timer = undefined;
  }

  /** Before the first post: look at the shards without posting, until all are ready. */
  async #check(): Promise<void> {
    const epoch = this.#epoch;
    const check = await this.#inspect();
    // A tick() meanwhile schedules the next step itself.
    if (this.#state !== 'running' || epoch !== this.#epoch || this.#flight) return;
    if (check.kind === 'ready') {
      this.#log.info(
        { shards: check.totals.shards, firstPostInMs: this.#firstDelayMs },
        'every shard is ready; first stats post scheduled',
      );
      this.#schedule('tick', this.#firstDelayMs);
      return;
    }
    // Expected while the bot starts, every few seconds: debug, not info.
    const fields =
      check.kind === 'not-ready'
        ? notReadyFields(check)
        : { code: check.kind === 'invalid' ? 'InvalidSnapshot' : check.code };
    this.#log.debug(
      { ...fields, retryInMs: this.#notReadyRetryMs },
      'shards not ready yet; first stats post waits',
    );
    this.#schedule('check', this.#notReadyRetryMs);
  }

  // ---- stop ----

  async #shutdown(): Promise<void> {
    this.#state = 'stopping';
    this.#clearTimer();
    this.#epoch += 1;
    for (const wake of [...this.#wakers]) wake();
    const flight = this.#flight;
    let unanswered = false;
    if (flight) {
      let waited = await this.#waitFor(flight.promise, this.#stopTimeoutMs, false);
      if (!waited.settled) {
        flight.controller.abort();
        waited = await this.#waitFor(flight.promise, ABORT_GRACE_MS, false);
        unanswered = !waited.settled;
      }
    }
    this.#state = 'stopped';
    if (unanswered) this.#log.warn({ unanswered }, 'stats poster stopped; a post was still in flight');
    else this.#log.info('stats poster stopped');
  }

  /** Backoff between attempts; false when stop() cut it short. */
  async #sleep(ms: number): Promise<boolean> {
    const waited = await this.#waitFor(undefined, ms, true);
    return waited.settled || !waited.interrupted;
  }

  /**
   * `promise` (which never rejects) or the end of `ms`, whichever comes first; with `interruptible`,
   * also the start of stop().
   */
  #waitFor<T>(promise: Promise<T> | undefined, ms: number, interruptible: boolean): Promise<Waited<T>> {
    return new Promise((resolve) => {
      let finished = false;
      let timer: Timer | undefined;
      const finish = (result: Waited<T>): void => {
        if (finished) return;
        finished = true;
        timer?.clear();
        this.#wakers.delete(interrupt);
        resolve(result);
      };
      const interrupt = (): void => finish({ settled: false, interrupted: true });
      if (interruptible && (this.#state === 'stopping' || this.#state === 'stopped')) {
        interrupt();
        return;
      }
      if (interruptible) this.#wakers.add(interrupt);
      timer = this.#setTimer(() => finish({ settled: false, interrupted: false }), ms);
      promise?.then(
        (value) => finish({ settled: true, value }),
        () => finish({ settled: false, interrupted: false }),
      );
    });
  }

  // ---- reporting ----

  #emit(result: TickResult, durationMs: number): void {
    const info: StatsOutcomeInfo = { durationMs };
    if (result.body !== undefined) info.body = { ...result.body };
    if (result.code !== undefined) info.code = result.code;
    if (result.attempts !== undefined) info.attempts = result.attempts;
    try {
      this.onOutcome?.(result.outcome, info);
    } catch (err) {
      // A broken metrics hook must not stop the posts.
      this.#log.warn({ outcome: result.outcome, error: failureOf(err).message }, 'onOutcome hook threw');
    }
  }

  #internalError(err: unknown, where: string): void {
    try {
      this.#log.error({ where, error: failureOf(err).message }, 'stats poster internal error');
    } catch {
      // Nothing is left to tell; the timer or caller that got here must not see this either.
    }
  }
}

function notReadyFields(check: Extract<SnapshotCheck, { kind: 'not-ready' }>): Record<string, unknown> {
  const fields: Record<string, unknown> = { expectedShards: check.expectedShards };
  if (check.missingCount > 0) {
    fields.missingCount = check.missingCount;
    fields.missing = check.missing;
  }
  if (check.notReady.length > 0) fields.notReady = check.notReady;
  if (check.duplicate.length > 0) fields.duplicate = check.duplicate;
  if (check.unexpected.length > 0) fields.unexpected = check.unexpected;
  return fields;
}
