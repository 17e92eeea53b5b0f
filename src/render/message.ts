import type { APIEmbed } from 'discord.js';
import type { ButtonRow } from './components.js';

/** What a renderer produces: plain Discord JSON, ready for reply/editReply/followUp. */
export interface RenderedMessage {
  embeds: APIEmbed[];
  components: ButtonRow[];
}
