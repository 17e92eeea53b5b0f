/**
 * The bot card and the profile card as /bot, /profile and "Directory card" show them: the
 * directory's record and what Discord adds (a bot's name and avatar, a person's bots), written
 * once for the three.
 */
import type { User } from 'discord.js';
import type { DirectoryBot } from '../src/directory/index.js';
import type { UserIdentity } from '../src/discord/lookups.js';
import type { SupportedLocale, Translate } from '../src/i18n/index.js';
import type { BotDeps } from '../src/interactions/types.js';
import { renderBotCard, renderProfileCard } from '../src/render/cards.js';
import type { RenderedMessage } from '../src/render/message.js';

/** A bot's card; a NotFoundError when the directory has no such bot. */
export async function botCard(
  deps: BotDeps,
  t: Translate,
  locale: SupportedLocale,
  ref: string,
  deadline: number,
): Promise<{ record: DirectoryBot; identity: UserIdentity | null; message: RenderedMessage }> {
  const record = await deps.directory.getBot(ref, { priority: 'interactive', deadline });
  // The directory has no name or avatar for a bot: Discord does.
  const identity = await deps.discord.identity(record.id);
  return { record, identity, message: renderBotCard(record, t, locale, identity) };
}

/** A person's profile card with their bots; a NotFoundError when the directory has no profile. */
export async function profileCard(
  deps: BotDeps,
  t: Translate,
  user: Pick<User, 'id' | 'displayName' | 'displayAvatarURL'>,
  deadline: number,
): Promise<RenderedMessage> {
  const [record, bots] = await Promise.all([
    deps.directory.getProfile(user.id, { priority: 'interactive', deadline }),
    // The list of bots needs a token and is a bonus: the card shows without it.
    deps.directory.getDeveloperBots(user.id, { priority: 'interactive', deadline }).catch((err: unknown) => {
      deps.logger.debug({ err, userId: user.id }, "developer's bots not shown");
      return null;
    }),
  ]);
  return renderProfileCard(record, bots, t, {
    name: user.displayName,
    avatarUrl: user.displayAvatarURL({ size: 256 }),
  });
}
