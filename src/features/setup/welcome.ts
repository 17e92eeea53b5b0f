/**
 * The message posted on joining a server: once per server (store/welcomes.ts), in the first
 * channel where the bot may post (the system channel, then the text channels in Discord's order),
 * in the server's language, pinging no one. It says what the bot does and holds the "Set up"
 * button that opens the /setup form (commands/setup.ts) and a mention of /help. A server where no
 * channel takes it is left without one (an info line), never asked again.
 */
import { type APIMessageTopLevelComponent, ButtonStyle, ComponentType } from 'discord.js';
import type { CommandMentions } from '../../discord/command-mentions.js';
import { missingFor } from '../../discord/feature-permissions.js';
import type { ChannelMessages } from '../../discord/messages.js';
import type { ChannelPermissionsLookup } from '../../discord/permissions.js';
import type { ReportChannel } from '../../gateway/channel-names.js';
import { type Translate, translator } from '../../i18n/index.js';
import type { Logger } from '../../log/logger.js';
import { COLORS } from '../../render/colors.js';
import { actionButton } from '../../render/components.js';
import { container, subtext, text } from '../../render/layout.js';
import type { WelcomeRepository } from '../../store/welcomes.js';

/** The button that opens the /setup form. */
export const SETUP_BUTTON_ID = 'setup:open';

/** How many channels are tried, and how long the look at the bot's permissions in each may take. */
const CANDIDATES = 5;
const PERMISSIONS_TIMEOUT_MS = 5_000;

/**
 * A server joined this recently, found when the bot connects, is welcomed then: it was invited
 * while the bot was not running. Older ones were there before this feature, or greeted already.
 */
export const RECENT_JOIN_MS = 24 * 60 * 60_000;

export function recentlyJoined<G extends { joinedTimestamp: number | null | undefined }>(
  guilds: Iterable<G>,
  now: number,
): G[] {
  return [...guilds].filter(
    (g) => typeof g.joinedTimestamp === 'number' && now - g.joinedTimestamp < RECENT_JOIN_MS,
  );
}

export function renderWelcome(t: Translate, help: string): APIMessageTopLevelComponent[] {
  return [
    container(COLORS.info, [
      text(t('welcome.text')),
      {
        type: ComponentType.ActionRow,
        components: [actionButton(t('welcome.button'), SETUP_BUTTON_ID, { style: ButtonStyle.Primary })],
      },
      subtext(t('welcome.help', { help })),
    ]),
  ];
}

export interface WelcomeDeps {
  welcomes: Pick<WelcomeRepository, 'claim' | 'posted'>;
  messages: Pick<ChannelMessages, 'post'>;
  permissions: Pick<ChannelPermissionsLookup, 'inChannel'>;
  commands: Pick<CommandMentions, 'mention'>;
  logger: Logger;
  now: () => number;
}

export interface JoinedServer {
  guildId: string;
  /** The server's own locale: the message is in its language (the bot's settings are not made yet). */
  locale: string | null;
  botId: string;
  /** Where a message to the whole server may go, in order (gateway/channel-names.ts). */
  candidates: readonly ReportChannel[];
}

/** Posts the server's welcome unless one was posted (or tried) before. Never throws. */
export async function welcome(
  deps: WelcomeDeps,
  server: JoinedServer,
): Promise<'posted' | 'before' | 'nowhere'> {
  const { guildId } = server;
  try {
    if (!(await deps.welcomes.claim(guildId, deps.now()))) {
      deps.logger.debug({ guildId }, 'the server was welcomed before');
      return 'before';
    }
    const t = translator(server.locale);
    const layout = renderWelcome(t, await deps.commands.mention('help'));
    for (const channel of server.candidates.slice(0, CANDIDATES)) {
      const have = await deps.permissions.inChannel(
        { guildId, channelId: channel.id, userId: server.botId },
        PERMISSIONS_TIMEOUT_MS,
      );
      if (have !== null && missingFor('joinMessage', have).length > 0) continue;
      const posted = await deps.messages.post(channel.id, { layout, allowedMentions: { parse: [] } });
      if (!posted.ok) continue;
      await deps.welcomes.posted(guildId, channel.id, posted.messageId);
      deps.logger.info({ guildId, channelId: channel.id }, 'welcome posted');
      return 'posted';
    }
    deps.logger.info({ guildId }, 'no channel of the server takes the welcome: none posted');
    return 'nowhere';
  } catch (err) {
    deps.logger.warn({ err, guildId }, 'could not post the welcome');
    return 'nowhere';
  }
}
