/**
 * /up: raise this server in the directory (features/up/up.ts), with a deadline inside the
 * interaction's 15-minute window. A success is public; "not yet", "not updated" and errors are
 * seen only by the user, errors worded as /up's (features/up/failure.ts).
 */
import { describeUpFailure } from '../src/features/up/failure.js';
import { upNow } from '../src/features/up/up.js';
import { GuildOnlyError } from '../src/interactions/error-message.js';
import type { SlashCommand } from '../src/interactions/types.js';
import { upCommand } from './definitions.js';

export const up: SlashCommand = {
  data: upCommand,
  guildOnly: true,
  describeFailure: describeUpFailure,
  async execute({ interaction, deps, t, reply, deadline }) {
    const guildId = interaction.guildId;
    if (!guildId) throw new GuildOnlyError();
    const answer = await upNow(
      deps,
      {
        interactionId: interaction.id,
        token: interaction.token,
        applicationId: interaction.applicationId,
        guildId,
        channelId: interaction.channelId,
        channelName: deps.discord.channelName(interaction.channelId) ?? interaction.channelId,
        userId: interaction.user.id,
        locale: interaction.locale,
        createdAt: interaction.createdTimestamp,
      },
      { deadline, t },
    );
    if (answer.publicly) await reply.public(answer.message);
    else await reply.private(answer.message);
    return answer.outcome;
  },
};
