/**
 * The scheduling rule of the directory's rate limits, pure: when each waiting request may start,
 * by priority class and then in arrival order, over the sliding-window logs of its buckets. The
 * in-process limiter (rate-limiter.ts) runs it over its own logs, the shared one
 * (shared-rate-limiter.ts) over a ledger several processes keep.
 */

/**
 * 'critical': what the bot exists for and may not be crowded out (an /up, the statistics post);
 * 'interactive': a person waits (a look-up); 'background': nobody waits (reports, suggestions,
 * refreshing a cache). Taken in this order.
 */
export type Priority = 'critical' | 'interactive' | 'background';
export const PRIORITY_ORDER: readonly Priority[] = ['critical', 'interactive', 'background'];

/** Index of the first element greater than `value` in an ascending array. */
function upperBound(sorted: readonly number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function insertSorted(sorted: number[], value: number): void {
  sorted.splice(upperBound(sorted, value), 0, value);
}

/** A bucket as the projection sees it: its limit, its window with the margin, a 429's hold. */
export interface ProjectedBucket {
  max: number;
  windowMs: number;
  blockedUntil: number;
}

export interface ProjectedMember {
  buckets: readonly string[];
  priority: Priority;
}

/** Earliest time >= from at which one more entry fits in every bucket, given the simulated logs. */
function earliest(
  logs: Map<string, number[]>,
  bucketOf: (name: string) => ProjectedBucket,
  buckets: readonly string[],
  from: number,
): number {
  let t = from;
  for (let guard = 0; guard < 1000; guard++) {
    let next = t;
    for (const name of buckets) {
      const { max, windowMs, blockedUntil } = bucketOf(name);
      if (blockedUntil > next) next = blockedUntil;
      // The simulated log is kept sorted: the window (t - window, t] is a slice found by bisection.
      const log = logs.get(name) ?? [];
      const end = upperBound(log, t);
      const count = end - upperBound(log, t - windowMs);
      if (count >= max) {
        const freeing = log[end - max];
        if (freeing !== undefined && freeing + windowMs > next) next = freeing + windowMs;
      }
    }
    if (next === t) return t;
    t = next;
  }
  return t;
}

/**
 * The scheduling rule, pure: a start time for each member, taken by priority class and then in
 * the members' order, each reserving a simulated slot in `logs` (per bucket, the times its
 * current entries count at, ascending; changed in place). A lower class never starts before the
 * projected start of a higher class in a shared bucket. Used by this limiter over its own logs
 * and by the shared one (shared-rate-limiter.ts) over a ledger several processes keep.
 */
export function projectStarts<M extends ProjectedMember & object>(
  now: number,
  logs: Map<string, number[]>,
  members: readonly M[],
  bucketOf: (name: string) => ProjectedBucket,
): Map<M, number> {
  const floor = new Map<string, number>();
  const result = new Map<M, number>();
  for (const priority of PRIORITY_ORDER) {
    const levelFloor = new Map<string, number>();
    for (const member of members) {
      if (member.priority !== priority) continue;
      let from = now;
      for (const b of member.buckets) from = Math.max(from, floor.get(b) ?? now);
      const t = earliest(logs, bucketOf, member.buckets, from);
      result.set(member, t);
      for (const b of member.buckets) {
        let log = logs.get(b);
        if (!log) {
          log = [];
          logs.set(b, log);
        }
        insertSorted(log, t);
        levelFloor.set(b, Math.max(levelFloor.get(b) ?? now, t));
      }
    }
    for (const [b, t] of levelFloor) floor.set(b, Math.max(floor.get(b) ?? now, t));
  }
  return result;
}
