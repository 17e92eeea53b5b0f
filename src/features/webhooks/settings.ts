/**
 * `/settings webhook` and `webhook-off`: a server's set-up of the directory's webhook (its key, the
 * channel its events are announced in) and the address to paste on the directory. The channel is
 * proven as /settings reminders proves it (a confirmation posted first). The JSON of both
 * subcommands is settings-command.ts. Every answer private, in the user's language.
 */
import { publicTranslator } from '../../i18n/public-language.js';
import type { BotDeps } from '../../interactions/types.js';
import { COLORS } from '../../render/colors.js';
import { fitLayout, notice } from '../../render/layout.js';
import { channelMention } from '../../render/problems.js';
import { renderRefusal } from '../settings/render.js';
import {
  type ChosenChannel,
  channelRefusal,
  chosenChannel,
  deleteConfirmation,
  postConfirmation,
  type SettingsAnswer,
  type SettingsContext,
  type SettingsDeps,
  type SettingsHandlers,
} from '../settings/settings.js';
import { WEBHOOK_PATH_PREFIX } from './receiver.js';

export type WebhookDeps = SettingsDeps &
  Pick<BotDeps, 'webhooks' | 'webhookReceiver'> &
  Partial<Pick<BotDeps, 'directory' | 'notificationsOn'>>;

export const MIN_KEY_LENGTH = 16;
export const MAX_KEY_LENGTH = 256;

/** One word of visible ASCII: what a key shown on a web page and copied is. */
export function isPlausibleKey(key: string): boolean {
  return key.length >= MIN_KEY_LENGTH && key.length <= MAX_KEY_LENGTH && /^[\x21-\x7e]+$/.test(key);
}

/**
 * The address to paste on the directory (PUBLIC_URL, which the configuration keeps without its
 * trailing slashes, and the route), or only the path without it.
 */
export function webhookAddress(
  publicUrl: string | undefined,
  guildId: string,
): { url?: string; path: string } {
  const path = `${WEBHOOK_PATH_PREFIX}${guildId}`;
  return publicUrl ? { url: `${publicUrl}${path}`, path } : { path };
}

export async function setWebhook(
  deps: WebhookDeps,
  context: SettingsContext,
  request: { key: string } & ChosenChannel,
): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const wrongChannel = channelRefusal(request, context);
  if (wrongChannel) return wrongChannel;
  const key = request.key.trim();
  if (!isPlausibleKey(key)) {
    return {
      message: renderRefusal(t('settings.webhook.badKey', { min: MIN_KEY_LENGTH, max: MAX_KEY_LENGTH }), t),
      outcome: 'refused:webhook-key',
    };
  }
  const settings = await deps.settings.get(guildId);
  const publicT = publicTranslator(settings, context.guildLocale);
  const posted = await postConfirmation(
    deps,
    context,
    request.channelId,
    [
      notice(
        COLORS.info,
        publicT('settings.webhook.confirmation.title'),
        publicT('settings.webhook.confirmation.description'),
      ),
    ],
    'webhookAnnouncements',
  );
  if (!posted.ok) return posted.answer;
  try {
    await deps.webhooks.configure(guildId, key, request.channelId, deps.now());
  } catch (err) {
    await deleteConfirmation(deps, guildId, request.channelId, posted.messageId);
    throw err;
  }
  const channel = channelMention(request.channelId, t);
  const address = webhookAddress(deps.webhookReceiver.publicUrl, guildId);
  const v3 = deps.directory?.version === 'v3';
  const parts = [
    t('settings.webhook.on', { channel }),
    v3
      ? t('settings.webhook.stepsV3', {
          where: address.url
            ? `\`${address.url}\``
            : t('settings.webhook.pathOnly', { path: `\`${address.path}\`` }),
          channel,
        })
      : address.url
        ? t('settings.webhook.steps', { url: `\`${address.url}\``, channel })
        : t('settings.webhook.stepsNoUrl', { path: `\`${address.path}\``, channel }),
    ...(v3 && deps.notificationsOn ? [t('settings.webhook.notifyV3')] : []),
  ];
  if (!deps.webhookReceiver.listening) parts.push(t('settings.webhook.notListening'));
  return {
    message: {
      layout: fitLayout([
        notice(
          deps.webhookReceiver.listening ? COLORS.success : COLORS.warning,
          t('settings.title.webhookOn'),
          parts.join('\n\n'),
        ),
      ]),
    },
    outcome: 'webhook-on',
  };
}

export async function turnWebhookOff(deps: WebhookDeps, context: SettingsContext): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const removed = await deps.webhooks.remove(guildId);
  return {
    message: {
      layout: [
        notice(
          COLORS.info,
          t('settings.title.webhookOff'),
          t(removed ? 'settings.webhook.off' : 'settings.webhook.wasOff'),
        ),
      ],
    },
    outcome: removed ? 'webhook-off' : 'webhook-off:unchanged',
  };
}

/** The handlers of /settings webhook and webhook-off, by subcommand. */
export const webhookSettings: SettingsHandlers = {
  webhook: (deps, context, options) =>
    setWebhook(deps, context, { key: options.getString('key', true), ...chosenChannel(options) }),
  'webhook-off': (deps, context) => turnWebhookOff(deps, context),
};
