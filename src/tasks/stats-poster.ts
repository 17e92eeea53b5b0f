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
 *   token for good. The configuration refuses a shorter STATS_INTERVAL, retries inside one tick
 *   stay few and short, and a 429 is waited as told, but two intervals at most: it skips one post
 *   at most.
 *
 * Timers, cancellation and the bounded stop are the TaskLoop's (loop.ts); the snapshot checks are
 * pure (stats-snapshot.ts); one post and its retries are stats-post.ts's. What is left here (waiting
 * for the shards, the first post's settling, the interval, the lease of several hosts) is one state
 * machine: it stays in one file, past 400 lines.
 */

import type { DirectoryClient } from '../directory/index.js';
import type { Logger } from '../log/logger.js';
import { annotate, inSpan } from '../trace/spans.js';
import { failureOf } from './failure.js';
import { DEFAULT_STOP_TIMEOUT_MS, MAX_TIMER_MS, settle, TaskLoop, type TaskOptions } from './loop.js';
import type { StatsGate } from './stats-gate.js';
import {
  type PostContext,
  postStats,
  type StatsOutcome,
  type StatsRetry,
  type TickResult,
} from './stats-post.js';
import {
  inspectSnapshot,
  notReadyFields,
  type SnapshotCheck,
  type StatsBody,
  type StatsSnapshot,
} from './stats-snapshot.js';

export type { StatsBody, StatsGate, StatsOutcome, StatsRetry, StatsSnapshot };

export interface StatsPosterOptions extends TaskOptions {
  directory: Pick<DirectoryClient, 'postBotStats'>;
  /** The bot's ID: v3's route names it (POST /bots/{id}/stats). */
  botId?: string | undefined;
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
  /** From start() to the first readiness check. Default 1 s. */
  startDelayMs?: number;
  /** A snapshot that has not answered after this is treated as failed. Default 30 s. */
  snapshotTimeoutMs?: number;
  /** A post that has not settled after this is cancelled (and retried). Default 2 min. */
  attemptTimeoutMs?: number;
  /** Metrics hook: one call per tick. One that throws is logged and the posts go on. */
  onOutcome?: (outcome: StatsOutcome, info: StatsOutcomeInfo) => void;
  /**
   * Several hosts: asked once the snapshot is complete whether this host posts this tick (it
   * leads, and no host posted within the interval); `startedAgoMs` is how long ago the tick
   * began. Without it, this poster is the only one.
   */
  gate?: (startedAgoMs: number) => Promise<StatsGate>;
}

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

export const DEFAULT_FIRST_DELAY_MS = 30_000;
export const DEFAULT_NOT_READY_RETRY_MS = 15_000;
export const DEFAULT_RETRY: Readonly<StatsRetry> = { attempts: 3, baseMs: 2_000, capMs: 30_000 };
export const DEFAULT_START_DELAY_MS = 1_000;
export const DEFAULT_SNAPSHOT_TIMEOUT_MS = 30_000;
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 120_000;
// ---- the poster ----

function duration(name: string, value: number | undefined, fallback: number, min = 0): number {
  const ms = value ?? fallback;
  if (!Number.isFinite(ms) || ms < min || ms > MAX_TIMER_MS) {
    throw new RangeError(`${name} must be a number of milliseconds from ${min} to ${MAX_TIMER_MS}`);
  }
  return ms;
}

type Inspected = SnapshotCheck | { kind: 'failed'; code: string; message: string };

const SKIPPED: ReadonlySet<StatsOutcome> = new Set([
  'skipped-not-ready',
  'skipped-snapshot-failed',
  'skipped-not-leader',
]);

export class StatsPoster {
  readonly #directory: Pick<DirectoryClient, 'postBotStats'>;
  readonly #log: Logger;
  readonly #loop: TaskLoop;
  readonly #snapshot: () => Promise<StatsSnapshot> | StatsSnapshot;
  readonly #onOutcome: StatsPosterOptions['onOutcome'];
  readonly #intervalMs: number;
  readonly #firstDelayMs: number;
  readonly #notReadyRetryMs: number;
  readonly #retry: StatsRetry;
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #startDelayMs: number;
  readonly #snapshotTimeoutMs: number;
  readonly #attemptTimeoutMs: number;
  readonly #gate: StatsPosterOptions['gate'];
  readonly #posting: PostContext;

