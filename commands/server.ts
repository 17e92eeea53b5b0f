/** /server [ref]: a server card; without a reference, the current guild. */
import { parseReference } from '../src/directory/index.js';
import { thisServerChart } from '../src/features/history/chart.js';
import { ServerNeededError, UserInputError } from '../src/interactions/error-message.js';
import { placeOf } from '../src/interactions/suggestions.js';
import type { SlashCommand } from '../src/interactions/types.js';
import { renderServerCard } from '../src/render/cards.js';
import { lookupOptions } from './cards.js';
import { serverCommand } from './definitions.js';

export const server: SlashCommand = {
  data: serverCommand,
  subject: 'server',
  async execute({ interaction, deps, t, locale, reply, deadline }) {
    const given = interaction.options.getString('ref');
    let ref: string | null;
    if (given === null) {
      if (!interaction.guildId) throw new ServerNeededError();
      ref = interaction.guildId;
    } else {
      ref = parseReference(given, 'server');
      if (!ref) throw new UserInputError('server');
    }
    const record = await deps.directory.getServer(ref, lookupOptions(deps, deadline));
    // This server's own card: its ups in the last 30 days, drawn from the history.
    const chart =
      ref === interaction.guildId
        ? await thisServerChart(
            {
              history: deps.history,
              charts: deps.charts,
              name: async (userId) => (await deps.discord.identity(userId))?.name ?? null,
            },
            ref,
            deps.now(),
            t,
          ).catch((err: unknown) => {
            deps.logger.warn(
              { err, guildId: ref },
              'the server chart could not be drawn; answering without it',
            );
            return null;
          })
        : null;
    const message = renderServerCard(
      record,
      t,
      locale,
      chart && {
        file: chart.file,
        title: `${t('upChart.title')} · ${t('leaderboard.barsTitle.day')}`,
        text: chart.text,
      },
      deps.now(),
    );
    await reply.public(message);
    deps.suggestions.lookedUp(placeOf(interaction), 'server', record.name, record.shortCode ?? record.id);
    return 'shown';
  },
  autocomplete({ interaction, deps, t }) {
    // This server first: its name when the bot is in it, else "This server".
    const here = interaction.guildId
      ? { name: interaction.guild?.name ?? t('suggestions.thisServer'), value: interaction.guildId }
      : undefined;
    return deps.suggestions.choices({
      kind: 'server',
      place: placeOf(interaction),
      userId: interaction.user.id,
      typed: String(interaction.options.getFocused()),
      first: here,
    });
  },
};
