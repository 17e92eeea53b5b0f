import type { MessageMentionOptions } from 'discord.js';

/**
 * allowed_mentions for everything the bot sends: nothing pings. A directory record can name
 * @everyone, and no reply of ours may ping.
 */
export const NO_MENTIONS: MessageMentionOptions = { parse: [], repliedUser: false };
