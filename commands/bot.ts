/** /bot ref: a bot card (ID, short code, mention or directory page URL). */
import { parseReference } from '../src/directory/index.js';
import { UserInputError } from '../src/interactions/error-message.js';
import { placeOf } from '../src/interactions/suggestions.js';
import type { SlashCommand } from '../src/interactions/types.js';
import { botCard } from './cards.js';
import { botCommand } from './definitions.js';

export const bot: SlashCommand = {
  data: botCommand,
  subject: 'bot',
  async execute({ interaction, deps, t, locale, reply, deadline }) {
    const ref = parseReference(interaction.options.getString('ref', true), 'bot');
    if (!ref) throw new UserInputError('bot');
    const { record, identity, message } = await botCard(deps, t, locale, ref, deadline);
    await reply.public(message);
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
