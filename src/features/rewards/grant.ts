/**
 * Reward roles' Discord side (issue 25): a grant or removal, checked first (discord/roles.ts: may
 * the bot give the role?), sorted into what the outbox records: given (sent), refused for good
 * (failed, with the reason kept on the row) or worth another try.
 */
import {
  classifyRoleError,
  type DiscordRoles,
  type RoleFailure,
  type RoleRefusal,
} from '../../discord/roles.js';
import type { RewardGrant } from '../../store/rewards.js';
import type { SendOutcome } from '../../tasks/outbox.js';

/** The reason a refusal is recorded with on the grant's row (an unknown role: it was deleted). */
function refusalReason(reason: RoleRefusal): string {
  return reason === 'unknown-role' ? 'role-deleted' : reason;
}

/** What Discord's refusal means for a grant: given up with a reason, or to be tried again. */
function sorted(failure: RoleFailure): SendOutcome {
  switch (failure.kind) {
    case 'failed':
      return { kind: 'retry', detail: failure.detail };
    case 'member-gone':
      return { kind: 'failed', reason: 'member-left' };
    case 'role-gone':
      return { kind: 'failed', reason: 'role-deleted' };
    case 'server-gone':
      return { kind: 'failed', reason: 'server-gone' };
    case 'missing-permission':
      return { kind: 'failed', reason: 'missing-permission' };
    case 'rejected':
      return { kind: 'failed', reason: `rejected:${failure.code}` };
  }
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
 * The granter through Discord's roles (discord/roles.ts). A grant is checked first: a role the
 * bot cannot give is recorded with the reason, with no request made to change it. A refusal
 * (50013) then names its reason the same way. Never throws.
 */
export function discordRewardGranter(options: {
  roles: DiscordRoles;
  /** The bot's user id once logged in. */
  botUserId: () => string | null | undefined;
}): RewardGranter {
  const { roles, botUserId } = options;
  const check = async (grant: RewardGrant): Promise<SendOutcome | undefined> => {
    const bot = botUserId();
    if (!bot) return { kind: 'retry', detail: 'not logged in yet' };
    const checked = await roles.check(grant.guildId, bot, grant.roleId);
    return checked.ok ? undefined : { kind: 'failed', reason: refusalReason(checked.reason) };
  };
  return {
    async act(grant) {
      let outcome: SendOutcome;
      try {
        if (grant.action === 'add') {
          const refused = await check(grant);
          if (refused) return refused;
        }
        const reason = auditReason(grant);
        const change =
          grant.action === 'add'
            ? await roles.add(grant.guildId, grant.userId, grant.roleId, reason)
            : await roles.remove(grant.guildId, grant.userId, grant.roleId, reason);
        if (change.kind === 'done') return { kind: 'sent' };
        outcome = sorted(change);
      } catch (err) {
        // The check could not be had.
        outcome = sorted(classifyRoleError(err));
      }
      if (outcome.kind !== 'failed' || outcome.reason !== 'missing-permission') return outcome;
      // Which permission or which role: what the admins are to fix.
      try {
        return (await check(grant)) ?? outcome;
      } catch {
        return outcome;
      }
    },
  };
}
