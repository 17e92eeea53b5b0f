/**
 * /settings: where a server's next-up reminder goes, whom it pings and what it says, the language
 * of the bot's public messages, and a look at all of it. Discord checks who may use the command
 * (Manage Server by default, grantable in Server Settings > Integrations); the bot does not check
 * again.
 *
 * Choosing a channel proves it works: the bot posts a short confirmation there first, and saves
 * nothing if it cannot, telling the admin which permission to grant and where.
 */
import { type APIMessageTopLevelComponent, PermissionFlagsBits } from 'discord.js';
import { deleteMessage, POSTED_IN_CHANNEL_TYPES, postMessage } from '../../discord/messages.js';
import { fetchChannelPermissions } from '../../discord/permissions.js';
import type { Translate } from '../../i18n/index.js';
import { languageText, publicTranslator } from '../../i18n/public-language.js';
import type { BotDeps } from '../../interactions/types.js';
import { COLORS } from '../../render/colors.js';
import type { RenderedMessage } from '../../render/message.js';
import {
  channelMention,
  type PermissionName,
  permissionList,
  REMINDER_PERMISSIONS,
  roleMention,
} from '../../render/problems.js';
import type { TemplateCheck } from '../../render/template.js';
import { safeCode } from '../../render/text.js';
import type { PublicLanguage } from '../../store/schema.js';
import { DEFAULT_PUBLIC_LANGUAGE, type GuildSettings } from '../../store/settings.js';
import { cycleSettings } from '../reminders/cycle.js';
import { checkReminderTemplate } from '../reminders/template.js';
import { renderConfirmation, renderOverview, renderRefusal, renderTemplateRefusal } from './render.js';

export type SettingsDeps = Pick<
  BotDeps,
  'settings' | 'reminders' | 'reminderRoleChosen' | 'rest' | 'commands' | 'now' | 'logger'
> &
  Partial<Pick<BotDeps, 'wakeReminders'>> &
  Partial<Pick<BotDeps, 'webhooks'>>;

/** Who asks, where: from the interaction. */
export interface SettingsContext {
  guildId: string;
  /** The server's own locale (`guild_locale`), which the `auto` language follows. */
  guildLocale: string | null;
  /** The bot's user id: its permissions in a channel are what a failed post is explained by. */
  botId: string;
  /** The user's language: every answer is private. */
  t: Translate;
}

export interface SettingsAnswer {
  message: RenderedMessage;
  /** For the log line: what happened. */
  outcome: string;
}

/** What Discord resolved for the channel an admin chose: its type and, when it says, its server. */
export interface ResolvedChannel {
  type: number;
  guildId?: string | undefined;
}

/** The channel an admin chose for the bot's posts: its id, and what Discord resolved for it. */
export interface ChosenChannel {
  channelId: string;
  /** Undefined when the interaction did not resolve the channel: it is refused. */
  resolvedChannel: ResolvedChannel | undefined;
}

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

/** How long the look at the bot's permissions may take before every permission is named instead. */
const PERMISSIONS_TIMEOUT_MS = 5_000;

export function defaults(guildId: string, now: number): GuildSettings {
  return {
    guildId,
    reminderChannelId: null,
    reminderRoleId: null,
    reminderTemplate: null,
    publicLanguage: DEFAULT_PUBLIC_LANGUAGE,
    problem: null,
    updatedAt: now,
    timeZone: null,
    thanksTemplate: null,
    reminderEarlyMs: null,
    reminderRepeat: null,
    digest: null,
    liveChannelId: null,
  };
}

export function templateRefusal(check: Exclude<TemplateCheck, { ok: true }>, t: Translate): string {
  switch (check.reason) {
    case 'empty':
      return t('settings.template.empty');
    case 'tooLong':
      return t('settings.template.tooLong', { length: check.length, max: check.max });
    case 'unknownPlaceholder':
      return t('settings.template.unknownPlaceholder', { placeholder: safeCode(check.placeholder, 80) });
  }
}

/**
 * A refusal unless the chosen channel is a text or announcement channel of this server: the
 * command's options offer only those, but an interaction is not bound to them (an older command
 * definition, a client of its own). Undefined when the channel will do.
 */
export function channelRefusal(chosen: ChosenChannel, context: SettingsContext): SettingsAnswer | undefined {
  const resolved = chosen.resolvedChannel;
  const ours = resolved?.guildId === undefined || resolved.guildId === context.guildId;
  if (resolved && ours && POSTED_IN_CHANNEL_TYPES.some((type) => type === resolved.type)) return undefined;
  const { t } = context;
  return {
    message: renderRefusal(
      t('settings.post.notTextChannel', { channel: channelMention(chosen.channelId, t) }),
      t,
    ),
    outcome: 'refused:channel-type',
  };
}

/** What the bot lacks of `needed` in the channel; null when its permissions cannot be had. */
export async function lacking(
  deps: SettingsDeps,
  context: SettingsContext,
  channelId: string,
  needed: readonly PermissionName[],
): Promise<PermissionName[] | null> {
  const have = await fetchChannelPermissions(
    deps.rest,
    { guildId: context.guildId, channelId, userId: context.botId },
    PERMISSIONS_TIMEOUT_MS,
  );
  return have === null ? null : needed.filter((name) => (have & PermissionFlagsBits[name]) === 0n);
}

