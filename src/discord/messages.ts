/**
 * Messages the bot posts on its own (not answers to an interaction): a reminder in a server's
 * channel, a personal reminder by DM, the confirmation /settings posts, a digest with its chart. Through discord.js's REST
 * client, which waits out Discord's 429s itself; each failure is sorted into what the caller can
 * tell a server's admins (the channel is gone, a permission is missing, DMs are closed) and what
 * trying again may fix.
 */
import {
  type APIAllowedMentions,
  type APIChannel,
  type APIEmbed,
  type APIMessage,
  type APIMessageTopLevelComponent,
  ChannelType,
  DiscordAPIError,
  HTTPError,
  MessageFlags,
  type RawFile,
  type REST,
  type RESTPostAPIChannelMessageJSONBody,
  Routes,
} from 'discord.js';
import { NO_MENTIONS_API } from '../render/mentions.js';
import { type MessageFile, messageFields, type RenderedMessage } from '../render/message.js';

/**
 * The channels /settings lets a server choose for the bot's posts (reminders, the directory's
 * events): text and announcement channels, where members read messages. The command's options
 * offer only these, and the handlers refuse any other.
 */
export const POSTED_IN_CHANNEL_TYPES: readonly (ChannelType.GuildText | ChannelType.GuildAnnouncement)[] = [
  ChannelType.GuildText,
  ChannelType.GuildAnnouncement,
];

/** Discord's JSON error codes the bot tells apart. */
export const DiscordCode = {
  UnknownChannel: 10003,
  UnknownMessage: 10008,
  UnknownUser: 10013,
  MissingAccess: 50001,
  CannotMessageUser: 50007,
  MissingPermissions: 50013,
} as const;

/** Text and embeds, or a Components V2 layout: Discord refuses the two together. */
export type OutgoingMessage = Delivery &
  (
    | { content?: string; embeds?: APIEmbed[]; layout?: never }
    | {
        /**
         * A Components V2 layout (render/layout.ts), sent with the IS_COMPONENTS_V2 flag.
         * Mentions in its texts ping by `allowedMentions` alone, as in `content`.
         */
        layout: APIMessageTopLevelComponent[];
        content?: never;
        embeds?: never;
      }
  );

interface Delivery {
  /** Required: whom the message may ping, and no one else (an empty `parse` pings no one). */
  allowedMentions: APIAllowedMentions;
  /**
   * Discord's `nonce`, sent with `enforce_nonce`: a second post with the same nonce (from a
   * process that took over a reminder) returns the first message instead of a new one.
   */
  nonce?: string;
  /** Files the message shows as `attachment://<name>` (a chart in a MediaGallery). */
  files?: MessageFile[];
}

export type PostFailure =
  /** The channel no longer exists (10003). */
  | { kind: 'channel-deleted'; code: number }
  /** The bot cannot see the channel (50001). */
  | { kind: 'missing-access'; code: number }
  /** The bot lacks a permission there (50013): Send Messages, or Embed Links for an embed. */
  | { kind: 'missing-permission'; code: number }
  /** The user does not take DMs from the bot (50007), or is unknown (10013). */
  | { kind: 'dms-closed'; code: number }
  /** Another refusal that sending again will not change (a 4xx with a code). */
  | { kind: 'rejected'; code: number; status: number }
  /** A 5xx, a timeout, a lost connection: may work if tried again later. */
  | { kind: 'transient'; status?: number };

export type PostResult = { ok: true; messageId: string } | { ok: false; failure: PostFailure };

/** Sorts an error from discord.js's REST client (anything else is transient). */
export function classifyPostError(err: unknown): PostFailure {
  // A 5xx that outlasts discord.js's retries comes as an HTTPError, not a DiscordAPIError.
  if (err instanceof HTTPError) return { kind: 'transient', status: err.status };
  if (!(err instanceof DiscordAPIError)) return { kind: 'transient' };
  const code = typeof err.code === 'number' ? err.code : 0;
  switch (code) {
    case DiscordCode.UnknownChannel:
      return { kind: 'channel-deleted', code };
    case DiscordCode.MissingAccess:
      return { kind: 'missing-access', code };
    case DiscordCode.MissingPermissions:
      return { kind: 'missing-permission', code };
    case DiscordCode.CannotMessageUser:
    case DiscordCode.UnknownUser:
      return { kind: 'dms-closed', code };
  }
  if (err.status >= 500 || err.status === 429 || err.status === 408) {
    return { kind: 'transient', status: err.status };
  }
  return { kind: 'rejected', code, status: err.status };
}

