/**
 * A server's reminder cycle (one next-up time), as `/settings reminders early: repeat:` set it:
 *
 * - a heads-up `early` before the up is possible (off by default);
 * - the reminder when it is;
 * - then, while nobody ups, the reminder again every `repeat` minutes, `times` times at most (off by
 *   default). Each one replaces the one before it (sender: posted, then the last one deleted), so
 *   the channel holds one reminder, and the role is pinged each time.
 *
 * An up (the bot's /up, the directory's webhook) begins a new cycle (store/reminders.ts), which ends
 * the repeats. What to post is decided when the claim is won, from the settings as they are then: a
 * setting turned off meanwhile posts nothing more; a heads-up whose time passed while the bot was
 * down gives way to the reminder itself.
 */
import type { ReminderCycle } from '../../store/reminders.js';
import type { GuildSettings, ReminderRepeat } from '../../store/settings.js';

/** The longest heads-up, in minutes (the "up to 30 min before"). */
export const MAX_EARLY_MINUTES = 30;
/** Repeats: every 5 minutes at the most often, every 4 hours at the least; 10 at most. */
export const MIN_REPEAT_MINUTES = 5;
export const MAX_REPEAT_MINUTES = 240;
export const MAX_REPEAT_TIMES = 10;
/** How many repeats `repeat:` without `repeat-times:` means. */
export const DEFAULT_REPEAT_TIMES = 3;

export type CyclePost =
  /** Before the up is possible: "can be raised <in 10 minutes>". */
  | { kind: 'heads-up' }
  /** The up is possible: the server's reminder. */
  | { kind: 'reminder' }
  /** Nobody upped yet: the reminder again, the `n`-th time of `of`. */
  | { kind: 'repeat'; n: number; of: number }
  /** Nothing more to post in this cycle (repeats turned off, or all posted). */
  | { kind: 'done' }
  /** A heads-up no longer wanted (turned off meanwhile): nothing now, the reminder at `at`. */
  | { kind: 'wait'; at: number };

/** What a claimed reminder posts now. */
export function cyclePost(
  dueAt: number,
  cycle: ReminderCycle,
  settings: Pick<GuildSettings, 'reminderEarlyMs' | 'reminderRepeat'>,
  now: number,
): CyclePost {
  const { step, nextUpAt } = cycle;
  if (step === 0) {
    const headsUp = dueAt < nextUpAt && cycle.headsUpAt === null && now < nextUpAt;
    if (!headsUp) return { kind: 'reminder' };
    return settings.reminderEarlyMs === null ? { kind: 'wait', at: nextUpAt } : { kind: 'heads-up' };
  }
  const repeat = settings.reminderRepeat;
  if (!repeat || step > repeat.times) return { kind: 'done' };
  return { kind: 'repeat', n: step, of: repeat.times };
}

/**
 * When the cycle goes on after `post` went out at `now`, and its step then; undefined: the cycle is
 * over until an up. A repeat keeps its pace from the next-up time, yet comes at least half a
 * period after the last post (the bot was down past several of them: one, not a burst).
 */
export function cycleAgain(
  post: CyclePost,
  cycle: ReminderCycle,
  settings: Pick<GuildSettings, 'reminderRepeat'>,
  now: number,
): { at: number; step: number } | undefined {
  switch (post.kind) {
    case 'heads-up':
      return { at: cycle.nextUpAt, step: 0 };
    case 'wait':
      return { at: post.at, step: 0 };
    case 'done':
      return undefined;
    case 'reminder':
    case 'repeat': {
      const repeat = settings.reminderRepeat;
      const step = post.kind === 'reminder' ? 1 : post.n + 1;
      if (!repeat || step > repeat.times) return undefined;
      const at = Math.max(cycle.nextUpAt + step * repeat.everyMs, now + repeat.everyMs / 2);
      return { at, step };
    }
  }
}

/**
 * The reminder posted last, when it is one of this cycle's (its heads-up or a reminder since: all
 * recorded as posted at the next-up time or later): the next post replaces it. One of an older
 * cycle (nobody upped through the bot after it) stays where it is. A post sent again after a crash
 * (the same message, by its nonce) replaces nothing.
 */
export function replaces(cycle: ReminderCycle, newMessageId: string): ReminderCycle['post'] {
  const last = cycle.post;
  if (!last || last.messageId === newMessageId || last.postedAt < cycle.nextUpAt) return null;
  return last;
}

type CycleSettings =
  | { ok: true; earlyMs: number | null; repeat: ReminderRepeat | null }
  | { ok: false; refusal: string; values: Record<string, number>; outcome: string };

/**
 * `early:`, `repeat:` and `repeat-times:` as the store keeps them (features/reminders/cycle.ts).
 * Discord's client keeps each within its bounds; a request that is not (another client) is refused.
 */
export function cycleSettings(request: {
  earlyMinutes?: number | null;
  repeatMinutes?: number | null;
  repeatTimes?: number | null;
}): CycleSettings {
  const early = request.earlyMinutes ?? null;
  const every = request.repeatMinutes ?? null;
  const times = request.repeatTimes ?? null;
  const within = (value: number | null, min: number, max: number) =>
    value === null || (Number.isInteger(value) && value >= min && value <= max);
  if (!within(early, 1, MAX_EARLY_MINUTES))
    return {
      ok: false,
      refusal: 'settings.cycle.early',
      values: { max: MAX_EARLY_MINUTES },
      outcome: 'refused:early',
    };
  if (!within(every, MIN_REPEAT_MINUTES, MAX_REPEAT_MINUTES) || !within(times, 1, MAX_REPEAT_TIMES))
    return {
      ok: false,
      refusal: 'settings.cycle.repeat',
      values: { min: MIN_REPEAT_MINUTES, max: MAX_REPEAT_MINUTES, times: MAX_REPEAT_TIMES },
      outcome: 'refused:repeat',
    };
  if (every === null && times !== null)
    return { ok: false, refusal: 'settings.cycle.timesAlone', values: {}, outcome: 'refused:repeat-times' };
  return {
    ok: true,
    earlyMs: early === null ? null : early * 60_000,
    repeat: every === null ? null : { everyMs: every * 60_000, times: times ?? DEFAULT_REPEAT_TIMES },
  };
}
