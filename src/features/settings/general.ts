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
import { knownTimeZone } from '../history/streaks.js';
import { renderOverview } from './render.js';
import {
  defaults,
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
