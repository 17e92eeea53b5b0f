/**
 * `/settings thanks [message]`: the thank-you line (thanks.ts) a successful /up gets (up.ts), and
 * an up given on the directory's site (features/webhooks/up-elsewhere.ts). Its JSON is
 * settings-command.ts. Every answer private, in the user's language, as the rest of /settings
 * (features/settings/settings.ts).
 */
import { COLORS } from '../../render/colors.js';
import { renderOverview, renderRefusal } from '../settings/render.js';
import {
  type SettingsAnswer,
  type SettingsContext,
  type SettingsDeps,
  type SettingsHandlers,
  templateRefusal,
} from '../settings/settings.js';
import { checkThanks } from './thanks.js';

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

/** The handler of /settings thanks. */
export const thanksSettings: SettingsHandlers = {
  thanks: (deps, context, options) => setThanks(deps, context, options.getString('message')),
};
