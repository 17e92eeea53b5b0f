/**
 * `/settings rewards add | remove | show | top-role`: a server's reward roles (engine.ts,
 * grant.ts), off until an admin adds one; its JSON is settings-command.ts. A role is checked when
 * it is set, as Discord would check it when given (discord/roles.ts): the bot needs Manage Roles
 * and a role above it; @everyone and a managed role (a bot's, a booster's) cannot be given. A role
 * the bot could not give changes nothing, and the answer says what to fix. Every answer private, in
 * the user's language; role mentions ping nobody.
 */
import type { DiscordRoles, RoleCheck } from '../../discord/roles.js';
import type { Translate } from '../../i18n/index.js';
import { UserInputError } from '../../interactions/error-message.js';
import { COLORS } from '../../render/colors.js';
import { container, fitLayout, separator, subtext, text } from '../../render/layout.js';
import type { LayoutMessage } from '../../render/message.js';
import type { RewardRepository, RewardRole } from '../../store/rewards.js';
import type { RewardPeriod } from '../../store/schema.js';
import type {
  SettingsAnswer,
  SettingsContext,
  SettingsDeps,
  SettingsHandlers,
} from '../settings/settings.js';

/** Rewards a server may have: enough for a ladder, few enough for Discord's role limits. */
export const MAX_REWARDS = 10;
/** The counts a reward may ask for (Discord's client keeps the option within them too). */
export const MIN_REWARD_UPS = 1;
export const MAX_REWARD_UPS = 1_000;

export type RewardsDeps = Pick<SettingsDeps, 'now' | 'logger'> & {
  roles: Pick<DiscordRoles, 'check'>;
  rewards: Pick<RewardRepository, 'set' | 'remove' | 'list' | 'lastFailures'>;
};

function roleMention(roleId: string): string {
  return `<@&${roleId}>`;
}

function rewardLine(reward: RewardRole, t: Translate): string {
  const role = roleMention(reward.roleId);
  if (reward.period === 'top') return t('rewards.line.top', { role, interpolation: { escapeValue: false } });
  return t(`rewards.line.${reward.period}`, {
    role,
    count: reward.ups ?? 0,
    interpolation: { escapeValue: false },
  });
}

/** The server's rewards, under what just changed. */
function renderRewards(
  rewards: readonly RewardRole[],
  t: Translate,
  title: string,
  intro?: string,
  failures: ReadonlyMap<string, string> = new Map(),
): LayoutMessage {
  // A reward whose last grant failed for a reason admins can fix says why, under it.
  const line = (r: RewardRole) => {
    const failure = failures.get(r.roleId);
    const role = roleMention(r.roleId);
    const warning = failure
      ? `\n  ⚠️ ${t(`rewards.failed.${failure}`, { role, interpolation: { escapeValue: false } })}`
      : '';
    return `- ${rewardLine(r, t)}${warning}`;
  };
  const list = rewards.length === 0 ? t('rewards.none') : rewards.map(line).join('\n');
  return {
    layout: fitLayout([
      container(COLORS.success, [
        text(`### ${title}`),
        intro ? text(intro) : null,
        separator(),
        text(list),
        subtext(t('rewards.howItWorks')),
      ]),
    ]),
  };
}

function refusal(textOf: string, t: Translate, outcome: string): SettingsAnswer {
  return {
    message: {
      layout: fitLayout([
        container(COLORS.warning, [text(`### ${t('settings.title.refused')}`), text(textOf)]),
      ]),
    },
    outcome,
  };
}

/** Whether the bot can give the role; a refusal saying why when it cannot. */
async function checkRole(
  deps: RewardsDeps,
  context: SettingsContext,
  roleId: string,
): Promise<SettingsAnswer | undefined> {
  const { t } = context;
  let check: RoleCheck;
  try {
    check = await deps.roles.check(context.guildId, context.botId, roleId);
  } catch (err) {
    deps.logger.info({ err, guildId: context.guildId }, 'could not check a reward role');
    return refusal(t('rewards.refused.unknown'), t, 'refused:reward-check');
  }
  if (check.ok) return undefined;
  return refusal(
    t(`rewards.refused.${check.reason}`, {
      role: roleMention(roleId),
      interpolation: { escapeValue: false },
    }),
    t,
    `refused:${check.reason}`,
  );
}

