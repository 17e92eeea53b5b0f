/**
 * What the router refuses before (or instead of) running a handler, each said privately in the
 * user's language: a command no longer in the registry, a button or a form no handler takes (an
 * expired one), a guild-only command outside a guild, and anything while the bot is shutting down.
 */
import {
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  MessageFlags,
  type ModalSubmitInteraction,
  type UserContextMenuCommandInteraction,
} from 'discord.js';
import { markDeferred } from '../../gateway/acknowledge.js';
import { translator } from '../../i18n/index.js';
import type { Logger } from '../../log/logger.js';
import { NO_MENTIONS } from '../../render/mentions.js';
import { GuildOnlyError } from '../error-message.js';
import type { CommandContext, HandledInteractionKind, SlashCommand } from '../types.js';
import type { Acknowledger } from './acknowledge.js';

/** A command no longer in the registry (deployed before, or by another version): said privately at once. */
export async function unknownCommand(
  interaction: ChatInputCommandInteraction | UserContextMenuCommandInteraction,
): Promise<{ name: string; outcome: string }> {
  await interaction.reply({
    content: translator(interaction.locale)('errors.unknownCommand'),
    flags: MessageFlags.Ephemeral,
    allowedMentions: NO_MENTIONS,
  });
  return { name: interaction.commandName, outcome: 'unknown' };
}

/**
 * A button or a form no handler takes (a message or a form of an older version): said privately
 * at once; `name` is what the log line and the metric call it.
 */
export async function expired(
  interaction: ButtonInteraction | ModalSubmitInteraction,
  name: 'unknown-button' | 'unknown-form',
): Promise<{ name: string; outcome: string }> {
  await interaction.reply({
    content: translator(interaction.locale)('errors.expired'),
    flags: MessageFlags.Ephemeral,
    allowedMentions: NO_MENTIONS,
  });
  return { name, outcome: 'unknown' };
}

/**
 * The command's execute, refusing outside a guild when the command is guild-only: the refusal is
 * thrown in the handler's place, so it is told like the handler's own failures (GuildOnly).
 */
export function guildOnly(command: SlashCommand): (context: CommandContext) => Promise<string> {
  return (context) => {
    if (command.guildOnly && !context.interaction.inGuild()) throw new GuildOnlyError();
    return command.execute(context);
  };
}

/** The bot is shutting down: the interaction is told it is restarting. Never throws. */
export async function refuseWhileClosing(
  interaction: HandledInteractionKind,
  acknowledger: Acknowledger | undefined,
  logger: Logger,
): Promise<void> {
  const t = translator(interaction.locale);
  const message = { content: t('errors.restarting'), allowedMentions: NO_MENTIONS };
  try {
    // Deferred by the gateway's thread before it heard of the shutdown: the answer edits it.
    const sent = acknowledger?.take(interaction.id);
    if (sent) {
      await sent.done;
      markDeferred(interaction, sent.deferral);
      await interaction.editReply(message);
    } else {
      await interaction.reply({ ...message, flags: MessageFlags.Ephemeral });
    }
  } catch (err) {
    logger.debug({ err }, 'could not answer an interaction during shutdown');
  }
}
