/**
 * The core a background task runs on: one timer slot, one job in flight whose request stop() can
 * cancel, waits that stop() cuts short, a bounded stop, and the log lines around them.
 *
 * The task keeps its own policy (what to send, when to retry, what a failure means); the loop keeps
 * the parts that are easy to get subtly wrong and must be the same everywhere: a timer that never
 * keeps the process alive nor fires after stop(), a request that cannot hang the task for good,
 * a stop that ends within stopTimeoutMs plus a short grace whatever the request does, a hook that
 * cannot break the task, and a directory that cannot make the task wait a day.
 *
 * A job that only has to run every so often (the host's heartbeat, the history pruner) is a
 * PeriodicTask on it; every background task is a BackgroundTask to the composition root
 * (app/tasks.ts, app/services.ts, app/sharded.ts), which lists them, starts them all once connected
 * (startTasks) and stops them all at shutdown (stopTasks).
 */
import type { Logger } from '../log/logger.js';
import { MAX_TIMER_MS } from '../time/range.js';
import { type Failure, failureOf } from './failure.js';

export interface Timer {
  clear(): void;
}

export type SetTimer = (fn: () => void, ms: number) => Timer;

export { MAX_TIMER_MS };

/** How long stop() waits for the job in flight by default before cancelling its request. */
export const DEFAULT_STOP_TIMEOUT_MS = 5_000;
/** After cancelling, how long a request still gets to let go before it is given up. */
export const ABORT_GRACE_MS = 1_000;

/** setTimeout, unref'd so that a task never keeps the process alive, and clamped to what Node can wait. */
export function unrefTimer(fn: () => void, ms: number): Timer {
  const handle = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
  handle.unref();
  return { clear: () => clearTimeout(handle) };
}

export { type Backoff, backoffDelay } from '../time/backoff.js';

/** What every task takes besides its own options; tests hand in a fake clock, timer and dice. */
export interface TaskOptions {
  logger: Logger;
  /** For the backoff's jitter. Default Math.random. */
  random?: () => number;
  now?: () => number;
  /** Default: unrefTimer, so that a task never keeps the process alive. */
  setTimer?: SetTimer;
  /** How long stop() waits for the job in flight before cancelling its request. Default 5 s. */
  stopTimeoutMs?: number;
}

export type TaskState = 'idle' | 'running' | 'stopping' | 'stopped';

/** A wait for a promise that never rejects: its value, or why it ended without one. */
export type Waited<T> = { settled: true; value: T } | { settled: false; interrupted: boolean };

/** What a call came to: its value or what it threw. */
export type Settled<T> = { ok: true; value: T } | { ok: false; abandoned: false; error: unknown };

export type Attempt<T> =
  | Settled<T>
  /** Cancelled at its timeout and still unsettled after a grace: it may still be running. */
  | { ok: false; abandoned: true };

export interface TaskLoopOptions {
  /** How the task is named in the loop's log lines, such as 'stats poster'. */
  name: string;
  logger: Logger;
  /** Default: unrefTimer. */
  setTimer?: SetTimer | undefined;
  /** How long stop() waits for the job in flight before cancelling its request. */
  stopTimeoutMs: number;
  /** The task's last words, once the job in flight has ended or been given up (`unanswered`). */
  onStopped: (unanswered: boolean) => void;
}

interface Flight {
  /** Settles, never rejects, when the job has ended. */
  done: Promise<void>;
}

const noop = (): void => undefined;

export class TaskLoop {
  readonly #name: string;
  readonly #log: Logger;
  readonly #setTimer: SetTimer;
  readonly #stopTimeoutMs: number;
  readonly #onStopped: (unanswered: boolean) => void;

  #state: TaskState = 'idle';
  #timer: Timer | undefined;
  /** Bumped whenever the timer slot changes, so that work begun by a timer knows when it is stale. */
  #generation = 0;
  #flight: Flight | undefined;
  /** The request of the attempt in flight: what stop() cancels. */
  #controller: AbortController | undefined;
  /** Waits that stop() cuts short. */
  readonly #wakers = new Set<() => void>();
  #stopping: Promise<void> | undefined;

  constructor(options: TaskLoopOptions) {
    this.#name = options.name;
    this.#log = options.logger;
    this.#setTimer = options.setTimer ?? unrefTimer;
    this.#stopTimeoutMs = options.stopTimeoutMs;
    this.#onStopped = options.onStopped;
  }

  get state(): TaskState {
    return this.#state;
  }

  /** True from the call of stop() on. */
  get stopRequested(): boolean {
    return this.#state === 'stopping' || this.#state === 'stopped';
  }

  /** Changes with every schedule() and cancel(). */
  get generation(): number {
    return this.#generation;
  }

  /** True while a job runs. */
  get busy(): boolean {
    return this.#flight !== undefined;
  }

