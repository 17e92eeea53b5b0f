/**
 * The "Remind me" button of /up's answers: turns the presser's own reminder for the server's next
 * up on, or off when one is waiting (features/reminders/remind-button.ts). Answered privately, in
 * the presser's language; a press after the time says the server can be raised now.
 */
import { TimestampStyles, time } from 'discord.js';
import { GuildOnlyError } from '../src/interactions/error-message.js';
import type { ButtonHandler } from '../src/interactions/types.js';
import { decodeRemind, isRemindId } from '../src/render/custom-id.js';
import { safeLine } from '../src/render/text.js';

export const remind: ButtonHandler = {
  name: 'remind',
  matches: isRemindId,
  mode: () => 'reply',
  async execute({ interaction, deps, t, reply }) {
    const guildId = interaction.guildId;
    if (!guildId) throw new GuildOnlyError();
    const message = (description: string) => reply.private({ embeds: [{ description }], components: [] });
    const dueAt = decodeRemind(interaction.customId);
    if (dueAt === null) {
      await message(t('errors.expired'));
      return 'expired';
    }
    const server = safeLine(deps.discord.guildName(guildId) ?? guildId, 100);
    const now = deps.now();
    if (dueAt <= now) {
      await message(t('remind.now', { server, command: await deps.commands.mention('up') }));
      return 'past';
    }
    const state = await deps.reminders.togglePersonal(guildId, interaction.user.id, dueAt, now);
    if (state === 'on') {
      deps.wakeReminders(dueAt);
      await message(
        t('remind.on', { server, time: time(Math.floor(dueAt / 1000), TimestampStyles.RelativeTime) }),
      );
    } else {
      await message(t('remind.off'));
    }
    return state;
  },
};
