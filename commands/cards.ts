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

/**
 * How long a person's look-up may wait for the directory's limit (v3: 25 requests per 10 s for
 * the whole key): past it the answer is at once "busy, try again at …" (a RateLimitedError with the
 * wait), not a card minutes later. Bench scenario 15: with the interaction's whole 15 minutes, a
 * look-up not yet cached waited up to 6 minutes behind the others while three hosts filled their
 * caches.
 */
export const LOOKUP_WAIT_MS = 10_000;

/** A look-up's request options: interactive, by the interaction's deadline or LOOKUP_WAIT_MS, whichever is first. */
export function lookupOptions(deps: Pick<BotDeps, 'now'>, deadline: number) {
  return { priority: 'interactive' as const, deadline: Math.min(deadline, deps.now() + LOOKUP_WAIT_MS) };
}

/** A bot's card; a NotFoundError when the directory has no such bot. */
export async function botCard(
  deps: BotDeps,
  t: Translate,
  locale: SupportedLocale,
  ref: string,
  deadline: number,
): Promise<{ record: DirectoryBot; identity: UserIdentity | null; message: RenderedMessage }> {
  const record = await deps.directory.getBot(ref, lookupOptions(deps, deadline));
  // The directory has no name or avatar for a bot: Discord does.
  const identity = await deps.discord.identity(record.id);
  return { record, identity, message: renderBotCard(record, t, locale, identity, deps.now()) };
}

/** A person's profile card with their bots; a NotFoundError when the directory has no profile. */
export async function profileCard(
  deps: BotDeps,
  t: Translate,
  user: Pick<User, 'id' | 'displayName' | 'displayAvatarURL'>,
  deadline: number,
): Promise<RenderedMessage> {
  const [record, bots] = await Promise.all([
    deps.directory.getProfile(user.id, lookupOptions(deps, deadline)),
    // v3's profile lists the bots itself. v1/v2: the list needs a token and is a bonus, the card
    // shows without it.
    deps.directory.version === 'v3'
      ? null
      : deps.directory.getDeveloperBots(user.id, lookupOptions(deps, deadline)).catch((err: unknown) => {
          deps.logger.debug({ err, userId: user.id }, "developer's bots not shown");
          return null;
        }),
  ]);
  return renderProfileCard(record, bots, t, {
    name: user.displayName,
    avatarUrl: user.displayAvatarURL({ size: 256 }),
  });
}
