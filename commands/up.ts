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
import { describeUpFailure } from '../src/features/up/failure.js';
import { V3_UP_EVERY_MS } from '../src/features/up/follows.js';
import { answerUp, decideUp, readSettings } from '../src/features/up/up.js';
import type { Translate } from '../src/i18n/index.js';
import { GuildOnlyError } from '../src/interactions/error-message.js';
import type { CommandContext, SlashCommand } from '../src/interactions/types.js';
import type { Logger } from '../src/log/logger.js';
import { NO_MENTIONS } from '../src/render/mentions.js';
import { problemText } from '../src/render/problems.js';
import { renderUpOnSite } from '../src/render/up-v3.js';
import { WATCH_MS } from '../src/store/notifications.js';
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

/**
 * /up on v3: where to raise the server (its page, a link button), what the directory says of it
 * now, the last up the bot was told of and when the presser may up again (the directory's daily
 * cadence, from their last up the bot saw). With the directory's notifications reaching the bot,
 * the answer is kept (store/notifications.ts) and followed up when the up is told of.
 */
async function upOnSite({
  interaction,
  deps,
  t,
  reply,
  deadline,
}: Omit<CommandContext, 'locale'>): Promise<string> {
  const guildId = interaction.guildId as string;
  const [server, last, mine] = await Promise.all([
    deps.directory.getServer(guildId, lookupOptions(deps, deadline)).catch((err: unknown) => {
      if (!(err instanceof NotFoundError))
        deps.logger.warn({ err, guildId }, "the server's directory record could not be read for /up");
      return null;
    }),
    latestUp(deps, guildId),
    latestUp(deps, guildId, interaction.user.id),
  ]);
  const now = deps.now();
  const watching = server !== null && deps.notificationsOn === true && deps.upWatches !== undefined;
  await reply.private(
    renderUpOnSite(guildId, server, t, now, {
      last,
      mine: mine && { at: mine.at, againAt: mine.at + V3_UP_EVERY_MS },
      watching,
    }),
  );
  if (watching) {
    await deps.upWatches
      ?.add({
        interactionId: interaction.id,
        guildId,
        userId: interaction.user.id,
        applicationId: interaction.applicationId,
        token: interaction.token,
        locale: interaction.locale,
        askedAt: interaction.createdTimestamp,
        expiresAt: interaction.createdTimestamp + WATCH_MS,
      })
      .catch((err: unknown) =>
        deps.logger.warn({ err, guildId }, 'could not keep the /up answer for its follow-up'),
      );
  }
  return 'onSite';
}

/** The server's (or a member's) latest up the bot saw; undefined when none or the store fails. */
function latestUp(deps: CommandContext['deps'], guildId: string, userId?: string) {
  return deps.history.latest(guildId, userId).catch((err: unknown) => {
    deps.logger.warn({ err, guildId }, 'could not read the latest up for /up');
    return undefined;
  });
}

export const up: SlashCommand = {
  data: upCommand,
  guildOnly: true,
  describeFailure: describeUpFailure,
  async execute({ interaction, deps, t, reply, deadline }) {
    const guildId = interaction.guildId;
    if (!guildId) throw new GuildOnlyError();
    deps.commands.learn(upCommand.name, interaction.commandId);
    // v3 has no up route for another bot, unless a v2 key that still raises was configured.
    if (deps.directory.version === 'v3' && !deps.upDirectory)
      return upOnSite({ interaction, deps, t, reply, deadline });
    // Read while the directory answers: the public language, and any problem to tell a manager.
    const settings = readSettings(deps, guildId);
    const decision = await decideUp(
      deps.upDirectory ? { ...deps, directory: deps.upDirectory } : deps,
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
