/**
 * /up: raise this server in the directory. Gathers the guild's statistics as the directory's
 * own bot does (the up goes without them if that fails), then POST /server with up=1 at
 * interactive priority, with a deadline inside the interaction's 15-minute window.
 * A success is public; "not yet", "not updated" and errors are seen only by the user.
 */

import type { ServerUpResult } from '../src/directory/types.js';
import { gatherGuildStats } from '../src/discord/lookups.js';
import { GuildOnlyError } from '../src/interactions/error-message.js';
import type { SlashCommand } from '../src/interactions/types.js';
import { renderUpResult, upOutcome } from '../src/render/up.js';
import { upCommand } from './definitions.js';

export const up: SlashCommand = {
  data: upCommand,
  guildOnly: true,
  subject: 'server',
  async execute({ interaction, deps, t, reply, deadline }) {
    const guildId = interaction.guildId;
    if (!guildId) throw new GuildOnlyError();
    const channelName = deps.channelName(interaction.channelId) ?? interaction.channelId;
    // Journaled until the answer is decided: a restart in between still answers (recover.ts).
    await deps.journal
      .add({
        interactionId: interaction.id,
        token: interaction.token,
        applicationId: interaction.applicationId,
        guildId,
        channelId: interaction.channelId,
        channelName,
        userId: interaction.user.id,
        locale: interaction.locale,
        createdAt: interaction.createdTimestamp,
      })
      .catch((err: unknown) => deps.logger.warn({ err }, 'could not journal the up; it goes on'));
    let result: ServerUpResult;
    try {
      const stats = await gatherGuildStats(interaction.client.rest, guildId, deps.gatherTimeoutMs, (err) =>
        deps.logger.debug({ err, guildId }, 'guild statistics not gathered; the up goes without them'),
      );
      result = await deps.directory.postServer(
        {
          serverId: guildId,
          up: true,
          botPresent: true,
          ...stats,
          upUserId: interaction.user.id,
          upChannelId: interaction.channelId,
          upChannelName: channelName,
        },
        { priority: 'interactive', deadline },
      );
    } finally {
      await deps.journal.remove(interaction.id).catch((err: unknown) => {
        deps.logger.warn({ err }, 'could not update the journal of pending ups');
      });
    }
    const outcome = upOutcome(result);
    const message = renderUpResult(result, t, deps.now());
    if (outcome === 'success') await reply.public(message);
    else await reply.private(message);
    if (outcome === 'notUpdated') {
      deps.logger.warn({ guildId, message: result.message }, 'the directory did not update the server');
    }
    return outcome;
  },
};
