/** /server [ref]: a server card; without a reference, the current guild. */
import { parseReference } from '../src/directory/index.js';
import { GuildOnlyError, UserInputError } from '../src/interactions/error-message.js';
import type { SlashCommand } from '../src/interactions/types.js';
import { renderServerCard } from '../src/render/cards.js';
import { serverCommand } from './definitions.js';

export const server: SlashCommand = {
  data: serverCommand,
  subject: 'server',
  async execute({ interaction, deps, t, locale, reply, deadline }) {
    const given = interaction.options.getString('ref');
    let ref: string | null;
    if (given === null) {
      if (!interaction.guildId) throw new GuildOnlyError();
      ref = interaction.guildId;
    } else {
      ref = parseReference(given, 'server');
      if (!ref) throw new UserInputError('server');
    }
    const record = await deps.directory.getServer(ref, { priority: 'interactive', deadline });
    await reply.public(renderServerCard(record, t, locale));
    return 'shown';
  },
};
