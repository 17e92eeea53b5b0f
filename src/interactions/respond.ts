/**
 * Answers for a deferred interaction. Every message sets allowed_mentions to nothing (the client
 * does too): a directory record can name @everyone, and no reply of ours may ping.
 */
import {
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  MessageFlags,
  type MessageMentionOptions,
} from 'discord.js';
import type { RenderedMessage } from '../render/message.js';
import type { Responder } from './types.js';

export const NO_MENTIONS: MessageMentionOptions = { parse: [], repliedUser: false };

type Deferrable = ChatInputCommandInteraction | ButtonInteraction;

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
