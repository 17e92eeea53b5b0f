/**
 * Whether the store's file can be used, as the SQLite engine finds out statement by statement:
 * a read-only, damaged, full or failing file is told apart from "busy" (which waiting cures).
 * The first failure of the kind says so in one error line and makes the process not ready
 * (/readyz); the next failures are counted and told once a minute, not once each. A read-only
 * or failing file that is written again is well again; a full one when its filesystem has room
 * again (room.ts: a write going through proves nothing there), looked at every second and at
 * each write, with the writes refused meanwhile (held: `hold`) written then; a damaged one stays
 * so until it is replaced and the bot restarted. Each change of state is one line.
 */

import { errorLine } from '../log/error-line.js';
import { logThrottle } from '../log/throttle.js';
import type { StoreLogger } from './logger.js';
import { type HeldWrite, hasRoom, isFull, WriteBacklog } from './room.js';
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
  /** Writes refused for lack of room, waiting to be written (the metrics). */
  waiting?(): number;
  /**
   * A write failed with `err`: when it says the disk is full, `write` is held and written once
   * there is room (true); otherwise false, and nothing is held. `key` names what it writes: a
   * second hold of the same key replaces the first.
   */
  hold?(err: unknown, key: string, write: HeldWrite): boolean;
  /** The store is closing: no more looking for room. */
  stop?(): void;
}

export interface FileHealthOptions {
  /** Whether the file's filesystem has room again (room.ts hasRoom). */
  hasRoom?: (file: string) => boolean;
  /** How often a full file looks for room. */
  roomCheckEveryMs?: number;
}

/** A full file looks for room this often (a statfs; a small probe file once statfs says so). */
export const ROOM_CHECK_EVERY_MS = 1_000;

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
  /** Failures for lack of room, ever: a room check that saw one meanwhile proves nothing. */
  #fullFailures = 0;
  readonly #backlog = new WriteBacklog();
  readonly #hasRoom: (file: string) => boolean;
  readonly #roomCheckEveryMs: number;
  #roomTimer: NodeJS.Timeout | undefined;
  #checking = false;
  #stopped = false;

  constructor(
    file: string,
    logger: StoreLogger | undefined,
    now: () => number = Date.now,
    options: FileHealthOptions = {},
  ) {
    this.#file = file;
    this.#logger = logger;
    this.#now = now;
    this.#mayWarn = logThrottle(STILL_BROKEN_EVERY_MS, now);
    this.#hasRoom = options.hasRoom ?? hasRoom;
    this.#roomCheckEveryMs = options.roomCheckEveryMs ?? ROOM_CHECK_EVERY_MS;
  }

  problem(): StoreProblem | undefined {
    return this.#problem;
  }

  waiting(): number {
    return this.#backlog.size;
  }

  hold(err: unknown, key: string, write: HeldWrite): boolean {
    if (this.#stopped || !isFull(err)) return false;
    if (this.#backlog.hold(key, write)) return true;
    if (this.#mayWarn())
      this.#logger?.warn(
        { file: this.#file, waiting: this.#backlog.size },
        `the SQLite file ${this.#file} still cannot grow and ${this.#backlog.size} writes wait: more are lost until there is room`,
      );
    return false;
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#roomTimer);
    this.#roomTimer = undefined;
  }

  /** A statement failed: a broken file is told (once, then once a minute); anything else is not ours. */
  failed(err: unknown): void {
    const problem = fileProblem(err);
    if (problem === undefined) return;
    const code = codeOf(err) ?? 'SQLITE_ERROR';
    if (problem === 'full') this.#fullFailures += 1;
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
      if (problem === 'full') this.#lookForRoom();
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

  /**
   * A write went through: a read-only or failing file can be written again (a damaged one is not
   * mended by it). A full one is not believed (room.ts): it looks for room at once instead.
   */
  written(): void {
    if (this.#problem === undefined || this.#problem.problem === 'damaged') return;
    if (this.#problem.problem === 'full') {
      void this.#checkRoom();
      return;
    }
    this.#writable();
  }

  #writable(): void {
    const problem = this.#problem?.problem;
    this.#problem = undefined;
    this.#logger?.info(
      { file: this.#file, was: problem },
      `the SQLite file ${this.#file} can be written again`,
    );
  }

  /** While full: a look for room every second (not keeping the process alive for it). */
  #lookForRoom(): void {
    if (this.#roomTimer !== undefined || this.#stopped) return;
    this.#roomTimer = setInterval(() => void this.#checkRoom(), this.#roomCheckEveryMs);
    this.#roomTimer.unref();
  }

  /**
   * Room again: the held writes are written, and with none of them (nor any other write) refused
   * for lack of room meanwhile the file is writable again: one line, /readyz ready.
   */
  async #checkRoom(): Promise<void> {
    if (this.#checking || this.#stopped) return;
    if (this.#problem?.problem !== 'full') {
      // Another problem took its place (a damaged file): room is not what it waits for.
      clearInterval(this.#roomTimer);
      this.#roomTimer = undefined;
      return;
    }
    this.#checking = true;
    try {
      if (!this.#hasRoom(this.#file)) return;
      const fullBefore = this.#fullFailures;
      const held = this.#backlog.size;
      const outcome = await this.#backlog.flush((key, err) =>
        this.#logger?.warn(
          { file: this.#file, key, error: errorLine(err) },
          'a write held for lack of room failed when written; it is let go',
        ),
      );
      if (outcome !== 'done' || this.#fullFailures !== fullBefore || this.#problem?.problem !== 'full')
        return;
      clearInterval(this.#roomTimer);
      this.#roomTimer = undefined;
      this.#problem = undefined;
      this.#logger?.info(
        { file: this.#file, was: 'full', written: held },
        `the SQLite file ${this.#file} can be written again: the disk has room (${held} held writes written)`,
      );
    } finally {
      this.#checking = false;
    }
  }
}
