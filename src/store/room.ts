/**
 * A SQLite file on a full disk, and what is kept for when it has room again:
 *
 * - `hasRoom`: whether the file's filesystem has room again, which decides when a full file is
 *   "writable again". A write that goes through proves nothing: SQLite reuses the pages its WAL
 *   file already holds, so small writes succeed between failures on a disk that is still full
 *   (taken as "well again", that made the state flap: 17 lines for 5 ups). Room is decided by
 *   the filesystem itself, with a margin: statfs must show ROOM_MARGIN free to an unprivileged
 *   user (min(16 MiB, a tenth of the filesystem)), then a probe file of up to 1 MiB beside the
 *   store must be written and removed, which also catches a quota (statfs sees the disk, not
 *   the user's share). The margin makes a hysteresis: the file is full at 0 bytes left and
 *   writable again only well above that, so a disk hovering at its limit does not flap either.
 * - `WriteBacklog`: writes refused for lack of room (an up the directory took, the reminder set
 *   from it), held in memory, bounded, each under a key (a second hold of the same key replaces
 *   the first: one up, one row), and written in order once there is room. Kept in memory only:
 *   a process killed while the disk is still full loses them (docs/data.md).
 */
import { statfsSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { StoreUnavailableError } from './errors.js';
import { fileProblem } from './sqlite-errors.js';

const MIB = 1024 * 1024;
/** The most free space asked for before a full file is writable again. */
const ROOM_MARGIN_MAX = 16 * MIB;
/** The largest probe written (a smaller filesystem's margin is smaller). */
const PROBE_MAX = MIB;

/** Whether the filesystem holding `file` has room again (see above). Never throws. */
export function hasRoom(file: string): boolean {
  const dir = dirname(file);
  let margin: number;
  try {
    const fs = statfsSync(dir);
    margin = Math.min(ROOM_MARGIN_MAX, (fs.blocks * fs.bsize) / 10);
    if (fs.bavail * fs.bsize < margin) return false;
  } catch {
    // No statfs here (an unusual filesystem): the probe alone decides.
    margin = PROBE_MAX;
  }
  const probe = `${file}-room`;
  try {
    writeFileSync(probe, Buffer.alloc(Math.min(PROBE_MAX, Math.floor(margin)), 1));
    return true;
  } catch {
    return false;
  } finally {
    try {
      unlinkSync(probe);
    } catch {
      // Not made, or gone already.
    }
  }
}

/** The SQLite error inside a store's error (StoreUnavailableError keeps it as its cause). */
function sqliteCause(err: unknown): unknown {
  let at: unknown = err;
  for (let depth = 0; depth < 5 && at instanceof Error; depth++) {
    if (fileProblem(at) !== undefined) return at;
    at = (at as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Whether `err` (a store's error or SQLite's own) says the file could not grow: the disk is full. */
export function isFull(err: unknown): boolean {
  return fileProblem(sqliteCause(err)) === 'full';
}

/** Writes held at most: an up's row and its reminder are small; this many is hours of a busy bot. */
export const HELD_MAX = 10_000;

export type HeldWrite = () => Promise<void>;

/** 'later': one could not be written yet (no room, or the file busy); it and those after it stay. */
export type FlushOutcome = 'done' | 'later';

export class WriteBacklog {
  readonly #held = new Map<string, HeldWrite>();
  readonly #max: number;

  constructor(max = HELD_MAX) {
    this.#max = max;
  }

  get size(): number {
    return this.#held.size;
  }

  /** Holds `write` under `key` (replacing an earlier one); false when the backlog is at its bound. */
  hold(key: string, write: HeldWrite): boolean {
    if (this.#held.has(key)) this.#held.delete(key);
    else if (this.#held.size >= this.#max) return false;
    this.#held.set(key, write);
    return true;
  }

  /**
   * Writes what is held, in the order held. One refused for lack of room, or that finds the file
   * busy, stops the run (it and those after it stay: 'later'); one that fails otherwise is let go
   * (waiting would not cure it) and told to `dropped`.
   */
  async flush(dropped: (key: string, err: unknown) => void): Promise<FlushOutcome> {
    for (const [key, write] of [...this.#held]) {
      try {
        await write();
      } catch (err) {
        if (isFull(err) || err instanceof StoreUnavailableError) return 'later';
        dropped(key, err);
      }
      // A hold of the same key made while this one was written is newer: it stays.
      if (this.#held.get(key) === write) this.#held.delete(key);
    }
    return 'done';
  }
}