/**
 * Posts the short confirmation that proves the bot can post in the channel; when it cannot, the
 * answer says why and what to grant where (nothing is saved then).
 */
export async function postConfirmation(
  deps: SettingsDeps,
  context: SettingsContext,
  channelId: string,
  layout: APIMessageTopLevelComponent[],
): Promise<{ ok: true; messageId: string } | { ok: false; answer: SettingsAnswer }> {
  const { t, guildId } = context;
  const posted = await postMessage(deps.rest, channelId, { layout, allowedMentions: { parse: [] } });
  if (posted.ok) return posted;
  const channel = channelMention(channelId, t);
  const { failure } = posted;
  deps.logger.info({ guildId, channelId, failure }, 'settings channel refused');
  const refused = (text: string, outcome: string) => ({
    ok: false as const,
    answer: { message: renderRefusal(text, t), outcome },
  });
  switch (failure.kind) {
    case 'missing-access':
    case 'missing-permission': {
      const found = await lacking(deps, context, channelId, REMINDER_PERMISSIONS);
      // Not known, or Discord refused while every one looks granted (changed meanwhile?): name them all.
      const missing = found && found.length > 0 ? found : REMINDER_PERMISSIONS;
      const text = t('settings.post.missingPermissions', {
        channel,
        permissions: permissionList(missing, t),
      });
      return refused(text, `refused:${failure.kind}`);
    }
    case 'channel-deleted':
      return refused(t('settings.post.channelDeleted'), 'refused:channel-deleted');
    case 'transient':
      return refused(t('settings.post.transient', { channel }), 'failed:transient');
    case 'rejected':
    case 'dms-closed':
      return refused(t('settings.post.rejected', { channel, code: failure.code }), 'refused:rejected');
  }
}

/** Not saved after all (the store went away meanwhile): the confirmation would say otherwise. */
export async function deleteConfirmation(
  deps: SettingsDeps,
  guildId: string,
  channelId: string,
  messageId: string,
): Promise<void> {
  const deleted = await deleteMessage(deps.rest, channelId, messageId);
  if (!deleted.ok) {
    deps.logger.warn(
      { failure: deleted.failure, guildId },
      'could not delete the confirmation of settings not saved',
    );
  }
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
    const missing = await lacking(deps, context, request.channelId, ['MentionEveryone']);
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

/** `/settings language`: the language of the bot's public messages in this server. */
export async function setLanguage(
  deps: SettingsDeps,
  context: SettingsContext,
  language: PublicLanguage,
): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const settings = await deps.settings.update(guildId, { publicLanguage: language }, deps.now());
  const reminder = await deps.reminders.getGuild(guildId);
  return {
    message: renderOverview({ settings, reminder, guildLocale: context.guildLocale }, t, {
      title: t('settings.title.language'),
      color: COLORS.success,
      intro: t('settings.languageSet', { language: `**${languageText(language, context.guildLocale, t)}**` }),
    }),
    outcome: `language:${language}`,
  };
}

/** `/settings show`: every setting, the next reminder, the ups seen and the problem last met. */
export async function showSettings(
  deps: SettingsDeps &
    Partial<Pick<BotDeps, 'posts' | 'history' | 'directory' | 'notificationsOn' | 'upDirectory'>>,
  context: SettingsContext,
): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const [stored, reminder, webhook, nextDigestAt, board, lastUp] = await Promise.all([
    deps.settings.get(guildId),
    deps.reminders.getGuild(guildId),
    deps.webhooks?.get(guildId),
    deps.posts?.digests.next(guildId),
    deps.posts?.liveBoards.get(guildId),
    deps.history?.latest(guildId).catch((err: unknown) => {
      deps.logger.warn({ err, guildId }, 'could not read the latest up for /settings show');
      return undefined;
    }),
  ]);
  const settings = stored ?? defaults(guildId, deps.now());
  const liveStopped = board?.state === 'failed';
  const overview = {
    settings,
    reminder,
    guildLocale: context.guildLocale,
    webhook,
    nextDigestAt,
    liveStopped,
    ups: {
      last: lastUp,
      // Where ups can come from here: /up raises (v1/v2, or v3 with DIRECTORY_UP_TOKEN), the
      // directory's notifications (v3), its webhook (set up for this server).
      bot: deps.directory?.version !== 'v3' || deps.upDirectory !== undefined,
      notifications: deps.directory?.version === 'v3' && deps.notificationsOn === true,
      webhook: webhook !== undefined,
    },
  };
  return {
    message: renderOverview(overview, t, { title: t('settings.title.show'), color: COLORS.info }),
    outcome: settings.problem || webhook?.problem || liveStopped ? 'shown:problem' : 'shown',
  };
}

/** The languages /settings language offers (its option's choices). */
export const PUBLIC_LANGUAGES: readonly PublicLanguage[] = ['auto', 'en-US', 'ru'];

export function isPublicLanguage(value: unknown): value is PublicLanguage {
  return typeof value === 'string' && (PUBLIC_LANGUAGES as readonly string[]).includes(value);
}
