/**
 * What each feature that posts or acts on its own needs of Discord, in one list: the invite link
 * (`npm run deploy-commands` prints it, docs/admin-guide.md states it), the checks before a
 * setting is saved (/settings, /setup) and `/settings show` all read it, so a feature that starts
 * attaching a file or giving a role changes one line here and every one of them follows.
 * test/unit/feature-permissions.test.ts runs each feature against a recording REST client and
 * derives what it used, so this list cannot drift from the code unnoticed.
 *
 * Everything else the bot does answers an interaction through its webhook, which needs no
 * permission in the channel. Editing or deleting its own messages needs no more than seeing the
 * channel. What the bot posts is a Components V2 layout, not an embed: no Embed Links.
 */
import { OAuth2Scopes, PermissionFlagsBits, PermissionsBitField } from 'discord.js';

/** A permission as discord.js names it (`PermissionFlagsBits`' keys): "SendMessages". */
export type PermissionName = keyof typeof PermissionFlagsBits;

/** Where a feature's permissions are looked at: the channel it posts in, or the server (roles). */
export type PermissionScope = 'channel' | 'server';

export interface FeatureNeeds {
  scope: PermissionScope;
  /** In the order an admin is told them. */
  permissions: readonly PermissionName[];
  /**
   * Not asked for by the invite link: needed only where an admin chooses so (a role nobody may
   * mention), and a permission admins are rightly wary of granting a bot; /settings says when.
   */
  optional?: true;
}

export const FEATURE_PERMISSIONS = {
  /**
   * The reminder channel: the server's reminders (posted, the one before deleted, edited by the
   * up that follows), the /settings confirmation, a member's reminder when DMs are closed, streak
   * notices and an up made elsewhere.
   */
  reminders: { scope: 'channel', permissions: ['ViewChannel', 'SendMessages'] },
  /**
   * A reminder pings its role only if everyone may mention it, or the bot has this permission in
   * the reminder channel; needed only for a role that is not mentionable.
   */
  reminderPing: { scope: 'channel', permissions: ['MentionEveryone'], optional: true },
  /** "Notify me" under a reminder gives and takes the reminder role (and the bot's role must be above it). */
  reminderRole: { scope: 'server', permissions: ['ManageRoles'] },
  /** A digest is posted with its chart, a file. */
  digests: { scope: 'channel', permissions: ['ViewChannel', 'SendMessages', 'AttachFiles'] },
  /** The live leaderboard is posted once, then edited; no file. */
  liveLeaderboard: { scope: 'channel', permissions: ['ViewChannel', 'SendMessages'] },
  /** Reward roles are given and taken (and the bot's role must be above them). */
  rewards: { scope: 'server', permissions: ['ManageRoles'] },
  /** The directory's events announced in the webhook channel (a review's announcement edited). */
  webhookAnnouncements: { scope: 'channel', permissions: ['ViewChannel', 'SendMessages'] },
  /** The one message on joining a server, where the bot may post. */
  joinMessage: { scope: 'channel', permissions: ['ViewChannel', 'SendMessages'] },
} as const satisfies Record<string, FeatureNeeds>;

export type Feature = keyof typeof FEATURE_PERMISSIONS;

/** Every feature, in the table's order. */
export const FEATURES = Object.keys(FEATURE_PERMISSIONS) as Feature[];

/** The permissions `feature` needs, in the order an admin is told them. */
export function permissionsOf(feature: Feature): readonly PermissionName[] {
  return FEATURE_PERMISSIONS[feature].permissions;
}

/** The bits of `names` together. */
export function permissionBits(names: readonly PermissionName[]): bigint {
  return names.reduce((bits, name) => bits | PermissionFlagsBits[name], 0n);
}

/** The features the invite link asks permissions for: all but the optional ones. */
const INVITED = FEATURES.filter((feature) => !('optional' in FEATURE_PERMISSIONS[feature]));

/** Every permission any feature needs but the optional ones: what the invite link asks for. */
export function invitePermissions(): bigint {
  return INVITED.reduce((bits, feature) => bits | permissionBits(permissionsOf(feature)), 0n);
}

/** The same, by name, each once, in the table's order. */
export function invitePermissionNames(): PermissionName[] {
  return [...new Set(INVITED.flatMap(permissionsOf))];
}

/** The link that adds the bot to a server with its commands and exactly those permissions. */
export function inviteUrl(applicationId: string): string {
  const url = new URL('https://discord.com/oauth2/authorize');
  url.searchParams.set('client_id', applicationId);
  url.searchParams.set('scope', [OAuth2Scopes.Bot, OAuth2Scopes.ApplicationsCommands].join(' '));
  url.searchParams.set('permissions', invitePermissions().toString());
  return url.toString();
}

function bitsOf(granted: bigint | PermissionsBitField): bigint {
  return granted instanceof PermissionsBitField ? granted.bitfield : granted;
}

/**
 * What `feature` lacks of `granted` (the bot's permissions in the feature's channel, or in the
 * server for a server-wide feature), in the table's order. Administrator counts as every one.
 */
export function missingFor(feature: Feature, granted: bigint | PermissionsBitField): PermissionName[] {
  const bits = bitsOf(granted);
  if ((bits & PermissionFlagsBits.Administrator) !== 0n) return [];
  return permissionsOf(feature).filter((name) => (bits & PermissionFlagsBits[name]) === 0n);
}

export interface FeatureProblem {
  feature: Feature;
  missing: PermissionName[];
}

/**
 * For features set to post in one channel, what each lacks there (only those lacking something,
 * in the order given). `channelPermissions` are the bot's in that channel; a server-wide feature
 * given here is checked against them too, so pass the server's permissions for those.
 */
export function channelProblems(
  features: readonly Feature[],
  channelPermissions: bigint | PermissionsBitField,
): FeatureProblem[] {
  return features
    .map((feature) => ({ feature, missing: missingFor(feature, channelPermissions) }))
    .filter((problem) => problem.missing.length > 0);
}
