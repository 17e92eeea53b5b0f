/**
 * A warning that may repeat every few milliseconds (a store that is down, asked again and again)
 * goes out at most once per `everyMs`: the log says what is wrong without being filled by it.
 */
export function logThrottle(everyMs: number, now: () => number = Date.now): () => boolean {
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    const at = now();
    if (at - last < everyMs) return false;
    last = at;
    return true;
  };
}
