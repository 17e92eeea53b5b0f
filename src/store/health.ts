/**
 * Whether the store's file can be used, as the SQLite engine finds out statement by statement:
 * a read-only, damaged, full or failing file is told apart from "busy" (which waiting cures).
 * The first failure of the kind says so in one error line and makes the process not ready
 * (/readyz); the next failures are counted and told once a minute, not once each. A file that
 * could not be written and then is (space freed, the file writable again) is well again; a
 * damaged one stays so until it is replaced and the bot restarted.
 */
import { logThrottle } from '../log/throttle.js';
import type { StoreLogger } from './logger.js';
import { codeOf, type FileProblem, fileProblem } from './sqlite-errors.js';

export interface StoreProblem {
  problem: FileProblem;
  /** SQLite's extended code of the first failure. */
  code: string;
  /** Epoch ms of the first failure. */
  since: number;
}

/** What /readyz and the metrics read: undefined while the store is well. */
export interface StoreHealth {
  problem(): StoreProblem | undefined;
}

/** How often the failures that follow the first are told. */
export const STILL_BROKEN_EVERY_MS = 60_000;

const SAID: Record<FileProblem, string> = {
  'read-only': 'cannot be written (read-only)',
  damaged: 'is damaged',
  full: 'cannot grow: the disk is full',
  failing: 'cannot be read or written (input/output error)',
};

const WHAT_TO_DO: Record<FileProblem, string> = {
  'read-only': 'make the file and its folder writable by the bot',
  damaged: 'stop the bot and restore the file from a backup',
  full: 'free some space',
  failing: 'check the disk',
};

export class FileHealth implements StoreHealth {
  readonly #file: string;
  readonly #logger: StoreLogger | undefined;
  readonly #now: () => number;
  #mayWarn: () => boolean;
  #problem: StoreProblem | undefined;
  /** Failures since the last line about them. */
  #failures = 0;

  constructor(file: string, logger: StoreLogger | undefined, now: () => number = Date.now) {
    this.#file = file;
    this.#logger = logger;
    this.#now = now;
    this.#mayWarn = logThrottle(STILL_BROKEN_EVERY_MS, now);
  }

  problem(): StoreProblem | undefined {
    return this.#problem;
  }

  /** A statement failed: a broken file is told (once, then once a minute); anything else is not ours. */
  failed(err: unknown): void {
    const problem = fileProblem(err);
    if (problem === undefined) return;
    const code = codeOf(err) ?? 'SQLITE_ERROR';
    if (this.#problem === undefined || this.#problem.problem !== problem) {
      this.#problem = { problem, code, since: this.#now() };
      this.#failures = 0;
      // The first "still" line comes a minute after this one, not with the next failure.
      this.#mayWarn = logThrottle(STILL_BROKEN_EVERY_MS, this.#now);
      this.#mayWarn();
      this.#logger?.error(
        { file: this.#file, problem, code },
        `the SQLite file ${this.#file} ${SAID[problem]}: ${WHAT_TO_DO[problem]}; the bot reports itself not ready until then`,
      );
      return;
    }
    this.#failures += 1;
    if (!this.#mayWarn()) return;
    this.#logger?.warn(
      { file: this.#file, problem, code, failures: this.#failures },
      `the SQLite file ${this.#file} still ${SAID[problem]}`,
    );
    this.#failures = 0;
  }

  /** A write went through: a file that could not be written can be again (a damaged one is not mended). */
  written(): void {
    if (this.#problem === undefined || this.#problem.problem === 'damaged') return;
    this.#logger?.info({ file: this.#file }, `the SQLite file ${this.#file} can be written again`);
    this.#problem = undefined;
  }
}
