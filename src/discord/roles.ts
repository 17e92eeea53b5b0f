/**
 * Members' roles, the one way the bot changes them: whether a member holds a role, giving and
 * taking a role (the reminders' "Notify me", reward roles), and whether the bot may manage a role
 * at all (Manage Roles, a role of its own above it, not managed, not @everyone). Discord's error
 * codes are sorted here, once, into what a caller tells apart. The bot keeps no roles in its cache
 * (gateway/client.ts), so roles and members are read over REST; discord.js's REST client waits out
 * Discord's 429s itself.
 */
import { type APIGuildMember, type APIRole, DiscordAPIError, HTTPError, type REST, Routes } from 'discord.js';
import { missingFor } from './feature-permissions.js';
import { DiscordCode } from './messages.js';
import { channelPermissions } from './permissions.js';

/** Discord's JSON error codes a change of roles tells apart (with messages.ts's own). */
const RoleCode = {
  UnknownGuild: 10004,
  UnknownMember: 10007,
  UnknownRole: 10011,
} as const;

/** Why the bot cannot give a role. */
export type RoleRefusal =
  | 'missing-manage-roles'
  | 'role-above-bot'
  | 'managed-role'
  | 'everyone'
  | 'unknown-role';

export type RoleCheck = { ok: true } | { ok: false; reason: RoleRefusal };

/** Why a role could not be given or taken; `error` is Discord's (or the connection's) own. */
export type RoleFailure =
  /** The bot lacks Manage Roles, or its role is not above this one (50013). */
  | { kind: 'missing-permission'; error: unknown }
  /** The role was deleted (10011). */
  | { kind: 'role-gone'; error: unknown }
  /** The member left the server (10007). */
  | { kind: 'member-gone'; error: unknown }
  /** The server is gone, or the bot is no longer in it (10004, 50001). */
  | { kind: 'server-gone'; error: unknown }
  /** Another refusal that trying again will not change (a 4xx with a code). */
  | { kind: 'rejected'; code: number | string; error: unknown }
  /** A 5xx, a timeout, a lost connection: may work if tried again later. */
  | { kind: 'failed'; detail: string; error: unknown };

export type RoleChange = { kind: 'done' } | RoleFailure;

/** Sorts an error from discord.js's REST client met while reading or changing roles. */
export function classifyRoleError(error: unknown): RoleFailure {
  // A 5xx that outlasts discord.js's retries comes as an HTTPError, not a DiscordAPIError.
  if (error instanceof HTTPError) return { kind: 'failed', detail: `discord ${error.status}`, error };
  if (!(error instanceof DiscordAPIError)) return { kind: 'failed', detail: 'discord unreachable', error };
  if (error.status >= 500 || error.status === 429 || error.status === 408)
    return { kind: 'failed', detail: `discord ${error.status}`, error };
  switch (error.code) {
    case RoleCode.UnknownMember:
      return { kind: 'member-gone', error };
    case RoleCode.UnknownRole:
      return { kind: 'role-gone', error };
    case RoleCode.UnknownGuild:
    case DiscordCode.MissingAccess:
      return { kind: 'server-gone', error };
    case DiscordCode.MissingPermissions:
      return { kind: 'missing-permission', error };
  }
  return { kind: 'rejected', code: error.code, error };
}

/** Whether role `a` is above role `b`: higher position; equal positions, the older (lower id) one. */
function above(a: Pick<APIRole, 'id' | 'position'>, b: Pick<APIRole, 'id' | 'position'>): boolean {
  if (a.position !== b.position) return a.position > b.position;
  return BigInt(a.id) < BigInt(b.id);
}

/**
 * Whether the bot (`botUserId`) may give and take `roleId` in the guild, as Discord decides:
 * Manage Roles (or Administrator) through its roles, and its highest role above the role; a
 * managed role (a bot's, a booster's) and @everyone cannot be given by anyone. Throws when Discord
 * could not be asked (a 5xx, a lost connection, the bot no longer in the server): the caller says
 * so, or tries again (classifyRoleError sorts what it caught).
 */
export async function checkRoleManageable(
  rest: REST,
  guildId: string,
  botUserId: string,
  roleId: string,
): Promise<RoleCheck> {
  if (roleId === guildId) return { ok: false, reason: 'everyone' };
  const [roles, botMember] = await Promise.all([
    rest.get(Routes.guildRoles(guildId)) as Promise<APIRole[]>,
    rest.get(Routes.guildMember(guildId, botUserId)) as Promise<APIGuildMember>,
  ]);
  const role = roles.find((r) => r.id === roleId);
  if (!role) return { ok: false, reason: 'unknown-role' };
  if (role.managed) return { ok: false, reason: 'managed-role' };
  const permissions = channelPermissions({
    guildId,
    roles,
    memberRoles: botMember.roles,
    userId: botUserId,
    overwrites: [],
  });
  // What giving a role takes, as the list of the features says of reward roles (the one caller).
  if (missingFor('rewards', permissions).length > 0) return { ok: false, reason: 'missing-manage-roles' };
  const own = roles.filter((r) => botMember.roles.includes(r.id));
  if (!own.some((r) => above(r, role))) return { ok: false, reason: 'role-above-bot' };
  return { ok: true };
}

/** Members' roles as the handlers and engines change them, over one REST client. */
export interface DiscordRoles {
  /** Whether the member holds the role, as Discord has it now. Throws when it cannot be read. */
  memberHas(guildId: string, userId: string, roleId: string): Promise<boolean>;
  /** Gives the role, `reason` in the audit log. Never throws: a failure comes back sorted. */
  add(guildId: string, userId: string, roleId: string, reason: string): Promise<RoleChange>;
  /** Takes the role off, `reason` in the audit log. Never throws: a failure comes back sorted. */
  remove(guildId: string, userId: string, roleId: string, reason: string): Promise<RoleChange>;
  /** Whether the bot may give and take the role (checkRoleManageable). Throws when it cannot be asked. */
  check(guildId: string, botUserId: string, roleId: string): Promise<RoleCheck>;
}

export function discordRoles(rest: REST): DiscordRoles {
  const change = async (request: Promise<unknown>): Promise<RoleChange> => {
    try {
      await request;
      return { kind: 'done' };
    } catch (err) {
      return classifyRoleError(err);
    }
  };
  return {
    async memberHas(guildId, userId, roleId) {
      const fetched = (await rest.get(Routes.guildMember(guildId, userId))) as APIGuildMember;
      return fetched.roles.includes(roleId);
    },
    add: (guildId, userId, roleId, reason) =>
      change(rest.put(Routes.guildMemberRole(guildId, userId, roleId), { reason })),
    remove: (guildId, userId, roleId, reason) =>
      change(rest.delete(Routes.guildMemberRole(guildId, userId, roleId), { reason })),
    check: (guildId, botUserId, roleId) => checkRoleManageable(rest, guildId, botUserId, roleId),
  };
}
