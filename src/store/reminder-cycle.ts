/**
 * A server's reminder cycle as its row keeps it (reminders.ts, features/reminders/cycle.ts): how far
 * the cycle of one next-up time went, and the heads-up read from the server's settings inside the
 * statements that schedule it.
 */
import type { ExpressionBuilder, Selectable } from 'kysely';
import type { Database, RemindersTable } from './schema.js';

/**
 * Where a server's reminder stands in its cycle (one next-up time): the heads-up before the up is
 * possible, the reminder when it is, then its repeats until someone ups.
 */
export interface ReminderCycle {
  nextUpAt: number;
  /** How many reminders were posted since the up became possible: k > 0, the next is repeat k. */
  step: number;
  /** When the heads-up was posted; null: none. */
  headsUpAt: number | null;
  /** The reminder posted last in the server's channel, still waiting for an up. */
  post: { channelId: string; messageId: string; postedAt: number } | null;
}

/** A cycle begun anew: nothing posted for this next-up time yet. */
export function newCycle(): { step: number; heads_up_at: null } {
  return { step: 0, heads_up_at: null };
}

/** The server's heads-up, in ms before the next-up time (0: none), read in the statement itself. */
export function earlyOf(eb: ExpressionBuilder<Database, 'reminders'>, guildId: string) {
  return eb.fn.coalesce(
    eb
      .selectFrom('guild_settings')
      .select('reminder_early_ms')
      .where('guild_settings.guild_id', '=', guildId),
    eb.val(0),
  );
}

export function cycleOf(row: Selectable<RemindersTable>): ReminderCycle {
  const postedAt = row.posted_at === null ? null : Number(row.posted_at);
  return {
    nextUpAt: Number(row.next_up_at),
    step: Number(row.step),
    headsUpAt: row.heads_up_at === null ? null : Number(row.heads_up_at),
    post:
      row.post_channel_id && row.post_message_id && postedAt !== null
        ? { channelId: row.post_channel_id, messageId: row.post_message_id, postedAt }
        : null,
  };
}
