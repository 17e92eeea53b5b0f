/**
 * What every /settings subcommand shares, wherever its concept keeps it (features/<concept>/
 * settings.ts, commands/settings.ts routing to them): who asks where (SettingsContext), the answer
 * (SettingsAnswer), the channel an admin chose and its checks, and the confirmation that proves
 * the bot can post there. Discord checks who may use the command (Manage Server by default,
 * grantable in Server Settings > Integrations); the bot does not check again.
 *
 * Choosing a channel proves it works: the bot posts a short confirmation there first, and saves
 * nothing if it cannot, telling the admin which permission to grant and where.
 */
import type { APIMessageTopLevelComponent } from 'discord.js';
import {
  FEATURE_PERMISSIONS,
  type Feature,
  missingFor,
  type PermissionName,
  permissionBits,
} from '../../discord/feature-permissions.js';
import { POSTED_IN_CHANNEL_TYPES } from '../../discord/messages.js';
import type { Translate } from '../../i18n/index.js';
import { GuildOnlyError } from '../../interactions/error-message.js';
import type { BotDeps, CommandContext } from '../../interactions/types.js';
import type { RenderedMessage } from '../../render/message.js';
import { channelMention, permissionList } from '../../render/problems.js';
import type { TemplateCheck } from '../../render/template.js';
import { safeCode } from '../../render/text.js';
import { DEFAULT_PUBLIC_LANGUAGE, type GuildSettings } from '../../store/settings.js';
import { renderRefusal } from './render.js';

export type SettingsDeps = Pick<
  BotDeps,
  'settings' | 'reminders' | 'reminderRoleChosen' | 'messages' | 'permissions' | 'commands' | 'now' | 'logger'
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

/**
 * Who asks where, from an interaction in a server (a /settings command, a form's submit); a
 * GuildOnlyError outside one.
 */
export function settingsContextOf(
  interaction: { guildId: string | null; guildLocale: string | null; client: { user: { id: string } } },
  t: Translate,
): SettingsContext {
  const guildId = interaction.guildId;
  if (!guildId) throw new GuildOnlyError();
  return { guildId, guildLocale: interaction.guildLocale ?? null, botId: interaction.client.user.id, t };
}

export interface SettingsAnswer {
  message: RenderedMessage;
  /** For the log line: what happened. */
  outcome: string;
}

/** The options of the /settings interaction, as Discord resolved them. */
export type SettingsOptions = CommandContext['interaction']['options'];

/** One subcommand's (or subcommand group's) handler: its options read, its use case run. */
export type SettingsHandler = (
  deps: BotDeps,
  context: SettingsContext,
  options: SettingsOptions,
) => Promise<SettingsAnswer> | SettingsAnswer;

/** A concept's /settings handlers, by subcommand (or group) name. */
export type SettingsHandlers = Readonly<Record<string, SettingsHandler>>;

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

/** The `channel` option: its id, and its type and server as Discord resolved them. */
export function chosenChannel(options: SettingsOptions): ChosenChannel {
  const option = options.get('channel', true);
  const channel = option.channel;
  let guildId: string | undefined;
  if (channel && 'guildId' in channel) guildId = channel.guildId;
  else if (channel && 'guild_id' in channel && typeof channel.guild_id === 'string')
    guildId = channel.guild_id;
  return {
    channelId: String(option.value),
    resolvedChannel: channel ? { type: channel.type, guildId } : undefined,
  };
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
  const have = await deps.permissions.inChannel(
    { guildId: context.guildId, channelId, userId: context.botId },
    PERMISSIONS_TIMEOUT_MS,
  );
  return have === null ? null : needed.filter((name) => (have & permissionBits([name])) === 0n);
}

/** Where a feature a server turned on acts: the channel it posts in, or null for the server (roles). */
export interface FeaturePlace {
  feature: Feature;
  channelId: string | null;
}

/** What a feature lacks where it acts. */
export interface PlaceProblem extends FeaturePlace {
  missing: PermissionName[];
}

/**
 * What each feature lacks where it acts (FEATURE_PERMISSIONS), each channel and the server read
 * once, all at once, so the whole look takes PERMISSIONS_TIMEOUT_MS at most. A place whose
 * permissions cannot be had in time is left out: not known is not missing.
 */
export async function permissionProblems(
  deps: Pick<SettingsDeps, 'permissions'>,
  context: Pick<SettingsContext, 'guildId' | 'botId'>,
  places: readonly FeaturePlace[],
): Promise<PlaceProblem[]> {
  const { guildId, botId: userId } = context;
  const channels = [...new Set(places.flatMap((p) => (p.channelId === null ? [] : [p.channelId])))];
  const serverWide = places.some((p) => p.channelId === null);
  const [server, ...inChannels] = await Promise.all([
    serverWide ? deps.permissions.inGuild({ guildId, userId }, PERMISSIONS_TIMEOUT_MS) : null,
    ...channels.map((channelId) =>
      deps.permissions.inChannel({ guildId, channelId, userId }, PERMISSIONS_TIMEOUT_MS),
    ),
  ]);
  const problems: PlaceProblem[] = [];
  for (const place of places) {
    const have = place.channelId === null ? server : inChannels[channels.indexOf(place.channelId)];
    if (have === null || have === undefined) continue;
    const missing = missingFor(place.feature, have);
    if (missing.length > 0) problems.push({ ...place, missing });
  }
  return problems;
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
  /** The feature the channel is for: what it needs is named when the post is refused. */
  feature: Feature = 'reminders',
): Promise<{ ok: true; messageId: string } | { ok: false; answer: SettingsAnswer }> {
  const { t, guildId } = context;
  const posted = await deps.messages.post(channelId, { layout, allowedMentions: { parse: [] } });
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
      const needed = FEATURE_PERMISSIONS[feature].permissions;
      const found = await lacking(deps, context, channelId, needed);
      // Not known, or Discord refused while every one looks granted (changed meanwhile?): name them all.
      const missing = found && found.length > 0 ? found : needed;
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

/**
 * Deletes a message of the bot's that a setting left behind; one that could not be deleted is a
 * warning naming `what` it was, never a failed answer.
 */
export async function deleteLeftBehind(
  deps: SettingsDeps,
  message: { guildId: string; channelId: string; messageId: string },
  what: string,
): Promise<void> {
  const deleted = await deps.messages.delete(message.channelId, message.messageId);
  if (!deleted.ok) {
    deps.logger.warn({ failure: deleted.failure, guildId: message.guildId }, `could not delete ${what}`);
  }
}

/** Not saved after all (the store went away meanwhile): the confirmation would say otherwise. */
export function deleteConfirmation(
  deps: SettingsDeps,
  guildId: string,
  channelId: string,
  messageId: string,
): Promise<void> {
  return deleteLeftBehind(deps, { guildId, channelId, messageId }, 'the confirmation of settings not saved');
}
