/**
 * /setup's submit: what the form came back with, applied through the same use cases the /settings
 * subcommands run (language, time zone, reminders, digest), in the order where each sees the one
 * before it: the public language first (the reminder channel's confirmation is posted in it), the
 * time zone before the digest (its period ends at that zone's midnight). A step the server's
 * channel refuses changes nothing of its own and is told in plain words beside the others; the
 * answer is the overview of what is set now, as /settings show draws it.
 */
import { languageText } from '../../i18n/public-language.js';
import type { BotDeps } from '../../interactions/types.js';
import { COLORS } from '../../render/colors.js';
import type { RenderedMessage } from '../../render/message.js';
import { channelMention, roleMention } from '../../render/problems.js';
import { safeCode } from '../../render/text.js';
import { setDigest, turnDigestOff } from '../digests/settings.js';
import { knownTimeZone } from '../history/streaks.js';
import { setReminders } from '../reminders/settings.js';
import { featurePlaces } from '../settings/general.js';
import { renderOverview } from '../settings/render.js';
import {
  defaults,
  permissionProblems,
  type SettingsAnswer,
  type SettingsContext,
} from '../settings/settings.js';
import type { SetupAnswers } from './form.js';

export type SetupDeps = BotDeps;

/** The text of a refusal a use case answered with (its embed's description). */
function refusalText(message: RenderedMessage): string {
  if ('embeds' in message) {
    const description = message.embeds[0]?.description;
    if (typeof description === 'string') return description;
  }
  return '';
}

/** Whether a use case refused (its outcome is not the one it answers when done). */
const refused = (answer: SettingsAnswer, done: string): boolean => !answer.outcome.startsWith(done);

export async function applySetup(
  deps: SetupDeps,
  context: SettingsContext,
  form: SetupAnswers,
): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const lines: string[] = [];
  const outcomes: string[] = [];
  const current = (await deps.settings.get(guildId)) ?? defaults(guildId, deps.now());

  // 1. The language of public messages: nothing to check.
  if (form.language !== current.publicLanguage) {
    await deps.settings.update(guildId, { publicLanguage: form.language }, deps.now());
  }
  lines.push(
    t('setup.line.language', { language: `**${languageText(form.language, context.guildLocale, t)}**` }),
  );

  // 2. The time zone: one this machine's data does not know is told, and the one set stays.
  let partly = false;
  if (form.timeZone !== null) {
    const zone = knownTimeZone(form.timeZone);
    if (zone) {
      if (zone !== current.timeZone) await deps.settings.update(guildId, { timeZone: zone }, deps.now());
      lines.push(t('setup.line.timezone', { zone: `**${zone}**` }));
    } else {
      partly = true;
      outcomes.push('timezone:unknown');
      lines.push(
        t('settings.timeZoneUnknown', {
          name: safeCode(form.timeZone, 66),
          interpolation: { escapeValue: false },
        }),
      );
    }
  } else {
    lines.push(t('setup.line.timezoneKept', { zone: `**${current.timeZone ?? 'UTC'}**` }));
  }

  // 3. Reminders, as /settings reminders sets them (the channel proven by a confirmation posted
  // there); what the form does not ask (the text, heads-up, repeats) stays as it is.
  const reminders = await setReminders(deps, context, {
    channelId: form.channelId,
    resolvedChannel: form.resolvedChannel,
    roleId: form.roleId,
    roleMentionable: form.roleMentionable,
    message: current.reminderTemplate,
    earlyMinutes: current.reminderEarlyMs === null ? null : Math.round(current.reminderEarlyMs / 60_000),
    repeatMinutes:
      current.reminderRepeat === null ? null : Math.round(current.reminderRepeat.everyMs / 60_000),
    repeatTimes: current.reminderRepeat?.times ?? null,
  });
  outcomes.push(reminders.outcome);
  const channel = channelMention(form.channelId, t);
  if (refused(reminders, 'reminders-on')) {
    partly = true;
    lines.push(t('setup.line.remindersRefused', { reason: refusalText(reminders.message) }));
  } else {
    const role =
      form.roleId === null ? '' : t('setup.line.remindersRole', { role: roleMention(form.roleId, t) });
    lines.push(t('setup.line.reminders', { channel, role }));
  }

  // 4. The digest, in the reminder channel, as /settings digest sets it (or digest-off).
  if (form.digest === null) {
    if (current.digest) outcomes.push((await turnDigestOff(deps, context)).outcome);
    lines.push(t('setup.line.digestOff'));
  } else {
    const digest = await setDigest(deps, context, {
      channelId: form.channelId,
      resolvedChannel: form.resolvedChannel,
      period: form.digest,
    });
    outcomes.push(digest.outcome);
    if (refused(digest, 'digest:')) {
      partly = true;
      lines.push(t('setup.line.digestRefused', { reason: refusalText(digest.message) }));
    } else {
      lines.push(t('setup.line.digest', { period: t(`setup.line.period.${form.digest}`), channel }));
    }
  }

  const [settingsCommand, helpCommand] = await Promise.all([
    deps.commands.mention('settings'),
    deps.commands.mention('help'),
  ]);
  lines.push(t('setup.line.more', { settings: settingsCommand, help: helpCommand }));

  const [stored, reminder, nextDigestAt] = await Promise.all([
    deps.settings.get(guildId),
    deps.reminders.getGuild(guildId),
    deps.posts.digests.next(guildId),
  ]);
  const settings = stored ?? defaults(guildId, deps.now());
  // What the features now on lack where they act, as /settings show tells it; and, for a role
  // nobody may mention, the permission to ping it anyway.
  const places = featurePlaces(settings);
  if (settings.reminderChannelId && form.roleId !== null && form.roleMentionable === false) {
    places.push({ feature: 'reminderPing', channelId: settings.reminderChannelId });
  }
  const permissions = await permissionProblems(deps, context, places);
  if (permissions.length > 0) partly = true;
  return {
    message: renderOverview(
      { settings, reminder, guildLocale: context.guildLocale, nextDigestAt, permissions },
      t,
      {
        title: t(partly ? 'setup.title.partly' : 'setup.title.done'),
        color: partly ? COLORS.warning : COLORS.success,
        intro: lines.join('\n'),
      },
    ),
    outcome: `setup:${outcomes.join(',')}`,
  };
}
