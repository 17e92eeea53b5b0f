/**
 * `/settings language`, `timezone` and `show`: what is the server's as a whole, the language of
 * the bot's public messages, the time zone whose days its members' streaks count
 * (features/history/streaks.ts) and whose weeks and months the digests follow, and a look at every
 * setting. The JSON of the three subcommands is general-command.ts. Every answer private, in the
 * user's language, as the rest of /settings (settings.ts).
 */
import { languageText } from '../../i18n/public-language.js';
import { UserInputError } from '../../interactions/error-message.js';
import type { BotDeps } from '../../interactions/types.js';
import { COLORS } from '../../render/colors.js';
import { safeCode } from '../../render/text.js';
import type { PublicLanguage } from '../../store/schema.js';
import type { GuildSettings } from '../../store/settings.js';
import { knownTimeZone } from '../history/streaks.js';
import { renderOverview } from './render.js';
import {
  defaults,
  type FeaturePlace,
  permissionProblems,
  type SettingsAnswer,
  type SettingsContext,
  type SettingsDeps,
  type SettingsHandlers,
} from './settings.js';

/**
 * `/settings timezone`: the IANA time zone whose calendar days the members' streaks count
 * (features/history/streaks.ts) and whose weeks and months the digests follow. A name this
 * machine's time zone data does not know changes nothing and says how one is written.
 */
export async function setTimeZone(
  deps: SettingsDeps & Partial<Pick<BotDeps, 'posts'>>,
  context: SettingsContext,
  name: string,
): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const zone = knownTimeZone(name);
  if (!zone) {
    const [stored, reminder] = await Promise.all([
      deps.settings.get(guildId),
      deps.reminders.getGuild(guildId),
    ]);
    return {
      message: renderOverview(
        { settings: stored ?? defaults(guildId, deps.now()), reminder, guildLocale: context.guildLocale },
        t,
        {
          title: t('settings.title.refused'),
          color: COLORS.warning,
          intro: t('settings.timeZoneUnknown', {
            name: safeCode(name, 66),
            interpolation: { escapeValue: false },
          }),
        },
      ),
      outcome: 'timezone:unknown',
    };
  }
  const settings = await deps.settings.update(guildId, { timeZone: zone }, deps.now());
  // The digest's period ends at midnight of the new zone.
  if (deps.posts && settings.digest) await deps.posts.planDigest(settings, deps.now());
  const reminder = await deps.reminders.getGuild(guildId);
  return {
    message: renderOverview({ settings, reminder, guildLocale: context.guildLocale }, t, {
      title: t('settings.title.timeZone'),
      color: COLORS.success,
      intro: t('settings.timeZoneSet', { zone: `**${zone}**` }),
    }),
    outcome: 'timezone',
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

/**
 * Where each feature a server turned on acts: the reminder, digest, live leaderboard and webhook
 * channels; the server for the reminder role ("Notify me") and reward roles.
 */
export function featurePlaces(
  settings: GuildSettings,
  on: { webhookChannelId?: string | undefined; rewards?: boolean | undefined } = {},
): FeaturePlace[] {
  const places: FeaturePlace[] = [];
  if (settings.reminderChannelId)
    places.push({ feature: 'reminders', channelId: settings.reminderChannelId });
  // Pinging a role that is not mentionable (reminderPing) is not looked at: whether it is
  // mentionable is a role's setting /settings reminders warns about when the role is chosen.
  if (settings.reminderChannelId && settings.reminderRoleId)
    places.push({ feature: 'reminderRole', channelId: null });
  if (settings.digest) places.push({ feature: 'digests', channelId: settings.digest.channelId });
  if (settings.liveChannelId) places.push({ feature: 'liveLeaderboard', channelId: settings.liveChannelId });
  if (on.webhookChannelId) places.push({ feature: 'webhookAnnouncements', channelId: on.webhookChannelId });
  if (on.rewards) places.push({ feature: 'rewards', channelId: null });
  return places;
}

/**
 * `/settings show`: every setting, the next reminder, the ups seen, the problem last met, and what
 * each feature turned on lacks where it acts (read now, within permissionProblems' bound).
 */
export async function showSettings(
  deps: SettingsDeps &
    Partial<Pick<BotDeps, 'posts' | 'history' | 'directory' | 'notificationsOn' | 'upDirectory' | 'rewards'>>,
  context: SettingsContext,
): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const [stored, reminder, webhook, nextDigestAt, board, lastUp, rewards] = await Promise.all([
    deps.settings.get(guildId),
    deps.reminders.getGuild(guildId),
    deps.webhooks?.get(guildId),
    deps.posts?.digests.next(guildId),
    deps.posts?.liveBoards.get(guildId),
    deps.history?.latest(guildId).catch((err: unknown) => {
      deps.logger.warn({ err, guildId }, 'could not read the latest up for /settings show');
      return undefined;
    }),
    deps.rewards?.list(guildId).catch((err: unknown) => {
      deps.logger.warn({ err, guildId }, 'could not read the reward roles for /settings show');
      return [];
    }),
  ]);
  const settings = stored ?? defaults(guildId, deps.now());
  const liveStopped = board?.state === 'failed';
  const permissions = await permissionProblems(
    deps,
    context,
    featurePlaces(settings, { webhookChannelId: webhook?.channelId, rewards: (rewards?.length ?? 0) > 0 }),
  );
  const overview = {
    settings,
    reminder,
    guildLocale: context.guildLocale,
    webhook,
    nextDigestAt,
    liveStopped,
    permissions,
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
    outcome:
      settings.problem || webhook?.problem || liveStopped || permissions.length > 0
        ? 'shown:problem'
        : 'shown',
  };
}

/** The languages /settings language offers (its option's choices). */
export const PUBLIC_LANGUAGES: readonly PublicLanguage[] = ['auto', 'en-US', 'ru'];

export function isPublicLanguage(value: unknown): value is PublicLanguage {
  return typeof value === 'string' && (PUBLIC_LANGUAGES as readonly string[]).includes(value);
}

/** The handlers of /settings language, timezone and show, by subcommand. */
export const generalSettings: SettingsHandlers = {
  language(deps, context, options) {
    const language = options.getString('language', true);
    if (!isPublicLanguage(language)) throw new UserInputError('generic');
    return setLanguage(deps, context, language);
  },
  timezone: (deps, context, options) => setTimeZone(deps, context, options.getString('zone', true)),
  show: (deps, context) => showSettings(deps, context),
};