  /** From idle to running; false when the loop has started or been stopped already. */
  start(): boolean {
    if (this.#state !== 'idle') return false;
    this.#state = 'running';
    return true;
  }

  /**
   * Runs `fn` after `ms` in the loop's one timer slot: a later call replaces it, stop() cancels it,
   * and it does nothing unless the loop is running. What `fn` throws is logged as an internal error.
   */
  schedule(ms: number, fn: () => unknown, where = 'timer'): void {
    this.cancel();
    const generation = this.#generation;
    this.#timer = this.#setTimer(
      () => {
        if (generation !== this.#generation) return;
        this.#timer = undefined;
        if (this.#state !== 'running') return;
        try {
          Promise.resolve(fn()).catch((err: unknown) => this.internalError(err, where));
        } catch (err) {
          this.internalError(err, where);
        }
      },
      Math.max(0, ms),
    );
  }

  /** Empties the timer slot. */
  cancel(): void {
    this.#timer?.clear();
    this.#timer = undefined;
    this.#generation += 1;
  }

  /**
   * Runs `job` as the task's one job in flight: stop() waits for it (bounded) and cancels its
   * attempt. `job` must not reject. The loop is no longer busy by the time the promise settles.
   * Call it only when the loop is not busy.
   */
  run<T>(job: () => Promise<T>): Promise<T> {
    const flight: Flight = { done: Promise.resolve() };
    this.#flight = flight;
    const result = (async () => {
      try {
        return await job();
      } finally {
        if (this.#flight === flight) this.#flight = undefined;
      }
    })();
    flight.done = result.then(noop, noop);
    return result;
  }

  /**
   * One request, with a signal stop() aborts. With `timeoutMs`, a request that has not settled by
   * then is aborted, and given up ABORT_GRACE_MS later, so that a hung request cannot stall the task.
   * Never rejects, even when `request` throws synchronously; `request` is called synchronously.
   */
  async attempt<T>(request: (signal: AbortSignal) => Promise<T>, timeoutMs?: number): Promise<Attempt<T>> {
    const controller = new AbortController();
    this.#controller = controller;
    try {
      const answer = settle(() => request(controller.signal));
      if (timeoutMs === undefined) return await answer;
      let waited = await this.within(answer, timeoutMs);
      if (waited.settled) return waited.value;
      controller.abort();
      waited = await this.within(answer, ABORT_GRACE_MS);
      return waited.settled ? waited.value : { ok: false, abandoned: true };
    } finally {
      if (this.#controller === controller) this.#controller = undefined;
    }
  }

  /** Waits `ms`; false when stop() cut the wait short (or had been called already). */
  async sleep(ms: number): Promise<boolean> {
    const waited = await this.within(undefined, ms, true);
    return waited.settled || !waited.interrupted;
  }

  /**
   * `promise` (which must not reject) or the end of `ms`, whichever comes first; with
   * `interruptible`, also the start of stop().
   */
  within<T>(promise: Promise<T> | undefined, ms: number, interruptible = false): Promise<Waited<T>> {
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
      if (interruptible && this.stopRequested) {
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

  /**
   * Cancels the timer and the waits, lets the job in flight end (stopTimeoutMs, then its request
   * is cancelled and it gets ABORT_GRACE_MS more), then calls onStopped. Idempotent; never rejects.
   */
  stop(): Promise<void> {
    this.#stopping ??= this.#shutdown().catch((err: unknown) => this.internalError(err, 'stop'));
    return this.#stopping;
  }

  async #shutdown(): Promise<void> {
    this.#state = 'stopping';
    this.cancel();
    for (const wake of [...this.#wakers]) wake();
    const flight = this.#flight;
    let unanswered = false;
    if (flight) {
      let waited = await this.within(flight.done, this.#stopTimeoutMs);
      if (!waited.settled) {
        this.#controller?.abort();
        waited = await this.within(flight.done, ABORT_GRACE_MS);
        unanswered = !waited.settled;
      }
    }
    this.#state = 'stopped';
    this.#onStopped(unanswered);
  }

  /**
   * The wait a 429 asks for, or undefined when it names none. A directory may ask for a day
   * (`Retry-After: 86400`), by mistake or to shut a token out; a background task waits `capMs` at
   * most and tries again, and says so in one warn line naming both waits.
   */
  retryAfter(failure: Failure, capMs: number): number | undefined {
    const asked = failure.retryAfterMs;
    if (asked === undefined || !Number.isFinite(asked) || asked < 0) return undefined;
    if (asked <= capMs) return asked;
    this.#log.warn(
      { retryAfterMs: asked, capMs, status: failure.status },
      `the directory asked the ${this.#name} to wait ${asked} ms; it waits ${capMs} ms, the most it accepts`,
    );
    return capMs;
  }

  /** Calls a hook of the task's owner; one that throws is logged: broken metrics must not stop the task. */
  callHook(name: string, call: () => void, fields: Record<string, unknown>): void {
    try {
      call();
    } catch (err) {
      this.#log.warn({ ...fields, error: failureOf(err).message }, `${name} hook threw`);
    }
  }

  internalError(err: unknown, where: string): void {
    try {
      this.#log.error({ where, error: failureOf(err).message }, `${this.#name} internal error`);
    } catch {
      // Nothing is left to tell; the timer or caller that got here must not see this either.
    }
  }
}

/** Calls `fn` at once; never rejects, even when `fn` throws synchronously. */
export async function settle<T>(fn: () => Promise<T> | T): Promise<Settled<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, abandoned: false, error };
  }
}
