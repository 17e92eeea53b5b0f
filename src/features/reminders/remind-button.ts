/**
 * The "Remind me" button on an /up answer (a success, or "not yet"), and the "Snooze 1 h" and
 * "Stop" of the reminder it brings. Everything they need is in their custom_id
 * (src/render/custom-id.ts), so a button from before a restart still works; the "Remind me"'s
 * guild and member come from the press itself.
 */
import { ButtonStyle, ComponentType } from 'discord.js';
import type { Translate } from '../../i18n/index.js';
import { actionButton, type ButtonRow } from '../../render/components.js';
import { encodeNotify, encodeRemind, encodeReminderAction } from '../../render/custom-id.js';

/**
 * How far ahead a next-up time may be to steer a reminder. The directory's cooldown is hours
 * (4 h today); a week leaves room for any change of it, and a time further out (a broken or
 * hostile answer) schedules nothing rather than a reminder for the year 9999.
 */
export const MAX_REMIND_AHEAD_MS = 7 * 24 * 3_600_000;

/** The next-up time if it can steer a reminder: in the future, at most a week ahead. */
export function remindableTime(nextUpAt: Date | null | undefined, now: number): number | null {
  const at = nextUpAt?.getTime();
  if (at === undefined || !Number.isFinite(at)) return null;
  if (at <= now || at > now + MAX_REMIND_AHEAD_MS) return null;
  return at;
}

/** A member's own reminder: "Snooze 1 h" and "Stop" (commands/reminder-actions.ts answers them). */
export function reminderActionRow(guildId: string, userId: string, t: Translate): ButtonRow {
  return {
    type: ComponentType.ActionRow,
    components: [
      actionButton(t('remind.snooze'), encodeReminderAction('snooze', guildId, userId), {
        style: ButtonStyle.Secondary,
      }),
      actionButton(t('remind.stop'), encodeReminderAction('stop', guildId, userId), {
        style: ButtonStyle.Secondary,
      }),
    ],
  };
}

/** "Notify me" on a server's reminder that mentions a role (commands/notify-me.ts gives or takes it). */
export function notifyRow(guildId: string, t: Translate): ButtonRow {
  return {
    type: ComponentType.ActionRow,
    components: [actionButton(t('notify.button'), encodeNotify(guildId), { style: ButtonStyle.Secondary })],
  };
}

export function remindRow(nextUpAt: number, t: Translate): ButtonRow {
  return {
    type: ComponentType.ActionRow,
    components: [actionButton(t('remind.button'), encodeRemind(nextUpAt), { style: ButtonStyle.Secondary })],
  };
}
