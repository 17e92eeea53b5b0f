/**
 * Answers for a deferred interaction. Every message sets allowed_mentions to nothing (the client
 * does too): a directory record can name @everyone, and no reply of ours may ping.
 */
import type { REST } from '@discordjs/rest';
import {
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  MessageFlags,
  type ModalSubmitInteraction,
  Routes,
  type UserContextMenuCommandInteraction,
} from 'discord.js';
import { NO_MENTIONS, NO_MENTIONS_API } from '../render/mentions.js';
import { messageFields, type RenderedMessage } from '../render/message.js';
import type { Responder } from './types.js';

type Deferrable =
  | ChatInputCommandInteraction
  | UserContextMenuCommandInteraction
  | ButtonInteraction
  | ModalSubmitInteraction;

/**
 * For a reply deferred publicly: `private` removes the public "thinking…" placeholder and sends
 * the answer as an ephemeral follow-up, so "not yet" and failures do not reach the channel.
 * For a private deferral (or a deferred update of a private message) both edit in place.
 */
export function responderFor(interaction: Deferrable, deferredPrivately: boolean): Responder {
  const edit = async (message: RenderedMessage): Promise<void> => {
    await interaction.editReply({ ...discordJsMessage(message), allowedMentions: NO_MENTIONS });
  };
  return {
    public: edit,
    private: async (message) => {
      if (deferredPrivately) {
        await edit(message);
        return;
      }
      await interaction.deleteReply().catch(() => undefined);
      await privateFollowUp(interaction, message);
    },
  };
}

/**
 * A rendered message as discord.js's reply/edit options: its fields and files, the V2 flag on a
 * layout (set by the edit or the follow-up that carries the layout, never on a deferral).
 */
export function discordJsMessage(message: RenderedMessage, extraFlags = 0) {
  return { ...messageFields(message, extraFlags), ...(message.files ? { files: message.files } : {}) };
}

/**
 * For an interaction not deferred (one that opens a form): an answer is its first response, and
 * private; after the form was shown, a private follow-up.
 */
export function undeferredResponder(interaction: ChatInputCommandInteraction | ButtonInteraction): Responder {
  const answer = async (message: RenderedMessage): Promise<void> => {
    if (interaction.replied || interaction.deferred) {
      await privateFollowUp(interaction, message);
      return;
    }
    await interaction.reply({
      ...discordJsMessage(message, MessageFlags.Ephemeral),
      allowedMentions: NO_MENTIONS,
    });
  };
  return { public: answer, private: answer };
}

/** A message only the user sees, after the interaction was acknowledged. */
export async function privateFollowUp(interaction: Deferrable, message: RenderedMessage): Promise<void> {
  await interaction.followUp({
    ...discordJsMessage(message, MessageFlags.Ephemeral),
    allowedMentions: NO_MENTIONS,
  });
}

/**
 * The same answers for an interaction deferred publicly by an earlier process, known now only by
 * its application and token (an up answered after a restart): through the interaction's webhook.
 */
export function responderForToken(rest: REST, applicationId: string, token: string): Responder {
  const original = Routes.webhookMessage(applicationId, token, '@original');
  // JSON only: an answer sent this way carries no file (a chart is left out).
  const body = (message: RenderedMessage, extraFlags = 0) => ({
    ...messageFields(message, extraFlags),
    allowed_mentions: NO_MENTIONS_API,
  });
  return {
    public: async (message) => {
      await rest.patch(original, { body: body(message), auth: false });
    },
    private: async (message) => {
      // The public "thinking…" placeholder goes; the answer is for the person only.
      await rest.delete(original, { auth: false }).catch(() => undefined);
      await rest.post(Routes.webhook(applicationId, token), {
        body: body(message, MessageFlags.Ephemeral),
        auth: false,
      });
    },
  };
}
