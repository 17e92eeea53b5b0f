/**
 * `/settings digest`, `digest-off`, `live-leaderboard` and `live-leaderboard-off`: what the bot
 * posts in a server on its own besides reminders, a digest at each period's end (send.ts) and one
 * message kept up to date (live.ts). The channel is checked as /settings reminders checks it, and
 * the bot's permissions there are read first: a channel where it could not post changes nothing
 * and the answer says what to grant. The JSON of the four subcommands is settings-command.ts.
 * Every answer private, in the user's language.
 */
import { FEATURE_PERMISSIONS, type PermissionName } from '../../discord/feature-permissions.js';
import { UserInputError } from '../../interactions/error-message.js';
import type { BotDeps } from '../../interactions/types.js';
import { COLORS } from '../../render/colors.js';
import { channelMention, permissionList } from '../../render/problems.js';
import type { DigestPeriod } from '../../store/schema.js';
import type { GuildSettings } from '../../store/settings.js';
import { isCalendarPeriod } from '../history/calendar.js';
import { renderOverview, renderRefusal } from '../settings/render.js';
import {
  type ChosenChannel,
  channelRefusal,
  chosenChannel,
  deleteLeftBehind,
  lacking,
  type SettingsAnswer,
  type SettingsContext,
  type SettingsDeps,
  type SettingsHandlers,
} from '../settings/settings.js';

export type PostsDeps = SettingsDeps & Pick<BotDeps, 'posts'>;

/** A refusal when the bot cannot post there (undefined: it can, or that cannot be known now). */
async function cannotPost(
  deps: SettingsDeps,
  context: SettingsContext,
  channelId: string,
  needed: readonly PermissionName[],
): Promise<SettingsAnswer | undefined> {
  const missing = await lacking(deps, context, channelId, needed);
  if (!missing || missing.length === 0) return undefined;
  const { t } = context;
  const text = t('settings.post.cannotPost', {
    channel: channelMention(channelId, t),
    permissions: permissionList(missing, t),
  });
  return { message: renderRefusal(text, t), outcome: 'refused:missing-permission' };
}

async function answer(
  deps: PostsDeps,
  context: SettingsContext,
  settings: GuildSettings,
  look: { title: string; intro: string; outcome: string; nextDigestAt?: number | undefined },
): Promise<SettingsAnswer> {
  const reminder = await deps.reminders.getGuild(context.guildId);
  return {
    message: renderOverview(
      { settings, reminder, guildLocale: context.guildLocale, nextDigestAt: look.nextDigestAt },
      context.t,
      { title: look.title, color: COLORS.success, intro: look.intro },
    ),
    outcome: look.outcome,
  };
}

/** `/settings digest channel: period:` */
export async function setDigest(
  deps: PostsDeps,
  context: SettingsContext,
  request: ChosenChannel & { period: DigestPeriod },
): Promise<SettingsAnswer> {
  const refusal =
    channelRefusal(request, context) ??
    (await cannotPost(deps, context, request.channelId, FEATURE_PERMISSIONS.digests.permissions));
  if (refusal) return refusal;
  const { t, guildId } = context;
  const digest = { channelId: request.channelId, period: request.period };
  const settings = await deps.settings.update(guildId, { digest }, deps.now());
  const nextDigestAt = await deps.posts.planDigest(settings, deps.now());
  return answer(deps, context, settings, {
    title: t('settings.title.digestOn'),
    intro: t(`settings.digestSet.${request.period}`, {
      channel: channelMention(request.channelId, t),
      zone: settings.timeZone ?? 'UTC',
      next: nextDigestAt === undefined ? '—' : `<t:${Math.floor(nextDigestAt / 1000)}:R>`,
    }),
    outcome: `digest:${request.period}`,
    nextDigestAt,
  });
}

/** `/settings digest-off` */
export async function turnDigestOff(deps: PostsDeps, context: SettingsContext): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const settings = await deps.settings.update(guildId, { digest: null }, deps.now());
  await deps.posts.digests.cancel(guildId);
  return answer(deps, context, settings, {
    title: t('settings.title.digestOff'),
    intro: t('settings.digestOff'),
    outcome: 'digest-off',
  });
}

/** `/settings live-leaderboard channel:` */
export async function setLiveBoard(
  deps: PostsDeps,
  context: SettingsContext,
  request: ChosenChannel,
): Promise<SettingsAnswer> {
  const refusal =
    channelRefusal(request, context) ??
    (await cannotPost(deps, context, request.channelId, FEATURE_PERMISSIONS.liveLeaderboard.permissions));
  if (refusal) return refusal;
  const { t, guildId } = context;
  const now = deps.now();
  const settings = await deps.settings.update(guildId, { liveChannelId: request.channelId }, now);
  const moved = await deps.posts.liveBoards.set(guildId, request.channelId, now);
  deps.posts.wakeLiveBoards(now);
  // The board of another channel goes: one board per server.
  if (moved?.messageId) await deleteBoard(deps, guildId, moved.channelId, moved.messageId);
  return answer(deps, context, settings, {
    title: t('settings.title.liveOn'),
    intro: t('settings.liveSet', { channel: channelMention(request.channelId, t) }),
    outcome: 'live',
  });
}

/** `/settings live-leaderboard-off`: the board and its message go. */
export async function turnLiveBoardOff(deps: PostsDeps, context: SettingsContext): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const settings = await deps.settings.update(guildId, { liveChannelId: null }, deps.now());
  const removed = await deps.posts.liveBoards.remove(guildId);
  if (removed?.messageId) await deleteBoard(deps, guildId, removed.channelId, removed.messageId);
  return answer(deps, context, settings, {
    title: t('settings.title.liveOff'),
    intro: t('settings.liveOff'),
    outcome: 'live-off',
  });
}

function deleteBoard(deps: PostsDeps, guildId: string, channelId: string, messageId: string): Promise<void> {
  return deleteLeftBehind(deps, { guildId, channelId, messageId }, 'the live leaderboard left behind');
}

/** The handlers of /settings digest, digest-off, live-leaderboard and live-leaderboard-off. */
export const postsSettings: SettingsHandlers = {
  digest(deps, context, options) {
    const period = options.getString('period', true);
    if (!isCalendarPeriod(period)) throw new UserInputError('generic');
    return setDigest(deps, context, { ...chosenChannel(options), period });
  },
  'digest-off': (deps, context) => turnDigestOff(deps, context),
  'live-leaderboard': (deps, context, options) => setLiveBoard(deps, context, chosenChannel(options)),
  'live-leaderboard-off': (deps, context) => turnLiveBoardOff(deps, context),
};
