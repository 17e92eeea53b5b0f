/** /profile [user]: a profile card and the user's bots; without a user, the invoker. */
import type { SlashCommand } from '../src/interactions/types.js';
import { renderProfileCard } from '../src/render/cards.js';
import { profileCommand } from './definitions.js';

export const profile: SlashCommand = {
  data: profileCommand,
  subject: 'profile',
  async execute({ interaction, deps, t, reply, deadline }) {
    const user = interaction.options.getUser('user') ?? interaction.user;
    const [record, bots] = await Promise.all([
      deps.directory.getProfile(user.id, { priority: 'interactive', deadline }),
      // The list of bots needs a token and is a bonus: the card shows without it.
      deps.directory
        .getDeveloperBots(user.id, { priority: 'interactive', deadline })
        .catch((err: unknown) => {
          deps.logger.debug({ err, userId: user.id }, "developer's bots not shown");
          return null;
        }),
    ]);
    await reply.public(
      renderProfileCard(record, bots, t, {
        name: user.displayName,
        avatarUrl: user.displayAvatarURL({ size: 256 }),
      }),
    );
    return 'shown';
  },
};
