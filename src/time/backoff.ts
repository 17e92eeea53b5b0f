/**
 * How long to wait before trying again: the one rule for every retry of the bot (the background
 * tasks, and the store's tries at a locked SQLite file).
 */

export interface Backoff {
  baseMs: number;
  capMs: number;
}

/** Equal jitter: tries that failed together spread out, yet none returns before half its step. */
export function backoffDelay(failures: number, backoff: Backoff, random: () => number): number {
  const step = Math.min(backoff.capMs, backoff.baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(step / 2 + random() * (step / 2));
}
