/** /profile [user]: a profile card and the user's bots; without a user, the invoker. */
import type { SlashCommand } from '../src/interactions/types.js';
import { profileCard } from './cards.js';
import { profileCommand } from './definitions.js';

export const profile: SlashCommand = {
  data: profileCommand,
  subject: 'profile',
  async execute({ interaction, deps, t, reply, deadline }) {
    const user = interaction.options.getUser('user') ?? interaction.user;
    await reply.public(await profileCard(deps, t, user, deadline));
    return 'shown';
  },
};