  /** The tick running, which a tick() meanwhile returns. */
  #ticking: Promise<StatsOutcome> | undefined;
  /**
   * When the last tick that reached the directory began, or sent its post if that was later (it
   * waited behind interactive ups for the directory's limits): the interval is measured from it,
   * so that the next post never reaches the directory sooner than the interval after this one.
   */
  #lastPostStartedAt: number | undefined;
  /** When this tick's post last went out (the directory client's onSend). */
  #sentAt: number | undefined;
  /** Ticks that reached the directory and failed since the last success, for the recovery line. */
  #failedTicks = 0;
  #lastFailureCode: string | undefined;

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
    this.#onOutcome = options.onOutcome;
    this.#gate = options.gate;
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
    this.#loop = new TaskLoop({
      name: 'stats poster',
      logger: this.#log,
      setTimer: options.setTimer,
      stopTimeoutMs: duration('stopTimeoutMs', options.stopTimeoutMs, DEFAULT_STOP_TIMEOUT_MS),
      onStopped: (unanswered) => {
        if (unanswered) this.#log.warn({ unanswered }, 'stats poster stopped; a post was still in flight');
        else this.#log.info('stats poster stopped');
      },
    });
    this.#posting = {
      directory: this.#directory,
      log: this.#log,
      loop: this.#loop,
      retry: this.#retry,
      random: this.#random,
      now: this.#now,
      intervalMs: this.#intervalMs,
      attemptTimeoutMs: this.#attemptTimeoutMs,
      botId: options.botId,
      onSend: (at) => {
        this.#sentAt = at;
      },
    };
  }

  /** Idempotent; schedules the first readiness check. A stopped poster does not start again. */
  start(): void {
    if (!this.#loop.start()) {
      if (this.#loop.stopRequested) this.#log.debug('stats poster is stopped; start ignored');
      return;
    }
    this.#log.info(
      { intervalMs: this.#intervalMs, firstDelayMs: this.#firstDelayMs },
      'stats poster started; the first post waits until every shard is ready',
    );
    try {
      if (this.#lastPostStartedAt === undefined) {
        this.#scheduleCheck(this.#startDelayMs);
      } else {
        // A tick() before start() already posted: keep its interval rather than post again soon.
        this.#scheduleTick(this.#lastPostStartedAt + this.#intervalMs - this.#now());
      }
    } catch (err) {
      this.#loop.internalError(err, 'start');
    }
  }

  /** Cancels timers and waits for the post in flight (bounded, then cancelled). Idempotent. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Runs one attempt now; while one runs, returns the running one's promise. Never rejects. */
  tick(): Promise<StatsOutcome> {
    if (this.#ticking) return this.#ticking;
    if (this.#loop.stopRequested) {
      // The directory client is likely closed by now; nothing is sent and no outcome is reported.
      this.#log.debug('stats poster is stopped; tick ignored');
      return Promise.resolve('failed');
    }
    const started = this.#now();
    this.#sentAt = undefined;
    const ticking = this.#loop.run(async () => {
      let result: TickResult;
      try {
        // A trace a tick: its snapshot, the leader's turn in the store, the POST /stats.
        result = await inSpan('stats post', { root: true }, async () => {
          const done = await this.#run(started);
          annotate({ 'stats.outcome': done.outcome });
          return done;
        });
      } catch (err) {
        this.#loop.internalError(err, 'tick');
        result = { outcome: 'failed', code: 'Unexpected' };
      }
      const outcome = this.#finish(result, started);
      this.#ticking = undefined;
      return outcome;
    });
    this.#ticking = ticking;
    return ticking;
  }

  // ---- one tick ----

  async #run(started: number): Promise<TickResult> {
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
    let gate: StatsGate | undefined;
    if (this.#gate) {
      gate = await this.#askGate(started);
      if (!gate.go) {
        this.#log.debug({ reason: gate.reason }, 'another host posts the stats this time');
        return {
          outcome: 'skipped-not-leader',
          code: gate.reason,
          ...(gate.retryInMs === undefined ? {} : { retryInMs: gate.retryInMs }),
        };
      }
    }
    const result = await postStats(this.#posting, check.totals, gate);
    if (result.outcome === 'posted' && gate?.go && gate.done) {
      const sentAgoMs = Math.max(0, this.#now() - (this.#sentAt ?? started));
      await gate.done(sentAgoMs).catch((err: unknown) => {
        this.#log.warn(
          { err: failureOf(err).message },
          'could not record the stats post for the other hosts',
        );
      });
    }
    return result;
  }

  /** The gate's answer; one that fails counts as "not now" (nothing is posted on a doubt). */
  async #askGate(started: number): Promise<StatsGate> {
    try {
      return await (this.#gate as NonNullable<StatsPosterOptions['gate']>)(this.#now() - started);
    } catch (err) {
      this.#log.warn({ err: failureOf(err).message }, 'could not ask who posts the stats; skipped');
      return { go: false, reason: 'unknown' };
    }
  }

  async #inspect(): Promise<Inspected> {
    const snapshot = settle<unknown>(() => this.#snapshot());
    const waited = await this.#loop.within(snapshot, this.#snapshotTimeoutMs, true);
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

  #finish(result: TickResult, started: number): StatsOutcome {
    try {
      const durationMs = this.#now() - started;
      const skipped = SKIPPED.has(result.outcome);
      if (!skipped) this.#lastPostStartedAt = Math.max(started, this.#sentAt ?? started);
      if (result.outcome === 'posted') {
        this.#logPosted(result, durationMs);
      } else if (!skipped) {
        this.#failedTicks += 1;
        this.#lastFailureCode = result.code ?? result.outcome;
      }
      this.#emit(result, durationMs);
      if (this.#loop.state === 'running') this.#scheduleAfter(result, started);
    } catch (err) {
      this.#loop.internalError(err, 'finish');
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

  #emit(result: TickResult, durationMs: number): void {
    const info: StatsOutcomeInfo = { durationMs };
    if (result.body !== undefined) info.body = { ...result.body };
    if (result.code !== undefined) info.code = result.code;
    if (result.attempts !== undefined) info.attempts = result.attempts;
    const onOutcome = this.#onOutcome;
    if (onOutcome)
      this.#loop.callHook('onOutcome', () => onOutcome(result.outcome, info), { outcome: result.outcome });
  }

  // ---- scheduling ----

  #scheduleAfter(result: TickResult, started: number): void {
    const now = this.#now();
    if (result.outcome === 'skipped-not-leader') {
      // Another host leads: ask again soon (it may die), or when the interval since its last post ends.
      const soon = Math.min(this.#notReadyRetryMs, this.#intervalMs);
      this.#scheduleTick(Math.min(result.retryInMs ?? soon, soon));
      return;
    }
    if (SKIPPED.has(result.outcome)) {
      if (this.#lastPostStartedAt === undefined) {
        // Readiness was lost before the first post: counts may be settling again, so wait for it anew.
        this.#scheduleCheck(this.#notReadyRetryMs);
      } else {
        // Soon, not a full interval later; but never closer than the interval to the previous post.
        const at = Math.max(now + this.#notReadyRetryMs, this.#lastPostStartedAt + this.#intervalMs);
        this.#scheduleTick(at - now);
      }
      return;
    }
    // Set by #finish for a tick that reached the directory: from its start, or its post's send.
    let at = (this.#lastPostStartedAt ?? started) + this.#intervalMs;
    if (result.notBefore !== undefined) at = Math.max(at, result.notBefore);
    this.#scheduleTick(at - now);
  }

  #scheduleTick(ms: number): void {
    this.#loop.schedule(ms, () => void this.tick(), 'tick');
  }

  #scheduleCheck(ms: number): void {
    this.#loop.schedule(ms, () => this.#check(), 'check');
  }

  /** Before the first post: look at the shards without posting, until all are ready. */
  async #check(): Promise<void> {
    const generation = this.#loop.generation;
    const check = await this.#inspect();
    // A tick() meanwhile schedules the next step itself.
    if (this.#loop.state !== 'running' || generation !== this.#loop.generation || this.#loop.busy) return;
    if (check.kind === 'ready') {
      this.#log.info(
        { shards: check.totals.shards, firstPostInMs: this.#firstDelayMs },
        'every shard is ready; first stats post scheduled',
      );
      this.#scheduleTick(this.#firstDelayMs);
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
    this.#scheduleCheck(this.#notReadyRetryMs);
  }
}
