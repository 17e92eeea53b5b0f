/** /bot ref: a bot card (ID, short code, mention or directory page URL). */
import { parseReference } from '../src/directory/index.js';
import { UserInputError } from '../src/interactions/error-message.js';
import { placeOf } from '../src/interactions/suggestions.js';
import type { SlashCommand } from '../src/interactions/types.js';
import { renderBotCard } from '../src/render/cards.js';
import { botCommand } from './definitions.js';

export const bot: SlashCommand = {
  data: botCommand,
  subject: 'bot',
  async execute({ interaction, deps, t, locale, reply, deadline }) {
    const ref = parseReference(interaction.options.getString('ref', true), 'bot');
    if (!ref) throw new UserInputError('bot');
    const record = await deps.directory.getBot(ref, { priority: 'interactive', deadline });
    // The directory has no name or avatar for a bot: Discord does.
    const identity = await deps.discord.identity(record.id);
    await reply.public(renderBotCard(record, t, locale, identity));
    const value = record.shortCode ?? record.id;
    deps.suggestions.lookedUp(
      placeOf(interaction),
      'bot',
      identity ? `${identity.name} (${value})` : value,
      value,
    );
    return 'shown';
  },
  autocomplete({ interaction, deps }) {
    return deps.suggestions.choices({
      kind: 'bot',
      place: placeOf(interaction),
      userId: interaction.user.id,
      typed: String(interaction.options.getFocused()),
    });
  },
};