async function save(
  deps: RewardsDeps,
  context: SettingsContext,
  reward: { roleId: string; ups: number | null; period: RewardPeriod },
): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const current = await deps.rewards.list(guildId);
  const replaces = current.some((r) => r.roleId === reward.roleId);
  if (!replaces && current.length >= MAX_REWARDS) {
    return refusal(t('rewards.refused.tooMany', { max: MAX_REWARDS }), t, 'refused:too-many');
  }
  const refused = await checkRole(deps, context, reward.roleId);
  if (refused) return refused;
  await deps.rewards.set({ guildId, ...reward }, deps.now());
  const rewards = await deps.rewards.list(guildId);
  const saved = rewards.find((r) => r.roleId === reward.roleId);
  return {
    message: renderRewards(rewards, t, t('rewards.title.set'), saved && rewardLine(saved, t)),
    outcome: reward.period === 'top' ? 'reward:top' : `reward:${reward.period}`,
  };
}

/** `/settings rewards add role: ups: [period:]` (period: the month by default). */
export function addReward(
  deps: RewardsDeps,
  context: SettingsContext,
  request: { roleId: string; ups: number; period: 'week' | 'month' | 'all' },
): Promise<SettingsAnswer> | SettingsAnswer {
  const { t } = context;
  if (!Number.isInteger(request.ups) || request.ups < MIN_REWARD_UPS || request.ups > MAX_REWARD_UPS) {
    return refusal(t('rewards.refused.ups', { min: MIN_REWARD_UPS, max: MAX_REWARD_UPS }), t, 'refused:ups');
  }
  return save(deps, context, { roleId: request.roleId, ups: request.ups, period: request.period });
}

/** `/settings rewards top-role role:` the month's top member's role, moved at each month's end. */
export function setTopRole(
  deps: RewardsDeps,
  context: SettingsContext,
  roleId: string,
): Promise<SettingsAnswer> {
  return save(deps, context, { roleId, ups: null, period: 'top' });
}

/** `/settings rewards remove role:` members who hold it keep it; nobody gets it any more. */
export async function removeReward(
  deps: RewardsDeps,
  context: SettingsContext,
  roleId: string,
): Promise<SettingsAnswer> {
  const { t, guildId } = context;
  const removed = await deps.rewards.remove(guildId, roleId);
  const rewards = await deps.rewards.list(guildId);
  const intro = t(removed ? 'rewards.removed' : 'rewards.notAReward', {
    role: roleMention(roleId),
    interpolation: { escapeValue: false },
  });
  return {
    message: renderRewards(rewards, t, t('rewards.title.show'), intro),
    outcome: removed ? 'reward-removed' : 'reward-unknown',
  };
}

/** `/settings rewards show` */
export async function showRewards(deps: RewardsDeps, context: SettingsContext): Promise<SettingsAnswer> {
  const [rewards, failures] = await Promise.all([
    deps.rewards.list(context.guildId),
    deps.rewards.lastFailures(context.guildId),
  ]);
  const { t } = context;
  return {
    message: renderRewards(rewards, t, t('rewards.title.show'), undefined, failures),
    outcome: failures.size > 0 ? 'rewards:problem' : 'rewards',
  };
}

/** The handler of the /settings rewards group: add, remove, top-role, show. */
export const rewardsSettings: SettingsHandlers = {
  rewards(deps, context, options) {
    switch (options.getSubcommand(true)) {
      case 'add': {
        const period = options.getString('period') ?? 'month';
        if (period !== 'week' && period !== 'month' && period !== 'all') throw new UserInputError('generic');
        return addReward(deps, context, {
          roleId: options.get('role', true).role?.id ?? String(options.get('role', true).value),
          ups: options.getInteger('ups', true),
          period,
        });
      }
      case 'remove':
        return removeReward(deps, context, String(options.get('role', true).value));
      case 'top-role':
        return setTopRole(deps, context, String(options.get('role', true).value));
      case 'show':
        return showRewards(deps, context);
      default:
        throw new UserInputError('generic');
    }
  },
};
