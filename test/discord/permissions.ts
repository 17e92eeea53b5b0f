// Discord's permission bits and how Discord computes a member's permissions in a channel: the
// @everyone role, the member's roles, Administrator, then the channel's overwrites for @everyone,
// the member's roles and the member (docs: topics/permissions, "Permission Overwrites").
// Plain data and pure functions; only types come from fixtures.ts.

import type { ChannelFixture, GuildFixture, RoleFixture } from './fixtures.js';

/** Permission bits used by the fixtures and the stand-in's checks. */
export const Permission = {
  CreateInstantInvite: 1n << 0n,
  KickMembers: 1n << 1n,
  BanMembers: 1n << 2n,
  Administrator: 1n << 3n,
  ManageChannels: 1n << 4n,
  ManageGuild: 1n << 5n,
  AddReactions: 1n << 6n,
  ViewChannel: 1n << 10n,
  SendMessages: 1n << 11n,
  SendTTSMessages: 1n << 12n,
  ManageMessages: 1n << 13n,
  EmbedLinks: 1n << 14n,
  AttachFiles: 1n << 15n,
  ReadMessageHistory: 1n << 16n,
  MentionEveryone: 1n << 17n,
  UseExternalEmojis: 1n << 18n,
  Connect: 1n << 20n,
  Speak: 1n << 21n,
  ChangeNickname: 1n << 26n,
  ManageRoles: 1n << 28n,
  UseApplicationCommands: 1n << 31n,
  SendMessagesInThreads: 1n << 38n,
} as const;

/** Every permission bit Discord currently defines (what owners and administrators get). */
export const ALL_PERMISSIONS = ((1n << 51n) - 1n).toString();

/** An overwrite as Discord sends it in `permission_overwrites` (type 0: role, 1: member). */
export interface OverwriteFixture {
  id: string;
  type: 0 | 1;
  allow: string;
  deny: string;
}

export interface OverwriteInput {
  /** A role id (the guild id for @everyone) or a user id. */
  id: string;
  type: 'role' | 'member' | 0 | 1;
  allow?: bigint | string;
  deny?: bigint | string;
}

export function makeOverwrite(input: OverwriteInput): OverwriteFixture {
  return {
    id: input.id,
    type: input.type === 'member' || input.type === 1 ? 1 : 0,
    allow: BigInt(input.allow ?? 0n).toString(),
    deny: BigInt(input.deny ?? 0n).toString(),
  };
}

/** A permission set as Discord serializes it (a decimal string); accepts bits or a string. */
export function permissionString(value: bigint | string): string {
  return BigInt(value).toString();
}

/** Whom the permissions are for: a user and their role ids in the guild. */
export interface PermissionSubject {
  userId: string;
  roles: readonly string[];
}

/** Guild-level permissions: the owner and Administrator get everything. */
export function basePermissions(guild: GuildFixture, subject: PermissionSubject): bigint {
  if (subject.userId === guild.owner_id) return BigInt(ALL_PERMISSIONS);
  let bits = 0n;
  for (const role of guild.roles) {
    if (role.id === guild.id || subject.roles.includes(role.id)) bits |= BigInt(role.permissions);
  }
  return (bits & Permission.Administrator) !== 0n ? BigInt(ALL_PERMISSIONS) : bits;
}

/** Permissions in a channel: the base permissions with the channel's overwrites applied, in Discord's order. */
export function channelPermissions(
  guild: GuildFixture,
  channel: Pick<ChannelFixture, 'permission_overwrites'>,
  subject: PermissionSubject,
): bigint {
  const base = basePermissions(guild, subject);
  if ((base & Permission.Administrator) !== 0n) return BigInt(ALL_PERMISSIONS);
  const overwrites = channel.permission_overwrites as readonly OverwriteFixture[];
  let bits = base;
  const everyone = overwrites.find((o) => o.id === guild.id);
  if (everyone) bits = (bits & ~BigInt(everyone.deny)) | BigInt(everyone.allow);
  let allow = 0n;
  let deny = 0n;
  for (const overwrite of overwrites) {
    if (overwrite.type === 0 && overwrite.id !== guild.id && subject.roles.includes(overwrite.id)) {
      allow |= BigInt(overwrite.allow);
      deny |= BigInt(overwrite.deny);
    }
  }
  bits = (bits & ~deny) | allow;
  const member = overwrites.find((o) => o.type === 1 && o.id === subject.userId);
  if (member) bits = (bits & ~BigInt(member.deny)) | BigInt(member.allow);
  return bits;
}

/** The roles of a member of the guild ([] when not a member: @everyone alone). */
export function rolesOf(guild: GuildFixture, userId: string): string[] {
  return guild.members.find((m) => m.user.id === userId)?.roles ?? [];
}

export function hasPermission(bits: bigint, permission: bigint): boolean {
  return (bits & permission) === permission;
}

/** Whether a role can be pinged by a message from someone with `bits` in the channel. */
export function canPingRole(role: RoleFixture, bits: bigint): boolean {
  return role.mentionable || hasPermission(bits, Permission.MentionEveryone);
}
