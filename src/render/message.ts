import { type APIEmbed, type APIMessageTopLevelComponent, MessageFlags } from 'discord.js';
import type { ButtonRow } from './components.js';

/**
 * What a renderer produces: plain Discord JSON, ready for reply/editReply/followUp. Either the
 * classic embeds with rows of buttons, or a Components V2 layout (render/layout.ts).
 */
export type RenderedMessage = EmbedMessage | LayoutMessage;

export interface EmbedMessage {
  embeds: APIEmbed[];
  components: ButtonRow[];
  /** Images an embed shows as `attachment://<name>` (a chart), with their alt text. */
  files?: MessageFile[];
}

/** A Components V2 message: sent with the IS_COMPONENTS_V2 flag, never beside content or embeds. */
export interface LayoutMessage {
  layout: APIMessageTopLevelComponent[];
  /** Files a component shows as `attachment://<name>` (a chart in a MediaGallery). */
  files?: MessageFile[];
}

/** An attached file as discord.js takes it. */
export interface MessageFile {
  attachment: Buffer;
  name: string;
  /** Alt text, read by screen readers. */
  description?: string;
}

export function isLayout(message: RenderedMessage): message is LayoutMessage {
  return 'layout' in message;
}

/**
 * The message's body fields as Discord's API and discord.js both take them (snake_case JSON):
 * a layout with its flag and no `content` or `embeds`; embeds with `content` emptied, so an edit
 * of a message that had text leaves none. `extraFlags`: EPHEMERAL for a private follow-up.
 */
export function messageFields(
  message: RenderedMessage,
  extraFlags = 0,
): {
  embeds?: APIEmbed[];
  content?: string;
  components: APIMessageTopLevelComponent[];
  flags: number;
} {
  if (isLayout(message)) {
    return { components: message.layout, flags: MessageFlags.IsComponentsV2 | extraFlags };
  }
  return { content: '', embeds: message.embeds, components: message.components, flags: extraFlags };
}
