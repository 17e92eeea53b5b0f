/**
 * /up: raise this server in the directory, with a deadline inside the interaction's 15-minute
 * window: decided and answered by features/up/up.ts, as an up answered after a restart is. A
 * success is public, in the server's public language (/settings language); "not yet", "not
 * updated" and errors are seen only by the user, in theirs, errors worded as /up's
 * (features/up/failure.ts). An answer with a next-up time sets the server's reminder and carries
 * the "Remind me" button. On API v3, which lets no other bot raise a server, it says where to
 * raise it (render/up-v3.ts).
 */
import { type ChatInputCommandInteraction, MessageFlags, PermissionFlagsBits } from 'discord.js';
import { NotFoundError } from '../src/directory/index.js';
import { NO_MENTIONS } from '../src/discord/mentions.js';
import { describeUpFailure } from '../src/features/up/failure.js';
import { answerUp, decideUp, readSettings } from '../src/features/up/up.js';
import type { Translate } from '../src/i18n/index.js';
import { GuildOnlyError } from '../src/interactions/error-message.js';
import type { SlashCommand } from '../src/interactions/types.js';
import type { Logger } from '../src/log/logger.js';
import { problemText } from '../src/render/problems.js';
import { renderUpOnSite } from '../src/render/up-v3.js';
import type { GuildSettings } from '../src/store/settings.js';
import { lookupOptions } from './cards.js';
import { upCommand } from './definitions.js';

/**
 * A problem the reminders met (channel deleted, permission lost, role deleted), told privately to
 * whoever can fix it: a member with Manage Server. Never costs the /up its answer.
 */
async function tellManager(
  interaction: ChatInputCommandInteraction,
  t: Translate,
  settings: GuildSettings | undefined,
  logger: Logger,
): Promise<void> {
  const problem = settings?.problem;
  if (!problem || !settings.reminderChannelId) return;
  if (!interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild)) return;
  const text = problemText(problem.reason, t, {
    channelId: settings.reminderChannelId,
    roleId: settings.reminderRoleId,
  });
  await interaction
    .followUp({
      embeds: [{ description: t('remind.managerNotice', { problem: text }) }],
      flags: MessageFlags.Ephemeral,
      allowedMentions: NO_MENTIONS,
    })
    .catch((err: unknown) => logger.warn({ err }, 'could not tell a manager about the reminder problem'));
}

export const up: SlashCommand = {
  data: upCommand,
  guildOnly: true,
  describeFailure: describeUpFailure,
  async execute({ interaction, deps, t, reply, deadline }) {
    const guildId = interaction.guildId;
    if (!guildId) throw new GuildOnlyError();
    deps.commands.learn(upCommand.name, interaction.commandId);
    if (deps.directory.version === 'v3') {
      // v3 has no up route for another bot: say where to raise it, and what the directory says now.
      const server = await deps.directory
        .getServer(guildId, lookupOptions(deps, deadline))
        .catch((err: unknown) => {
          if (!(err instanceof NotFoundError))
            deps.logger.warn({ err, guildId }, "the server's directory record could not be read for /up");
          return null;
        });
      await reply.private(renderUpOnSite(guildId, server, t, deps.now()));
      return 'onSite';
    }
    // Read while the directory answers: the public language, and any problem to tell a manager.
    const settings = readSettings(deps, guildId);
    const decision = await decideUp(
      deps,
      {
        interactionId: interaction.id,
        token: interaction.token,
        applicationId: interaction.applicationId,
        guildId,
        guildLocale: interaction.guildLocale,
        channelId: interaction.channelId,
        channelName: deps.discord.channelName(interaction.channelId) ?? interaction.channelId,
        userId: interaction.user.id,
        locale: interaction.locale,
        createdAt: interaction.createdTimestamp,
      },
      { deadline },
    );
    await answerUp(
      decision,
      {
        reply,
        person: t,
        settings,
        guildLocale: interaction.guildLocale,
        serverName: interaction.guild?.name,
      },
      deps.now(),
    );
    await tellManager(interaction, t, await settings, deps.logger);
    return decision.outcome;
  },
};
