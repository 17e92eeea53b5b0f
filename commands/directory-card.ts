/**
 * "Directory card" in the context menu on a member: the bot's card for a bot, the profile (with the
 * person's bots) for a person; privately, to whoever asked. When the directory has neither, it says
 * so, privately too, in the router's own words ("❌ This bot is not in the directory.").
 */
import { NotFoundError } from '../src/directory/index.js';
import { describeFailure } from '../src/interactions/error-message.js';
import type { UserCommand } from '../src/interactions/types.js';
import { botCard, profileCard } from './cards.js';
import { directoryCardCommand } from './definitions.js';

export const directoryCard: UserCommand = {
  data: directoryCardCommand,
  async execute({ interaction, deps, t, locale, reply, deadline }) {
    const target = interaction.targetUser;
    try {
      if (target.bot) {
        await reply.private((await botCard(deps, t, locale, target.id, deadline)).message);
        return 'bot';
      }
      await reply.private(await profileCard(deps, t, target, deadline));
      return 'profile';
    } catch (err) {
      // Any other failure goes on to the router's answer.
      if (!(err instanceof NotFoundError)) throw err;
      await reply.private(describeFailure(err, t, deps.now(), target.bot ? 'bot' : 'profile').message);
      return 'not-found';
    }
  },
};
