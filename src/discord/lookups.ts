/**
 * What the bot reads from Discord for the directory: the guild's statistics for an up (as the
 * directory's own bot gathers them) and a user's name and avatar for a card. Both are best
 * effort: bounded in time, never throwing; the caller goes on without them.
 *
 * Every ID is checked to be a snowflake before it goes into a route, whatever its source. Routes
 * are plain text (`/users/${id}`) and the request carries the bot's token: an ID from a
 * directory's answer such as `../guilds/1` or `@me?x=` would steer it elsewhere. One that is
 * not a snowflake counts as absent: no request, nothing gathered.
 */

import { makeURLSearchParams, type REST } from '@discordjs/rest';
import { type APIGuild, type APIUser, type Client, Routes } from 'discord.js';
import { isSnowflake, type ServerStatistics } from '../directory/index.js';
import { bounded } from '../time/bounded.js';

/** What an up or a server report sends of the guild: the directory's server statistics. */
export type GuildStats = ServerStatistics;

const CDN = 'https://cdn.discordapp.com';

/** The icon URL the directory's own bot sends: gif when animated, webp otherwise, 512 px. */
export function guildIconUrl(guildId: string, hash: string | null | undefined): string | undefined {
  if (!hash) return undefined;
  const ext = hash.startsWith('a_') ? 'gif' : 'webp';
  return `${CDN}/icons/${guildId}/${hash}.${ext}?size=512`;
}

export function userTag(user: Pick<APIUser, 'username' | 'discriminator'>): string {
  return user.discriminator && user.discriminator !== '0'
    ? `${user.username}#${user.discriminator}`
    : user.username;
}

/**
 * GET /guilds/{id}?with_counts=true, then the owner; whatever arrives in time. A request not back
 * in time is left to finish, unaborted (see bounded.ts): its answer is dropped.
 */
export async function gatherGuildStats(
  rest: REST,
  guildId: string,
  timeoutMs: number,
  onError?: (err: unknown) => void,
): Promise<GuildStats> {
  const stats: GuildStats = {};
  if (!isSnowflake(guildId)) return stats;
  const deadline = Date.now() + timeoutMs;
  try {
    const guild = (await bounded(
      () => rest.get(Routes.guild(guildId), { query: makeURLSearchParams({ with_counts: true }) }),
      timeoutMs,
    )) as APIGuild;
    stats.name = guild.name;
    const icon = guildIconUrl(guildId, guild.icon);
    if (icon) stats.avatar = icon;
    if (typeof guild.approximate_member_count === 'number') stats.membersAll = guild.approximate_member_count;
    if (typeof guild.approximate_presence_count === 'number')
      stats.membersOnline = guild.approximate_presence_count;
    if (!isSnowflake(guild.owner_id)) return stats;
    stats.ownerId = guild.owner_id;
    const left = deadline - Date.now();
    if (left > 0) {
      const owner = (await bounded(() => rest.get(Routes.user(guild.owner_id)), left)) as APIUser;
      stats.ownerTag = userTag(owner);
    }
  } catch (err) {
    onError?.(err);
  }
  return stats;
}

export interface UserIdentity {
  name: string;
  avatarUrl: string | null;
}

/** A user's display name and avatar (GET /users/{id}), or null (also, unasked, for an ID that is none). */
export async function fetchIdentity(
  rest: REST,
  userId: string,
  timeoutMs: number,
): Promise<UserIdentity | null> {
  if (!isSnowflake(userId)) return null;
  try {
    const user = (await bounded(() => rest.get(Routes.user(userId)), timeoutMs)) as APIUser;
    return {
      name: user.global_name ?? user.username,
      avatarUrl: user.avatar
        ? `${CDN}/avatars/${userId}/${user.avatar}.${user.avatar.startsWith('a_') ? 'gif' : 'png'}?size=256`
        : null,
    };
  } catch {
    return null;
  }
}

/**
 * What handlers and event listeners read from Discord (`deps.discord`): an interface of ours, so
 * that a test hands in a fake instead of a Discord client. None of it throws.
 */
export interface DiscordLookups {
  /**
   * The guild's statistics for the directory: from the gateway's cache and what the bot keeps
   * (guild-stats.ts) in the bot, whatever Discord's REST gives in time otherwise (gatherGuildStats).
   */
  guildStats(guildId: string, onError?: (err: unknown) => void): Promise<GuildStats>;
  /** A user's (or a bot's) display name and avatar, or null. */
  identity(userId: string): Promise<UserIdentity | null>;
  /** The name of a guild the bot is in. */
  guildName(guildId: string): string | undefined;
  /**
   * The name of the channel an interaction came from, from the interaction's own payload
   * (`interaction.channel` is null: discord.js caches no channels for this bot).
   */
  channelName(channelId: string): string | undefined;
  /**
   * Whether the channel is a text or announcement channel of the guild, one the bot's posts may go
   * to (as the gateway last told); false when not known.
   */
  isPostable(guildId: string, channelId: string): boolean;
}

/**
 * Where the names of the channels interactions come from are kept: the gateway's ChannelNames
 * (gateway/channel-names.ts) in the bot, fed from every INTERACTION_CREATE.
 */
export interface InteractionChannelNames {
  interactionChannelName(channelId: string): string | undefined;
  isPostable(guildId: string, channelId: string): boolean;
}

/**
 * The look-ups over the bot's client; each REST read is bounded by `timeoutMs`. A guild's
 * statistics come from `guildStats` when given (guild-stats.ts: the gateway's cache first), else
 * from Discord's REST.
 */
export function discordLookups(
  client: Client,
  channels: InteractionChannelNames,
  timeoutMs: number,
  guildStats?: DiscordLookups['guildStats'],
): DiscordLookups {
  return {
    guildStats:
      guildStats ?? ((guildId, onError) => gatherGuildStats(client.rest, guildId, timeoutMs, onError)),
    identity: (userId) => fetchIdentity(client.rest, userId, timeoutMs),
    guildName: (guildId) => client.guilds.cache.get(guildId)?.name,
    channelName: (channelId) => channels.interactionChannelName(channelId),
    isPostable: (guildId, channelId) => channels.isPostable(guildId, channelId),
  };
}
