/**
 * The answers of /settings (private, in the user's language) and the confirmation it posts in the
 * reminder channel (public, in the server's language). Mentions in them render as names; no
 * message of the bot's pings anyone it does not name in allowed_mentions, and these name no one.
 */
import { type APIEmbed, type APIMessageTopLevelComponent, TimestampStyles } from 'discord.js';
import type { Translate } from '../../i18n/index.js';
import { languageText } from '../../i18n/public-language.js';
import { COLORS } from '../../render/colors.js';
import { container, facts, fitLayout, notice, separator, text as textDisplay } from '../../render/layout.js';
import { fitEmbed, LIMITS } from '../../render/limits.js';
import type { EmbedMessage, LayoutMessage } from '../../render/message.js';
import { channelMention, permissionList, problemText, roleMention } from '../../render/problems.js';
import { safeCode, stripControl, timestamp, truncate } from '../../render/text.js';
import type { LatestUp } from '../../store/history.js';
import type { GuildReminder } from '../../store/reminders.js';
import type { GuildSettings, ReminderRepeat } from '../../store/settings.js';
import type { WebhookSetup } from '../../store/webhooks.js';
import type { PlaceProblem } from './settings.js';

/** A template shown as typed, in a code block: nothing in it renders, nor can end the block. */
export function codeBlock(text: string): string {
  return `\`\`\`\n${truncate(stripControl(text).replace(/`/g, 'ˋ'), 2_100)}\n\`\`\``;
}

function message(embed: APIEmbed): EmbedMessage {
  return { embeds: [fitEmbed(embed)], components: [] };
}

/** A refusal: nothing was changed, and why (the text says what to do). */
export function renderRefusal(text: string, t: Translate): EmbedMessage {
  return message({ color: COLORS.warning, title: t('settings.title.refused'), description: text });
}

/** A template refused: why, the placeholders, and the default text. */
export function renderTemplateRefusal(reason: string, t: Translate): EmbedMessage {
  const text = [
    reason,
    t('settings.template.placeholders'),
    `${t('settings.template.defaultIs')}\n${codeBlock(t('reminders.default'))}`,
  ].join('\n\n');
  return renderRefusal(text, t);
}

/** The next reminder: `<t:…:R> (<t:…:f>)` while one waits, else why there is none. */
function nextReminderText(reminder: GuildReminder | undefined, t: Translate): string {
  if (reminder?.state === 'failed') return t('settings.value.nextFailed');
  if (!reminder || reminder.state === 'sent') return t('settings.value.nextNone');
  const due = new Date(reminder.dueAt);
  const relative = timestamp(due, TimestampStyles.RelativeTime);
  const absolute = timestamp(due, TimestampStyles.ShortDateTime);
  return relative && absolute
    ? t('settings.value.nextAt', { relative, absolute })
    : t('settings.value.nextNone');
}

export interface Overview {
  settings: GuildSettings;
  reminder: GuildReminder | undefined;
  guildLocale: string | null;
  /** The directory's webhook; shown when given (undefined: off). */
  webhook?: WebhookSetup | undefined;
  /** When the next digest is due, when known. */
  nextDigestAt?: number | undefined;
  /** The live leaderboard stopped: it could not post or edit in its channel. */
  liveStopped?: boolean | undefined;
  /** The ups the bot sees: the last one, and the ways one can reach it here. */
  ups?: UpsSeen | undefined;
  /** What the features turned on lack where they act, as read now (settings.ts, permissionProblems). */
  permissions?: readonly PlaceProblem[] | undefined;
}

/** One feature's missing permissions: where, which, and where to grant them; one line each. */
export function permissionProblemsText(problems: readonly PlaceProblem[], t: Translate): string {
  const lines = problems.map((problem) => {
    const values = {
      feature: t(`permissions.feature.${problem.feature}`),
      permissions: permissionList(problem.missing, t),
    };
    return problem.channelId === null
      ? t('permissions.inServer', values)
      : t('permissions.inChannel', { ...values, channel: channelMention(problem.channelId, t) });
  });
  return lines.length === 1 ? (lines[0] as string) : lines.map((line) => `- ${line}`).join('\n');
}

export interface UpsSeen {
  last: LatestUp | undefined;
  /** /up raises the server through this bot. */
  bot: boolean;
  /** The directory's notifications (v3) reach the bot. */
  notifications: boolean;
  /** The directory's webhook is set up for this server. */
  webhook: boolean;
}

/** Whether ups are seen, the last one and where it came from, and the ways they come. */
function upsText(ups: UpsSeen, t: Translate): string {
  const ways = [
    ...(ups.bot ? [t('settings.ups.via.bot')] : []),
    ...(ups.notifications ? [t('settings.ups.via.notify')] : []),
    ...(ups.webhook ? [t('settings.ups.via.webhook')] : []),
  ];
  const from = ways.length > 0 ? t('settings.ups.from', { ways: ways.join(', ') }) : t('settings.ups.none');
  if (!ups.last) return `${t('settings.ups.noneYet')}\n${from}`;
  const when = timestamp(new Date(ups.last.at), TimestampStyles.RelativeTime) ?? '—';
  const last = t('settings.ups.last', {
    member: `<@${ups.last.userId}>`,
    when,
    source: t(`settings.ups.source.${ups.last.source}`),
  });
  return `${last}\n${from}`;
}

function digestText(settings: GuildSettings, nextAt: number | undefined, t: Translate): string {
  if (!settings.digest) return t('settings.value.digestOff');
  return t('settings.value.digestOn', {
    period: t(`settings.value.every.${settings.digest.period}`),
    channel: channelMention(settings.digest.channelId, t),
    next: nextAt === undefined ? '—' : `<t:${Math.floor(nextAt / 1000)}:R>`,
  });
}

