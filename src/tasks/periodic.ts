/**
 * Timed background work (a heartbeat, a lease, a pruner, a refresh) on the TaskLoop.
 */
import type { Logger } from '../log/logger.js';
import { logThrottle } from '../log/throttle.js';
import { TaskLoop, type TaskState } from './loop.js';
import type { BackgroundTask } from './tasks.js';

const noop = (): void => {};

/** How long stop() waits for a periodic task's run in flight by default: its work is short, or done again. */
export const PERIODIC_STOP_TIMEOUT_MS = 1_000;
/** A periodic task that keeps failing says so at once, then at most this often. */
export const FAILURE_WARN_EVERY_MS = 60_000;

export interface PeriodicTaskOptions {
  /** How the task is named in the loop's log lines, such as 'host heartbeat'. */
  name: string;
  /** From the start of one run to the start of the next. */
  everyMs: number;
  /** From start() to the first run. Default 0: at once. */
  firstDelayMs?: number | undefined;
  /** One run. What it throws is logged (`failure`), and the next run comes as usual. */
  run: (signal: AbortSignal) => Promise<void> | void;
  /** The warn line a failed run is logged with, with its error (`err`). */
  failure: string;
  logger: Logger;
  /** How long stop() waits for the run in flight before cancelling it. Default PERIODIC_STOP_TIMEOUT_MS. */
  stopTimeoutMs?: number | undefined;
}

/**
 * A job run every `everyMs` on a TaskLoop: never two runs at once (a tick that finds the last run
 * still going skips), a timer that never keeps the process alive nor fires after stop(), a stop
 * bounded like every task's, and a failure logged (at once, then at most once a minute while it
 * goes on) rather than ending the task.
 */
export class PeriodicTask implements BackgroundTask {
  readonly name: string;
  readonly #options: PeriodicTaskOptions;
  readonly #loop: TaskLoop;
  readonly #warn: () => boolean;
  /** Failed runs in a row. */
  #failures = 0;
  #running: Promise<void> | undefined;
  /** The run asked for by runNow() while one was in flight: it follows that one. */
  #next: Promise<void> | undefined;

  constructor(options: PeriodicTaskOptions) {
    this.name = options.name;
    this.#options = options;
    this.#loop = new TaskLoop({
      name: options.name,
      logger: options.logger,
      stopTimeoutMs: options.stopTimeoutMs ?? PERIODIC_STOP_TIMEOUT_MS,
      onStopped: noop,
    });
    this.#warn = logThrottle(FAILURE_WARN_EVERY_MS);
  }

  get state(): TaskState {
    return this.#loop.state;
  }

  /** The first run after firstDelayMs, then one every everyMs; false when started or stopped already. */
  start(): boolean {
    if (!this.#loop.start()) return false;
    this.#tickAfter(this.#options.firstDelayMs ?? 0);
    return true;
  }

  /**
   * One run now, or right after the one in flight (never two at once); resolves when it has ended.
   * Works before start() too; does nothing once stop() was called. Never rejects.
   */
  runNow(): Promise<void> {
    if (this.#loop.stopRequested) return Promise.resolve();
    if (!this.#running) return this.#runOnce();
    this.#next ??= this.#running.then(() => {
      this.#next = undefined;
      return this.runNow();
    });
    return this.#next;
  }

  /** Cancels the timer; lets the run in flight end (bounded: stopTimeoutMs, then its signal aborts). */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  #tickAfter(ms: number): void {
    this.#loop.schedule(
      ms,
      () => {
        // Counted from this run's start, as setInterval would; a run that takes longer skips a tick.
        this.#tickAfter(this.#options.everyMs);
        if (!this.#running) void this.#runOnce();
      },
      'tick',
    );
  }

  #runOnce(): Promise<void> {
    const running: Promise<void> = this.#loop
      .run(() => this.#attempt())
      .catch((err: unknown) => this.#loop.internalError(err, 'run'))
      .finally(() => {
        if (this.#running === running) this.#running = undefined;
      });
    this.#running = running;
    return running;
  }

  async #attempt(): Promise<void> {
    const answer = await this.#loop.attempt(async (signal) => this.#options.run(signal));
    if (answer.ok) {
      this.#failures = 0;
      return;
    }
    this.#failures += 1;
    if (answer.abandoned || !this.#warn()) return;
    const failures = this.#failures;
    this.#options.logger.warn(
      { err: String(answer.error), ...(failures > 1 ? { failures } : {}) },
      this.#options.failure,
    );
  }
}
