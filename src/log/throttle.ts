/**
 * A warning that may repeat every few milliseconds (a store that is down, asked again and again)
 * goes out at most once per `everyMs`: the log says what is wrong without being filled by it.
 */
/**
 * A shared ledger in the store (the directory's limits, IDENTIFY turns) that cannot be read is
 * said at most this often: a turn is asked again every 250 ms to 1 s.
 */
export const LEDGER_WARN_EVERY_MS = 10_000;

export function logThrottle(everyMs: number, now: () => number = Date.now): () => boolean {
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    const at = now();
    if (at - last < everyMs) return false;
    last = at;
    return true;
  };
}
