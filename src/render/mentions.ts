import type { APIAllowedMentions, MessageMentionOptions } from 'discord.js';

/**
 * allowed_mentions for everything the bot sends: nothing pings. A directory record can name
 * @everyone, and no reply of ours may ping.
 */
export const NO_MENTIONS: MessageMentionOptions = { parse: [], repliedUser: false };

/**
 * The same in the API's own shape, for a body sent through the REST client directly (discord.js
 * translates NO_MENTIONS; Discord drops a field it does not declare, such as `repliedUser`).
 */
export const NO_MENTIONS_API: APIAllowedMentions = { parse: [], replied_user: false };
