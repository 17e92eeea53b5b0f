/**
 * "Snooze 1 h" and "Stop" on a member's own reminder (the DM, or the mention in the reminder
 * channel when DMs are closed): again in an hour, or no more until "Remind me" is pressed again.
 * The reminder's message is edited to say which; a press by anyone but its member changes nothing
 * and is told so privately. The store does it once: the snooze is one upsert of the member's
 * reminder, sent by the reminders' engine with a nonce of its own; the stop one delete.
 */
import { TimestampStyles, time } from 'discord.js';
import { privateFollowUp } from '../src/interactions/respond.js';
import type { ButtonHandler } from '../src/interactions/types.js';
import { COLORS } from '../src/render/colors.js';
import { decodeReminderAction, isReminderActionId } from '../src/render/custom-id.js';
import { container, text } from '../src/render/layout.js';
import { safeLine } from '../src/render/text.js';

/** How long "Snooze" puts the reminder off. */
export const SNOOZE_MS = 3_600_000;

export const reminderActions: ButtonHandler = {
  name: 'reminder',
  matches: isReminderActionId,
  mode: () => 'update',
  async execute({ interaction, deps, t, reply }) {
    const pressed = decodeReminderAction(interaction.customId);
    const notice = (content: string, accent: number = COLORS.info) => ({
      layout: [container(accent, [text(content)])],
    });
    if (!pressed) {
      await privateFollowUp(interaction, notice(t('errors.expired')));
      return 'expired';
    }
    const { action, guildId, userId } = pressed;
    if (interaction.user.id !== userId) {
      await privateFollowUp(interaction, notice(t('remind.notYours')));
      return 'not-yours';
    }
    const server = safeLine(deps.discord.guildName(guildId) ?? guildId, 100);
    const now = deps.now();
    if (action === 'snooze') {
      const dueAt = now + SNOOZE_MS;
      await deps.reminders.snoozePersonal(guildId, userId, dueAt, now);
      deps.wakeReminders(dueAt);
      const at = time(Math.floor(dueAt / 1000), TimestampStyles.RelativeTime);
      await reply.public(notice(t('remind.snoozed', { time: at, server }), COLORS.cooldown));
      return 'snoozed';
    }
    await deps.reminders.cancel({ kind: 'personal', guildId, userId });
    await reply.public(notice(t('remind.stopped', { server })));
    return 'stopped';
  },
};
