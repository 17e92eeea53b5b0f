/**
 * What went wrong where the bot posts on its own (a server's reminders, the directory's webhook
 * announcements), in words an admin can act on: which channel or role, which permission to grant
 * and where. Shown by /settings show, and by /up to those who can manage the server.
 */
import { PermissionFlagsBits } from 'discord.js';
import { isSnowflake } from '../directory/index.js';
import {
  FEATURE_PERMISSIONS,
  invitePermissionNames,
  type PermissionName,
} from '../discord/feature-permissions.js';
import type { Translate } from '../i18n/index.js';
import type { GuildProblem } from '../store/schema.js';

/**
 * Permissions with a name of their own in the catalogs (Discord's own wording): every one a
 * feature needs (discord/feature-permissions.ts), and those an older stored problem may name.
 */
const NAMED_PERMISSIONS: ReadonlySet<PermissionName> = new Set<PermissionName>([
  ...invitePermissionNames(),
  'EmbedLinks',
  'ReadMessageHistory',
]);

/** Discord's error codes, when a problem records one instead of a permission's name. */
const BY_CODE: Record<string, string> = { '50001': 'ViewChannel' };

export type { PermissionName };

function isPermissionName(name: string): name is PermissionName {
  return Object.hasOwn(PermissionFlagsBits, name);
}

/** One permission as Discord's settings name it ("Send Messages"), in the reader's language. */
export function permissionName(name: PermissionName, t: Translate): string {
  if (NAMED_PERMISSIONS.has(name)) return t(`settings.permission.${name}`);
  return name.replace(/(?<=[a-z])(?=[A-Z])/g, ' ');
}

/** "**View Channel**, **Send Messages** and **Embed Links**". */
export function permissionList(names: readonly PermissionName[], t: Translate): string {
  const shown = names.map((name) => `**${permissionName(name, t)}**`);
  if (shown.length <= 1) return shown.join('');
  return `${shown.slice(0, -1).join(', ')}${t('settings.permission.and')}${shown.at(-1)}`;
}

/** The permissions a `missing-permission:…` problem names ("SendMessages", "ViewChannel,EmbedLinks", "50001"). */
export function missingPermissions(problem: GuildProblem): PermissionName[] {
  if (!problem.startsWith('missing-permission:')) return [];
  const names: PermissionName[] = [];
  for (const part of problem.slice('missing-permission:'.length).split(/[\s,;|+]+/)) {
    const name = BY_CODE[part] ?? part;
    if (isPermissionName(name) && !names.includes(name)) names.push(name);
  }
  return names;
}

export function channelMention(channelId: string | null, t: Translate): string {
  return channelId && isSnowflake(channelId) ? `<#${channelId}>` : t('settings.problem.thatChannel');
}

export function roleMention(roleId: string | null, t: Translate): string {
  return roleId && isSnowflake(roleId) ? `<@&${roleId}>` : t('settings.problem.thatRole');
}

/**
 * The problem and how to fix it, in one or two sentences. Mentions in it render as names and
 * ping no one where the bot sends them (its replies name no one in allowed_mentions).
 */
export function problemText(
  problem: GuildProblem,
  t: Translate,
  context: { channelId: string | null; roleId: string | null; webhook?: boolean },
): string {
  const channel = channelMention(context.channelId, t);
  if (context.webhook) {
    if (problem === 'channel-deleted') return t('settings.problem.webhookChannelDeleted', { channel });
    const names = missingPermissions(problem);
    return t('settings.problem.webhookMissingPermission', {
      channel,
      permissions: permissionList(
        names.length > 0 ? names : FEATURE_PERMISSIONS.webhookAnnouncements.permissions,
        t,
      ),
    });
  }
  if (problem === 'channel-deleted') return t('settings.problem.channelDeleted', { channel });
  if (problem === 'role-deleted') {
    return t('settings.problem.roleDeleted', { role: roleMention(context.roleId, t) });
  }
  if (problem === 'cannot-give-role') {
    return t('settings.problem.cannotGiveRole', { role: roleMention(context.roleId, t) });
  }
  const names = missingPermissions(problem);
  if (names.length === 0) return t('settings.problem.missingPermissionUnknown', { channel });
  return t('settings.problem.missingPermission', { channel, permissions: permissionList(names, t) });
}
