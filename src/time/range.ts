/**
 * Times from the directory are untrusted numbers. A Date holds ±8.64e15 ms; past that it is an
 * Invalid Date, which renders as `NaN` (`<t:NaN:R>` in Discord). The range kept is narrower:
 * nothing of the directory predates the Unix epoch, and after year 9999 ISO 8601 needs an
 * expanded year (`+010000-…`) that most readers of the CLI's output and JSON reject. A time
 * outside it is unknown: left out or shown as unknown, never as a date.
 */
export const LATEST_TIME_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** True for epoch milliseconds from 1970-01-01 to the end of year 9999. */
export function isUsableTime(ms: number): boolean {
  return Number.isFinite(ms) && ms >= 0 && ms <= LATEST_TIME_MS;
}

/** The Date of epoch milliseconds, or null when the time is unknown or out of range. */
export function usableDate(ms: number | null | undefined): Date | null {
  return ms === null || ms === undefined || !isUsableTime(ms) ? null : new Date(ms);
}

/** Anything below this is taken as Unix seconds (one old sample); above, milliseconds. */
const SECONDS_THRESHOLD = 100_000_000_000;

/** A record's time (seconds or milliseconds), or null when absent (0 too) or out of range. */
export function timestampToDate(value: number | null | undefined): Date | null {
  if (value === null || value === undefined || value <= 0) return null;
  return usableDate(value < SECONDS_THRESHOLD ? value * 1000 : value);
}

/** Node's timers fire at once for anything longer than this: no wait or duration may be longer. */
export const MAX_TIMER_MS = 2_147_483_647;
