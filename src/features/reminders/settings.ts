/**
 * `/settings reminders` and `reminders-off`: where a server's next-up reminder goes, whom it pings,
 * what it says, its heads-up and repeats (cycle.ts, template.ts). The channel is proven first: the
 * bot posts a short confirmation there and saves nothing if it cannot (settings/settings.ts). The
 * JSON of both subcommands is settings-command.ts. Every answer private, in the user's language.
 */
import { FEATURE_PERMISSIONS } from '../../discord/feature-permissions.js';
import { publicTranslator } from '../../i18n/public-language.js';
import { COLORS } from '../../render/colors.js';
import { channelMention, roleMention } from '../../render/problems.js';
import type { GuildSettings } from '../../store/settings.js';
import {
  renderConfirmation,
  renderOverview,
  renderRefusal,
  renderTemplateRefusal,
} from '../settings/render.js';
import {
  type ChosenChannel,
  channelRefusal,
  chosenChannel,
  defaults,
  deleteConfirmation,
  lacking,
  postConfirmation,
  type SettingsAnswer,
  type SettingsContext,
  type SettingsDeps,
  type SettingsHandlers,
  templateRefusal,
} from '../settings/settings.js';
import { cycleSettings } from './cycle.js';
import { checkReminderTemplate } from './template.js';

export interface RemindersRequest extends ChosenChannel {
  roleId: string | null;
  /** Whether anyone may ping the role (Discord's resolved role); undefined when not known. */
  roleMentionable?: boolean | undefined;
  /** The admin's template, as typed; null for the default text. */
  message: string | null;
  /** `early:` minutes before the up is possible for a heads-up; null (the default): none. */
  earlyMinutes?: number | null;
  /** `repeat:` every how many minutes the reminder is posted again until an up; null: never. */
  repeatMinutes?: number | null;
  /** `repeat-times:` how many times at most; null: DEFAULT_REPEAT_TIMES. */
  repeatTimes?: number | null;
}

/** `/settings reminders`: check the text, post the confirmation, and only then save. */
export async function setReminders(
  deps: SettingsDeps,
  context: SettingsContext,
  request: RemindersRequest,
): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const wrongChannel = channelRefusal(request, context);
  if (wrongChannel) return wrongChannel;
  let template: string | null = null;
  if (request.message !== null) {
    const check = checkReminderTemplate(request.message);
    if (!check.ok) {
      return {
        message: renderTemplateRefusal(templateRefusal(check, t), t),
        outcome: `refused:template-${check.reason}`,
      };
    }
    template = check.template;
  }
  // `<@&guild id>` shows "@@everyone" and pings no one: it cannot stand for everyone.
  if (request.roleId === guildId) {
    return { message: renderRefusal(t('settings.everyoneRole'), t), outcome: 'refused:everyone' };
  }
  const cycle = cycleSettings(request);
  if (!cycle.ok) return { message: renderRefusal(t(cycle.refusal, cycle.values), t), outcome: cycle.outcome };

  const current = (await deps.settings.get(guildId)) ?? defaults(guildId, deps.now());
  const publicT = publicTranslator(current, context.guildLocale);
  const command = await deps.commands.mention('up');
  const posted = await postConfirmation(
    deps,
    context,
    request.channelId,
    renderConfirmation({ roleId: request.roleId, command }, publicT),
  );
  if (!posted.ok) return posted.answer;
  const channel = channelMention(request.channelId, t);

  let settings: GuildSettings;
  try {
    settings = await deps.settings.update(
      guildId,
      {
        reminderChannelId: request.channelId,
        reminderRoleId: request.roleId,
        reminderTemplate: template,
        reminderEarlyMs: cycle.earlyMs,
        reminderRepeat: cycle.repeat,
        problem: null,
      },
      deps.now(),
    );
  } catch (err) {
    // Not saved (the store went away meanwhile): the confirmation would say otherwise in the
    // channel. It goes; the admin is told to try again (the router words the store's error).
    await deleteConfirmation(deps, guildId, request.channelId, posted.messageId);
    throw err;
  }
  deps.reminderRoleChosen(guildId, request.roleId);
  // The reminder waiting takes the heads-up as now set.
  const retimed = await deps.reminders.retime(guildId, deps.now());
  if (retimed !== undefined) deps.wakeReminders?.(retimed);
  const reminder = await deps.reminders.getGuild(guildId);
  const intro = [t('settings.remindersOn', { channel })];
  if (request.roleId !== null && request.roleMentionable === false) {
    const missing = await lacking(
      deps,
      context,
      request.channelId,
      FEATURE_PERMISSIONS.reminderPing.permissions,
    );
    if (missing === null || missing.length > 0) {
      intro.push(`⚠️ ${t('settings.roleNotPingable', { role: roleMention(request.roleId, t), channel })}`);
    }
  }
  return {
    message: renderOverview({ settings, reminder, guildLocale: context.guildLocale }, t, {
      title: t('settings.title.remindersOn'),
      color: COLORS.success,
      intro: intro.join('\n\n'),
    }),
    outcome: 'reminders-on',
  };
}

/** `/settings reminders-off`: no channel, no role, no server reminder; members' own reminders stay. */
export async function turnRemindersOff(
  deps: SettingsDeps,
  context: SettingsContext,
): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const settings = await deps.settings.update(
    guildId,
    {
      reminderChannelId: null,
      reminderRoleId: null,
      reminderTemplate: null,
      reminderEarlyMs: null,
      reminderRepeat: null,
      problem: null,
    },
    deps.now(),
  );
  deps.reminderRoleChosen(guildId, null);
  await deps.reminders.cancel({ kind: 'guild', guildId });
  return {
    message: renderOverview({ settings, reminder: undefined, guildLocale: context.guildLocale }, t, {
      title: t('settings.title.remindersOff'),
      color: COLORS.info,
      intro: t('settings.remindersOff'),
    }),
    outcome: 'reminders-off',
  };
}

/** The handlers of /settings reminders and reminders-off, by subcommand. */
export const remindersSettings: SettingsHandlers = {
  reminders(deps, context, options) {
    const role = options.get('role')?.role;
    return setReminders(deps, context, {
      ...chosenChannel(options),
      roleId: role?.id ?? null,
      roleMentionable: role?.mentionable,
      message: options.getString('message'),
      earlyMinutes: options.getInteger('early'),
      repeatMinutes: options.getInteger('repeat'),
      repeatTimes: options.getInteger('repeat-times'),
    });
  },
  'reminders-off': (deps, context) => turnRemindersOff(deps, context),
};
