/**
 * What follows an up, wherever it was given: an /up through this bot (up.ts), an up the directory
 * tells of (its v2 webhook, its v3 notifications: features/webhooks/handle.ts). Written once here:
 *
 * - `creditUp`: the up goes into the server's history (the leaderboard, streaks and digests read
 *   it), the server's posted reminder is followed through (how long after it the up came), what
 *   an up recorded moves is told (the live leaderboard, reward roles), and the directory's record
 *   of the server is dropped from the look-up cache (its up count changed);
 * - `restartCycle`: an up given elsewhere moves the server's reminder to when the directory lets
 *   the server be upped again: the cooldown its last /up answer implied (v2), or, on v3, the
 *   cadence the directory publishes (V3_UP_EVERY_MS) when no answer ever said one.
 */
import type { HistoryRepository, UpRecord } from '../../store/history.js';
import { SAME_UP_MS } from '../../store/history.js';
import type { GuildReminder, ReminderRepository } from '../../store/reminders.js';

/**
 * On v3 a member may up a server once a day: BotiCord's FAQ (boticord/Localization
 * `src/website/lang.json`, `faq.rating.difference…four`: "ап-очки можно поднимать каждый день", and
 * `faq.rating.up-points…three`: one member upping every day keeps 14 points). v3 has no up answer
 * to read a cooldown from (docs/directory-v3-sources.md): this is the published cadence, and a
 * cooldown learned from a v2 answer, when there is one, is used before it.
 */
export const V3_UP_EVERY_MS = 24 * 3_600_000;

export interface CreditDeps {
  history: Pick<HistoryRepository, 'record'>;
  /** A success follows the server's posted reminder through: how long after the reminder it came. */
  followUp?: ((guildId: string, up: { userId: string; at: number }) => Promise<unknown>) | undefined;
  /** An up was recorded: what follows from it is told (the live leaderboard, reward roles). Never throws. */
  upRecorded?: ((guildId: string, userId: string, at: number) => Promise<void>) | undefined;
  /** The directory's record of the server is stale now (the look-up cache: DirectoryClient.forget). */
  forget?: ((guildId: string) => void) | undefined;
}

export interface Credited {
  /** False: the up was recorded already (told twice, or answered again after a restart). */
  recorded: boolean;
  /** How long after the server's posted reminder it came, when it followed one. */
  reactionMs: number | null;
}

/** Records the up and tells what follows from it. The store's errors are thrown. */
export async function creditUp(deps: CreditDeps, up: UpRecord): Promise<Credited> {
  const recorded = await deps.history.record(up);
  deps.forget?.(up.guildId);
  const [reaction] = await Promise.all([
    deps.followUp?.(up.guildId, { userId: up.userId, at: up.at }),
    recorded ? deps.upRecorded?.(up.guildId, up.userId, up.at) : undefined,
  ]);
  return { recorded, reactionMs: typeof reaction === 'number' ? reaction : null };
}

export interface CycleDeps {
  reminders: Pick<ReminderRepository, 'moveForUp' | 'getGuild' | 'scheduleGuild'>;
  /** The server's reminder now falls due at `dueAt`: this process's scheduler looks in time. */
  wakeReminders: (dueAt: number) => void;
}

/** Where a restarted cycle stands: the next possible up, and when its reminder falls due (a heads-up before it). */
export interface Restarted {
  nextUpAt: number;
  dueAt: number;
}

/**
 * An up given elsewhere at `at` restarts the server's reminder cycle; where it stands now, or
 * undefined when the reminder stays (it is later already, or no cooldown is known). This process's
 * scheduler is woken for the due time.
 */
export async function restartCycle(
  deps: CycleDeps,
  guildId: string,
  at: number,
  options: {
    cadenceMs?: number | undefined;
    now: number;
    /** The server's reminder as read just before (null: none), so as not to read it again. */
    current?: GuildReminder | null;
  },
): Promise<Restarted | undefined> {
  const moved = await deps.reminders.moveForUp(guildId, at, SAME_UP_MS, options.now);
  if (moved === undefined) {
    const { cadenceMs } = options;
    if (cadenceMs === undefined) return undefined;
    // Not moved: the reminder is as it was read (or is read now).
    const current =
      options.current === undefined ? await deps.reminders.getGuild(guildId) : (options.current ?? undefined);
    // A cooldown learned from the directory's answer is kept (moveForUp used it).
    if (current && current.cooldownMs !== null) return undefined;
    const nextUpAt = at + cadenceMs;
    if (current && current.nextUpAt + SAME_UP_MS >= nextUpAt) return undefined;
    await deps.reminders.scheduleGuild(
      guildId,
      { dueAt: nextUpAt, nextUpAt, cooldownMs: cadenceMs },
      options.now,
    );
  }
  // Read back: the due time is the next up less the server's heads-up (store/reminders.ts).
  const reminder = await deps.reminders.getGuild(guildId);
  if (!reminder) return undefined;
  deps.wakeReminders(reminder.dueAt);
  return { nextUpAt: reminder.nextUpAt, dueAt: reminder.dueAt };
}
