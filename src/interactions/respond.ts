/**
 * Answers for a deferred interaction. Every message sets allowed_mentions to nothing (the client
 * does too): a directory record can name @everyone, and no reply of ours may ping.
 */
import type { REST } from '@discordjs/rest';
import {
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  MessageFlags,
  Routes,
  type UserContextMenuCommandInteraction,
} from 'discord.js';
import { NO_MENTIONS, NO_MENTIONS_API } from '../discord/mentions.js';
import type { RenderedMessage } from '../render/message.js';
import type { Responder } from './types.js';

type Deferrable = ChatInputCommandInteraction | UserContextMenuCommandInteraction | ButtonInteraction;

/**
 * For a reply deferred publicly: `private` removes the public "thinking…" placeholder and sends
 * the answer as an ephemeral follow-up, so "not yet" and failures do not reach the channel.
 * For a private deferral (or a deferred update of a private message) both edit in place.
 */
export function responderFor(interaction: Deferrable, deferredPrivately: boolean): Responder {
  const edit = async (message: RenderedMessage): Promise<void> => {
    await interaction.editReply({ ...message, content: '', allowedMentions: NO_MENTIONS });
  };
  return {
    public: edit,
    private: async (message) => {
      if (deferredPrivately) {
        await edit(message);
        return;
      }
      await interaction.deleteReply().catch(() => undefined);
      await interaction.followUp({ ...message, flags: MessageFlags.Ephemeral, allowedMentions: NO_MENTIONS });
    },
  };
}

/**
 * The same answers for an interaction deferred publicly by an earlier process, known now only by
 * its application and token (an up answered after a restart): through the interaction's webhook.
 */
export function responderForToken(rest: REST, applicationId: string, token: string): Responder {
  const original = Routes.webhookMessage(applicationId, token, '@original');
  // JSON only: an answer sent this way carries no file (a chart is left out).
  const body = ({ files: _files, ...message }: RenderedMessage) => ({
    ...message,
    content: '',
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
        body: { ...body(message), flags: MessageFlags.Ephemeral },
        auth: false,
      });
    },
  };
}
