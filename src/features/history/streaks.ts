/**
 * Streaks and reaction times (issue 25), from the history of successful ups (store/history.ts):
 *
 * - The server's streak: consecutive cooldown windows in which someone upped within
 *   STREAK_GRACE_MS of the up becoming possible. A window whose up came later, or did not come
 *   while its grace ran, ends it. An up whose window is not known (the first the bot saw, or one
 *   after the server's reminder schedule was lost) begins one: nothing says the windows before it
 *   were kept.
 * - A member's streak: consecutive days on which they upped, days in the server's time zone
 *   (`/settings timezone`, UTC by default): a calendar day there, whatever its length (a day
 *   of a daylight-saving change has 23 or 25 hours).
 * - A reaction: from the moment the up was possible to the up.
 *
 * Pure functions of the rows and the clock: the /up answer and /leaderboard read them.
 */

/** How long after an up became possible it still keeps the server's streak. */
export const STREAK_GRACE_MS = 30 * 60_000;

const DAY_MS = 86_400_000;

/** One up, as the server's streak reads it. */
export interface TimedUp {
  at: number;
  /** When it became possible (the cooldown's end before it); null when not known. */
  possibleAt: number | null;
}

export interface ServerStreak {
  /** Windows in a row, up to the last up; 0 when the last window's grace ran out with no up. */
  current: number;
  best: number;
  /**
   * The streak that the last up, or the grace of the open window, ended (2 or more windows), and
   * when: undefined when none ended there.
   */
  ended?: { length: number; at: number };
}

/** Was this up within the grace of its window? Null: its window is not known. */
function onTime(up: TimedUp, graceMs: number): boolean | null {
  if (up.possibleAt === null) return null;
  return up.at - up.possibleAt <= graceMs;
}

/**
 * The server's streak from its ups (oldest first), and the window open now: `nextPossibleAt`,
 * when the next up becomes possible (null: not known).
 */
export function serverStreak(
  ups: readonly TimedUp[],
  nextPossibleAt: number | null,
  now: number,
  graceMs = STREAK_GRACE_MS,
): ServerStreak {
  let current = 0;
  let best = 0;
  let ended: ServerStreak['ended'];
  for (const up of ups) {
    const timely = onTime(up, graceMs);
    ended = undefined;
    if (timely === false) {
      if (current >= 2) ended = { length: current, at: (up.possibleAt as number) + graceMs };
      current = 0;
    } else if (timely === null) {
      // Nothing says the windows before it were kept: it begins a streak.
      current = 1;
    } else {
      current += 1;
    }
    best = Math.max(best, current);
  }
  // The open window's grace ran out with no up: the streak ended then.
  const last = ups.at(-1);
  if (nextPossibleAt !== null && now > nextPossibleAt + graceMs && (!last || last.at < nextPossibleAt)) {
    if (current >= 2) ended = { length: current, at: nextPossibleAt + graceMs };
    current = 0;
  }
  return { current, best, ...(ended ? { ended } : {}) };
}

/** The calendar day of `at` in `timeZone`, as a day number (days since 1970-01-01 there). */
export function localDay(at: number, timeZone: string): number {
  const parts = dayFormat(timeZone).formatToParts(at);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return Math.round(Date.UTC(part('year'), part('month') - 1, part('day')) / DAY_MS);
}

const formats = new Map<string, Intl.DateTimeFormat>();
function dayFormat(timeZone: string): Intl.DateTimeFormat {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
    });
    formats.set(timeZone, format);
  }
  return format;
}

/** An IANA time zone name this machine knows (`Europe/Moscow`), as Intl spells it; undefined otherwise. */
export function knownTimeZone(name: string): string | undefined {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > 64) return undefined;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: trimmed }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

export interface MemberStreak {
  /** Days in a row up to today or yesterday (a streak still alive); 0 otherwise. */
  current: number;
  best: number;
  /** The latest run of days, alive or not (what ended, when `current` is 0). */
  last: number;
}

/** A member's streak from the times of their ups (any order), days in `timeZone`, as of `now`. */
export function memberStreak(times: readonly number[], timeZone: string, now: number): MemberStreak {
  const days = [...new Set(times.map((at) => localDay(at, timeZone)))].sort((a, b) => a - b);
  let run = 0;
  let best = 0;
  let lastDay: number | undefined;
  for (const day of days) {
    run = lastDay !== undefined && day === lastDay + 1 ? run + 1 : 1;
    best = Math.max(best, run);
    lastDay = day;
  }
  const alive = lastDay !== undefined && localDay(now, timeZone) - lastDay <= 1;
  return { current: alive ? run : 0, best, last: run };
}

/** The fastest ups (reaction from the moment they were possible), fastest first. */
export function fastest<T extends TimedUp>(
  ups: readonly T[],
  count: number,
): Array<T & { reactionMs: number }> {
  return ups
    .filter((up) => up.possibleAt !== null && up.at >= up.possibleAt)
    .map((up) => ({ ...up, reactionMs: up.at - (up.possibleAt as number) }))
    .sort((a, b) => a.reactionMs - b.reactionMs || a.at - b.at)
    .slice(0, count);
}
