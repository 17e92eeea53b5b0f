/**
 * "Notify me" on a server's reminder (issue 25): gives the presser the role the reminders mention,
 * or takes it off when they have it. The role is the server's setting when pressed (a reminder
 * posted before a change of role gives the new one). Answered privately, in the presser's
 * language. Discord refuses (50013) when the bot lacks Manage Roles or its role is not above the
 * reminder role: the presser is told, and the server's settings keep the problem for its admins
 * (/settings show, and the next /up of a manager).
 */
import { GuildOnlyError } from '../src/interactions/error-message.js';
import type { ButtonHandler } from '../src/interactions/types.js';
import { COLORS } from '../src/render/colors.js';
import { decodeNotify, isNotifyId } from '../src/render/custom-id.js';
import { container, text } from '../src/render/layout.js';

export const notifyMe: ButtonHandler = {
  name: 'notify',
  matches: isNotifyId,
  mode: () => 'reply',
  async execute({ interaction, deps, t, reply }) {
    const guildId = interaction.guildId;
    if (!guildId || decodeNotify(interaction.customId) !== guildId) throw new GuildOnlyError();
    const say = (content: string, accent: number = COLORS.info) =>
      reply.private({ layout: [container(accent, [text(content)])] });
    const roleId = (await deps.settings.get(guildId))?.reminderRoleId ?? null;
    if (!roleId) {
      await say(t('notify.noRole'));
      return 'no-role';
    }
    const role = `<@&${roleId}>`;
    const userId = interaction.user.id;
    // The member's roles as Discord has them now (the bot keeps no cache of roles).
    const has = await deps.roles.memberHas(guildId, userId, roleId);
    const changed = has
      ? await deps.roles.remove(guildId, userId, roleId, 'Notify me: taken off by the member')
      : await deps.roles.add(guildId, userId, roleId, 'Notify me: asked for by the member');
    if (changed.kind === 'role-gone') {
      await deps.settings.update(guildId, { problem: 'role-deleted' }, deps.now());
      await say(t('notify.noRole'));
      return 'role-deleted';
    }
    if (changed.kind === 'missing-permission') {
      await deps.settings.update(guildId, { problem: 'cannot-give-role' }, deps.now());
      await say(t('notify.cannot', { role }), COLORS.warning);
      return 'cannot-give-role';
    }
    if (changed.kind !== 'done') throw changed.error;
    // It worked: a problem of giving the role, kept for the admins, is over.
    const settings = await deps.settings.get(guildId);
    if (settings?.problem?.reason === 'cannot-give-role') {
      await deps.settings.update(guildId, { problem: null }, deps.now());
    }
    await say(t(has ? 'notify.removed' : 'notify.added', { role }), has ? COLORS.info : COLORS.success);
    return has ? 'removed' : 'added';
  },
};
