import type { APIEmbed } from 'discord.js';
import type { ButtonRow } from './components.js';

/** What a renderer produces: plain Discord JSON, ready for reply/editReply/followUp. */
export interface RenderedMessage {
  embeds: APIEmbed[];
  components: ButtonRow[];
  /** Images an embed shows as `attachment://<name>` (a chart), with their alt text. */
  files?: MessageFile[];
}

/** An attached file as discord.js takes it. */
export interface MessageFile {
  attachment: Buffer;
  name: string;
  /** Alt text, read by screen readers. */
  description?: string;
}