function webhookText(webhook: WebhookSetup | undefined, t: Translate): string {
  if (!webhook) return t('settings.value.webhookOff');
  const last =
    webhook.lastEventAt === null
      ? null
      : timestamp(new Date(webhook.lastEventAt), TimestampStyles.RelativeTime);
  const on = t('settings.value.webhookOn', { channel: channelMention(webhook.channelId, t) });
  return `${on} · ${last ? t('settings.value.webhookLast', { relative: last }) : t('settings.value.webhookNone')}`;
}

/**
 * Every setting: the reminders (channel, role, text, the next one, heads-up, repeats), the public
 * language, and the problem last met, with how to fix it. `intro` opens the description (what just changed).
 */
export function renderOverview(
  overview: Overview,
  t: Translate,
  look: { title: string; color: number; intro?: string },
): LayoutMessage {
  const { settings, reminder, guildLocale } = overview;
  const on = settings.reminderChannelId !== null;
  const template = settings.reminderTemplate;
  const pairs: Array<[string, string | null]> = [
    [
      t('settings.field.reminders'),
      on
        ? t('settings.value.on', { channel: channelMention(settings.reminderChannelId, t) })
        : t('settings.value.off'),
    ],
  ];
  if (on) {
    pairs.push(
      [
        t('settings.field.role'),
        settings.reminderRoleId ? roleMention(settings.reminderRoleId, t) : t('settings.value.noRole'),
      ],
      [t('settings.field.nextReminder'), nextReminderText(reminder, t)],
      [t('settings.field.early'), earlyText(settings.reminderEarlyMs, t)],
      [t('settings.field.repeat'), repeatText(settings.reminderRepeat, t)],
    );
  }
  pairs.push([t('settings.field.digest'), digestText(settings, overview.nextDigestAt, t)]);
  pairs.push([
    t('settings.field.live'),
    settings.liveChannelId
      ? t(overview.liveStopped ? 'settings.value.liveStopped' : 'settings.value.liveOn', {
          channel: channelMention(settings.liveChannelId, t),
        })
      : t('settings.value.liveOff'),
  ]);
  pairs.push([t('settings.field.language'), languageText(settings.publicLanguage, guildLocale, t)]);
  pairs.push([t('settings.field.timeZone'), settings.timeZone ?? t('settings.value.utc')]);
  pairs.push([
    t('settings.field.thanks'),
    settings.thanksTemplate ? safeCode(settings.thanksTemplate, 320) : t('settings.value.thanksOff'),
  ]);
  if ('webhook' in overview) pairs.push([t('settings.field.webhook'), webhookText(overview.webhook, t)]);
  if (overview.ups) pairs.push([t('settings.field.ups'), upsText(overview.ups, t)]);
  const problems: Array<[string, string | null]> = [];
  if (overview.permissions && overview.permissions.length > 0) {
    problems.push([
      `⚠️ ${t('permissions.field')}`,
      truncate(permissionProblemsText(overview.permissions, t), LIMITS.fieldValue),
    ]);
  }
  if (overview.webhook?.problem) {
    problems.push([
      `⚠️ ${t('settings.field.webhook')}`,
      truncate(
        problemText(overview.webhook.problem, t, {
          channelId: overview.webhook.channelId,
          roleId: null,
          webhook: true,
        }),
        LIMITS.fieldValue,
      ),
    ]);
  }
  if (settings.problem) {
    const since = timestamp(new Date(settings.problem.at), TimestampStyles.RelativeTime);
    const text = problemText(settings.problem.reason, t, {
      channelId: settings.reminderChannelId,
      roleId: settings.reminderRoleId,
    });
    problems.push([
      `⚠️ ${t('settings.field.problem')}`,
      truncate(
        since ? `${text} ${t('settings.problem.since', { relative: since })}` : text,
        LIMITS.fieldValue,
      ),
    ]);
  }
  const panel = container(problems.length > 0 ? COLORS.warning : look.color, [
    textDisplay(`### ${look.title}`),
    textDisplay(look.intro),
    separator(),
    textDisplay(facts(pairs)),
    ...(on
      ? [
          separator(),
          textDisplay(
            template === null
              ? `**${t('settings.field.message')}:** ${t('settings.value.defaultMessage')}\n${codeBlock(t('reminders.default'))}`
              : `**${t('settings.field.message')}:**\n${codeBlock(template)}`,
          ),
        ]
      : []),
    ...(problems.length > 0 ? [separator(), textDisplay(facts(problems))] : []),
  ]);
  return { layout: fitLayout([panel]) };
}

function earlyText(earlyMs: number | null, t: Translate): string {
  if (earlyMs === null) return t('settings.value.earlyOff');
  return t('settings.value.earlyOn', { minutes: Math.round(earlyMs / 60_000) });
}

function repeatText(repeat: ReminderRepeat | null, t: Translate): string {
  if (repeat === null) return t('settings.value.repeatOff');
  return t('settings.value.repeatOn', { minutes: Math.round(repeat.everyMs / 60_000), count: repeat.times });
}

/** What the bot posts in the reminder channel when it is chosen: short, in the server's language. */
export function renderConfirmation(
  input: { roleId: string | null; command: string },
  t: Translate,
): APIMessageTopLevelComponent[] {
  const description = input.roleId
    ? t('settings.confirmation.withRole', { role: roleMention(input.roleId, t), command: input.command })
    : t('settings.confirmation.withoutRole', { command: input.command });
  return [notice(COLORS.info, t('settings.confirmation.title'), description)];
}