function body(message: OutgoingMessage): RESTPostAPIChannelMessageJSONBody {
  return {
    ...(message.content === undefined ? {} : { content: message.content }),
    ...(message.embeds === undefined ? {} : { embeds: message.embeds }),
    ...(message.layout === undefined
      ? {}
      : { components: message.layout, flags: MessageFlags.IsComponentsV2 }),
    allowed_mentions: message.allowedMentions,
    ...(message.nonce === undefined ? {} : { nonce: message.nonce, enforce_nonce: true }),
    ...(message.files === undefined
      ? {}
      : {
          attachments: message.files.map((file, id) => ({
            id: String(id),
            filename: file.name,
            ...(file.description === undefined ? {} : { description: file.description }),
          })),
        }),
  };
}

/** The files as discord.js's REST client sends them (multipart), in the order of `attachments`. */
function restFiles(message: OutgoingMessage): RawFile[] | undefined {
  return message.files?.map((file) => ({ name: file.name, data: file.attachment, contentType: 'image/png' }));
}

/** Posts in a channel. Never throws: a failure comes back sorted. */
export async function postMessage(
  rest: REST,
  channelId: string,
  message: OutgoingMessage,
): Promise<PostResult> {
  try {
    const files = restFiles(message);
    const posted = (await rest.post(Routes.channelMessages(channelId), {
      body: body(message),
      ...(files ? { files } : {}),
    })) as APIMessage;
    return { ok: true, messageId: posted.id };
  } catch (err) {
    return { ok: false, failure: classifyPostError(err) };
  }
}

/**
 * Edits a message the bot posted (a reminder followed through). Never throws: a failure comes
 * back sorted (a message deleted meanwhile is a `rejected` 10008).
 */
export async function editMessage(
  rest: REST,
  channelId: string,
  messageId: string,
  message: OutgoingMessage,
): Promise<PostResult> {
  try {
    const { nonce: _nonce, enforce_nonce: _enforce, ...edit } = body(message);
    const edited = (await rest.patch(Routes.channelMessage(channelId, messageId), {
      body: edit,
    })) as APIMessage;
    return { ok: true, messageId: edited.id };
  } catch (err) {
    return { ok: false, failure: classifyPostError(err) };
  }
}

/**
 * Deletes a message the bot posted (a reminder replaced by the next one, a confirmation not
 * saved). Never throws: one already gone (10008) counts as deleted.
 */
export async function deleteMessage(
  rest: REST,
  channelId: string,
  messageId: string,
): Promise<{ ok: true } | { ok: false; failure: PostFailure }> {
  try {
    await rest.delete(Routes.channelMessage(channelId, messageId));
    return { ok: true };
  } catch (err) {
    const failure = classifyPostError(err);
    if (failure.kind === 'rejected' && failure.code === DiscordCode.UnknownMessage) return { ok: true };
    return { ok: false, failure };
  }
}

/** Sends a user a DM (opening the DM channel first). Never throws. */
export async function sendDirectMessage(
  rest: REST,
  userId: string,
  message: OutgoingMessage,
): Promise<PostResult> {
  let channel: APIChannel;
  try {
    channel = (await rest.post(Routes.userChannels(), { body: { recipient_id: userId } })) as APIChannel;
  } catch (err) {
    return { ok: false, failure: classifyPostError(err) };
  }
  return postMessage(rest, channel.id, message);
}

/** The messages the settings handlers post and delete in a channel, over one REST client. */
export interface ChannelMessages {
  /** postMessage: never throws. */
  post(channelId: string, message: OutgoingMessage): Promise<PostResult>;
  /** deleteMessage: never throws; one already gone counts as deleted. */
  delete(channelId: string, messageId: string): Promise<{ ok: true } | { ok: false; failure: PostFailure }>;
}

export function channelMessages(rest: REST): ChannelMessages {
  return {
    post: (channelId, message) => postMessage(rest, channelId, message),
    delete: (channelId, messageId) => deleteMessage(rest, channelId, messageId),
  };
}

/**
 * A private follow-up to an interaction known only by its application and token (an /up answer
 * told later who upped), through the interaction's webhook. Throws when Discord refuses (the
 * token expired after 15 minutes).
 */
export async function followUpByToken(
  rest: REST,
  applicationId: string,
  token: string,
  message: RenderedMessage,
): Promise<void> {
  await rest.post(Routes.webhook(applicationId, token), {
    body: { ...messageFields(message, MessageFlags.Ephemeral), allowed_mentions: NO_MENTIONS_API },
    auth: false,
  });
}
