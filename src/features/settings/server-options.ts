/**
 * `/settings timezone` and `/settings thanks`: what the server's ups say of themselves, the days
 * its members' streaks count (features/history/streaks.ts) and the thank-you line a successful
 * /up gets (features/up/thanks.ts). Every answer private, in the user's language, as the rest of
 * /settings (settings.ts).
 */
import type { BotDeps } from '../../interactions/types.js';
import { COLORS } from '../../render/colors.js';
import { safeCode } from '../../render/text.js';
import { knownTimeZone } from '../history/streaks.js';
import { checkThanks } from '../up/thanks.js';
import { planDigest } from './posts.js';
import { renderOverview, renderRefusal } from './render.js';
import {
  defaults,
  type SettingsAnswer,
  type SettingsContext,
  type SettingsDeps,
  templateRefusal,
} from './settings.js';

/**
 * `/settings timezone`: the IANA time zone whose calendar days the members' streaks count
 * (features/history/streaks.ts) and whose weeks and months the digests follow. A name this machine's time zone data does not know changes
 * nothing and says how one is written.
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
  if (deps.posts && settings.digest) await planDigest(deps.posts, settings, deps.now());
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

/**
 * `/settings thanks [message]`: the thank-you line a successful /up gets (features/up/thanks.ts);
 * without a message, none. A message with a placeholder the line does not know changes nothing.
 */
export async function setThanks(
  deps: SettingsDeps,
  context: SettingsContext,
  message: string | null,
): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  let template: string | null = null;
  if (message !== null) {
    const check = checkThanks(message);
    if (!check.ok) {
      return {
        message: renderRefusal(`${templateRefusal(check, t)}\n\n${t('settings.thanks.placeholders')}`, t),
        outcome: `refused:thanks-${check.reason}`,
      };
    }
    template = check.template;
  }
  const settings = await deps.settings.update(guildId, { thanksTemplate: template }, deps.now());
  const reminder = await deps.reminders.getGuild(guildId);
  return {
    message: renderOverview({ settings, reminder, guildLocale: context.guildLocale }, t, {
      title: t(template ? 'settings.title.thanksOn' : 'settings.title.thanksOff'),
      color: COLORS.success,
      intro: template ? t('settings.thanks.on') : t('settings.thanks.off'),
    }),
    outcome: template ? 'thanks' : 'thanks-off',
  };
}
