/**
 * A member's permissions in a channel, computed as Discord does (docs: topics/permissions,
 * "Permission Overwrites"): @everyone and the member's roles, Administrator, then the channel's
 * overwrites for @everyone, for the member's roles together, and for the member. discord.js
 * cannot do it here: this bot keeps no channels and no roles (gateway/client.ts), so the parts
 * come from REST. Used when a post failed, to tell an admin exactly which permission to grant.
 */

import {
  type APIChannel,
  type APIGuildMember,
  type APIOverwrite,
  type APIRole,
  OverwriteType,
  PermissionFlagsBits,
  type REST,
  Routes,
} from 'discord.js';
import { isSnowflake } from '../directory/index.js';
import { bounded } from '../time/bounded.js';

/** Every permission bit: what Administrator amounts to. */
const ALL = (1n << 64n) - 1n;

export interface PermissionParts {
  guildId: string;
  /** The guild's roles (the one whose id is the guild's is @everyone). */
  roles: readonly Pick<APIRole, 'id' | 'permissions'>[];
  /** The member's role ids. */
  memberRoles: readonly string[];
  userId: string;
  overwrites: readonly Pick<APIOverwrite, 'id' | 'type' | 'allow' | 'deny'>[];
}

function bits(value: string | undefined): bigint {
  try {
    return value === undefined ? 0n : BigInt(value);
  } catch {
    return 0n;
  }
}

/** The member's permissions in the channel (guild owners aside: the bot never owns a server). */
export function channelPermissions(parts: PermissionParts): bigint {
  const { guildId, roles, memberRoles, userId, overwrites } = parts;
  let base = 0n;
  for (const role of roles) {
    if (role.id === guildId || memberRoles.includes(role.id)) base |= bits(role.permissions);
  }
  if ((base & PermissionFlagsBits.Administrator) !== 0n) return ALL;
  let permissions = base;
  const everyone = overwrites.find((o) => o.id === guildId && o.type === OverwriteType.Role);
  if (everyone) permissions = (permissions & ~bits(everyone.deny)) | bits(everyone.allow);
  let allow = 0n;
  let deny = 0n;
  for (const o of overwrites) {
    if (o.type === OverwriteType.Role && o.id !== guildId && memberRoles.includes(o.id)) {
      allow |= bits(o.allow);
      deny |= bits(o.deny);
    }
  }
  permissions = (permissions & ~deny) | allow;
  const own = overwrites.find((o) => o.id === userId && o.type === OverwriteType.Member);
  if (own) permissions = (permissions & ~bits(own.deny)) | bits(own.allow);
  return permissions;
}

/**
 * A user's (the bot's) permissions in a guild channel, from GET /channels/{id} (or, when the
 * bot cannot see the channel, the guild's channel list), the guild's roles and the member.
 * Null when any part cannot be had in time: the caller then names every permission it needs.
 * Never throws.
 */
export async function fetchChannelPermissions(
  rest: REST,
  query: { guildId: string; channelId: string; userId: string },
  timeoutMs: number,
): Promise<bigint | null> {
  const { guildId, channelId, userId } = query;
  if (![guildId, channelId, userId].every(isSnowflake)) return null;
  try {
    // Left to run past the bound, unaborted (see bounded.ts).
    return await bounded(async () => {
      const channel = async (): Promise<APIChannel | undefined> => {
        try {
          return (await rest.get(Routes.channel(channelId))) as APIChannel;
        } catch {
          // 50001: a channel the bot cannot see is still in the guild's list.
          const all = (await rest.get(Routes.guildChannels(guildId))) as APIChannel[];
          return Array.isArray(all) ? all.find((c) => c?.id === channelId) : undefined;
        }
      };
      const [found, roles, fetched] = await Promise.all([
        channel(),
        rest.get(Routes.guildRoles(guildId)) as Promise<APIRole[]>,
        rest.get(Routes.guildMember(guildId, userId)) as Promise<APIGuildMember>,
      ]);
      if (!found || !Array.isArray(roles) || !Array.isArray(fetched?.roles)) return null;
      const overwrites = 'permission_overwrites' in found ? (found.permission_overwrites ?? []) : [];
      return channelPermissions({ guildId, roles, memberRoles: fetched.roles, userId, overwrites });
    }, timeoutMs);
  } catch {
    return null;
  }
}

/**
 * A user's (the bot's) permissions in the guild as a whole, from its roles alone: what Manage
 * Roles is decided by (a channel's overwrite of that bit is Manage Permissions, another thing).
 * Null when they cannot be had in time. Never throws.
 */
export async function fetchGuildPermissions(
  rest: REST,
  query: { guildId: string; userId: string },
  timeoutMs: number,
): Promise<bigint | null> {
  const { guildId, userId } = query;
  if (![guildId, userId].every(isSnowflake)) return null;
  try {
    // Left to run past the bound, unaborted (see bounded.ts).
    return await bounded(async () => {
      const [roles, fetched] = await Promise.all([
        rest.get(Routes.guildRoles(guildId)) as Promise<APIRole[]>,
        rest.get(Routes.guildMember(guildId, userId)) as Promise<APIGuildMember>,
      ]);
      if (!Array.isArray(roles) || !Array.isArray(fetched?.roles)) return null;
      return channelPermissions({ guildId, roles, memberRoles: fetched.roles, userId, overwrites: [] });
    }, timeoutMs);
  } catch {
    return null;
  }
}

/** A user's (the bot's) permissions in a guild channel, or the guild, over one REST client. */
export interface ChannelPermissionsLookup {
  /** In the channel (fetchChannelPermissions). Null when they cannot be had in time. Never throws. */
  inChannel(
    query: { guildId: string; channelId: string; userId: string },
    timeoutMs: number,
  ): Promise<bigint | null>;
  /** In the guild, its roles alone (fetchGuildPermissions). Null when they cannot be had in time. Never throws. */
  inGuild(query: { guildId: string; userId: string }, timeoutMs: number): Promise<bigint | null>;
}

export function channelPermissionsLookup(rest: REST): ChannelPermissionsLookup {
  return {
    inChannel: (query, timeoutMs) => fetchChannelPermissions(rest, query, timeoutMs),
    inGuild: (query, timeoutMs) => fetchGuildPermissions(rest, query, timeoutMs),
  };
}
