/**
 * Reward roles' Discord side (issue 25): whether the bot may give a role (Manage Roles, a role of
 * its own above it, not a managed role nor @everyone), asked when an admin sets a reward and
 * before each grant, and the grant or removal itself, sorted into what the outbox records: given
 * (sent), refused for good (failed, with the reason kept on the row) or worth another try.
 * The bot keeps no roles in its cache (gateway/client.ts), so the guild's roles and the bot's
 * member are read over REST. discord.js's REST client waits out Discord's 429s itself.
 */
import {
  type APIGuildMember,
  type APIRole,
  DiscordAPIError,
  HTTPError,
  PermissionFlagsBits,
  type REST,
  Routes,
} from 'discord.js';
import { channelPermissions } from '../../discord/permissions.js';
import type { RewardGrant } from '../../store/rewards.js';
import type { SendOutcome } from '../../tasks/outbox.js';

/** Why the bot cannot give a role. */
export type RoleRefusal =
  | 'missing-manage-roles'
  | 'role-above-bot'
  | 'managed-role'
  | 'everyone'
  | 'unknown-role';

export type RoleCheck = { ok: true } | { ok: false; reason: RoleRefusal };

/** Discord's JSON error codes a grant tells apart. */
const Code = {
  UnknownGuild: 10004,
  UnknownMember: 10007,
  UnknownRole: 10011,
  MissingAccess: 50001,
  MissingPermissions: 50013,
} as const;

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
 * so, or tries again.
 */
export async function checkRewardRole(
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
  if ((permissions & PermissionFlagsBits.ManageRoles) === 0n)
    return { ok: false, reason: 'missing-manage-roles' };
  const own = roles.filter((r) => botMember.roles.includes(r.id));
  if (!own.some((r) => above(r, role))) return { ok: false, reason: 'role-above-bot' };
  return { ok: true };
}

/** The reason a refusal is recorded with on the grant's row (an unknown role: it was deleted). */
function refusalReason(reason: RoleRefusal): string {
  return reason === 'unknown-role' ? 'role-deleted' : reason;
}

/** What Discord's error means for a grant: given up with a reason, or to be tried again. */
function sorted(err: unknown): SendOutcome {
  if (err instanceof HTTPError) return { kind: 'retry', detail: `discord ${err.status}` };
  if (!(err instanceof DiscordAPIError)) return { kind: 'retry', detail: 'discord unreachable' };
  if (err.status >= 500 || err.status === 429 || err.status === 408)
    return { kind: 'retry', detail: `discord ${err.status}` };
  switch (err.code) {
    case Code.UnknownMember:
      return { kind: 'failed', reason: 'member-left' };
    case Code.UnknownRole:
      return { kind: 'failed', reason: 'role-deleted' };
    case Code.UnknownGuild:
    case Code.MissingAccess:
      return { kind: 'failed', reason: 'server-gone' };
    case Code.MissingPermissions:
      return { kind: 'failed', reason: 'missing-permission' };
  }
  return { kind: 'failed', reason: `rejected:${err.code}` };
}

/** The audit log's line for a grant: which reward, for which period. */
export function auditReason(grant: Pick<RewardGrant, 'action' | 'periodKey' | 'period'>): string {
  if (grant.period === 'top') {
    return grant.action === 'add'
      ? `Up reward: the top member of ${grant.periodKey}`
      : 'Up reward: another member was the top of the month';
  }
  if (grant.periodKey === 'all') return 'Up reward: reached the count of ups';
  return grant.action === 'add'
    ? `Up reward: reached the count of ups in ${grant.periodKey}`
    : `Up reward: ${grant.periodKey} ended`;
}

/** Gives or takes a reward role (the outbox's act). */
export interface RewardGranter {
  act(grant: RewardGrant): Promise<SendOutcome>;
}

/**
 * The granter through Discord's REST API. A grant is checked first (checkRewardRole): a role the
 * bot cannot give is recorded with the reason, with no request made to change it. A refusal
 * (50013) then names its reason the same way. Never throws.
 */
export function discordRewardGranter(options: {
  rest: REST;
  /** The bot's user id once logged in. */
  botUserId: () => string | null | undefined;
}): RewardGranter {
  const { rest, botUserId } = options;
  const check = async (grant: RewardGrant): Promise<SendOutcome | undefined> => {
    const bot = botUserId();
    if (!bot) return { kind: 'retry', detail: 'not logged in yet' };
    const checked = await checkRewardRole(rest, grant.guildId, bot, grant.roleId);
    return checked.ok ? undefined : { kind: 'failed', reason: refusalReason(checked.reason) };
  };
  return {
    async act(grant) {
      try {
        if (grant.action === 'add') {
          const refused = await check(grant);
          if (refused) return refused;
        }
        const route = Routes.guildMemberRole(grant.guildId, grant.userId, grant.roleId);
        const reason = auditReason(grant);
        if (grant.action === 'add') await rest.put(route, { reason });
        else await rest.delete(route, { reason });
        return { kind: 'sent' };
      } catch (err) {
        const outcome = sorted(err);
        if (outcome.kind !== 'failed' || outcome.reason !== 'missing-permission') return outcome;
        // Which permission or which role: what the admins are to fix.
        try {
          return (await check(grant)) ?? outcome;
        } catch {
          return outcome;
        }
      }
    },
  };
}
