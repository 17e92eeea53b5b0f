/**
 * "Directory card" in the context menu on a member: the bot's card for a bot, the profile (with the
 * person's bots) for a person; privately, to whoever asked. When the directory has neither, it says
 * so, privately too, in the router's own words ("❌ This bot is not in the directory.").
 */
import { NotFoundError } from '../src/directory/index.js';
import { describeFailure } from '../src/interactions/error-message.js';
import type { UserCommand } from '../src/interactions/types.js';
import { renderBotCard, renderProfileCard } from '../src/render/cards.js';
import { directoryCardCommand } from './definitions.js';

export const directoryCard: UserCommand = {
  data: directoryCardCommand,
  async execute({ interaction, deps, t, locale, reply, deadline }) {
    const target = interaction.targetUser;
    const options = { priority: 'interactive', deadline } as const;
    const notFound = async (err: NotFoundError, subject: 'bot' | 'profile') => {
      await reply.private(describeFailure(err, t, deps.now(), subject).message);
      return 'not-found';
    };
    if (target.bot) {
      const found = await lookUp(deps.directory.getBot(target.id, options));
      if (found instanceof NotFoundError) return notFound(found, 'bot');
      const identity = await deps.discord.identity(found.id);
      await reply.private(renderBotCard(found, t, locale, identity));
      return 'bot';
    }
    const [found, bots] = await Promise.all([
      lookUp(deps.directory.getProfile(target.id, options)),
      // The list of bots needs a token and is a bonus: the card shows without it.
      deps.directory.getDeveloperBots(target.id, options).catch((err: unknown) => {
        deps.logger.debug({ err, userId: target.id }, "developer's bots not shown");
        return null;
      }),
    ]);
    if (found instanceof NotFoundError) return notFound(found, 'profile');
    await reply.private(
      renderProfileCard(found, bots, t, {
        name: target.displayName,
        avatarUrl: target.displayAvatarURL({ size: 256 }),
      }),
    );
    return 'profile';
  },
};

/** The record, or the directory's "no such record"; any other failure goes on to the router's answer. */
function lookUp<T>(request: Promise<T>): Promise<T | NotFoundError> {
  return request.catch((err: unknown) => {
    if (err instanceof NotFoundError) return err;
    throw err;
  });
}
