/**
 * Reward roles (issue 25), on the background engine: a server's rewards give a role to a member
 * who reaches a count of ups in the week, the month (in the server's time zone) or the whole kept
 * history, and the month's top member a role of its own. Opt-in: a server with no reward stored
 * (store/rewards.ts) gets nothing, and costs one indexed query per up.
 *
 * - An up (`afterUp`) counts the member's ups in each count reward's period holding it; reaching
 *   the count stores an 'add' for that period (once: its id names the member, role and period).
 * - Each minute (`periodEnds`, a PeriodicTask; and at start, so what ended while the bot was down
 *   is seen) the grants of a week or month reward for a period now over get their 'remove', due at
 *   that period's end; a member who earned the role again for the current period keeps it (their
 *   old grant is taken back with the current one). At a month's end the top reward's role goes to
 *   the month's top member and is taken from whoever held it before.
 * - Every add and remove is an outbox row (tasks/outbox.ts), claimed by one process, done through
 *   Discord (grant.ts) once, and recorded; a member's changes of one role go in order (a lane).
 *
 * A reward's periods are named by keys (`week:2026-11-23`, `month:2026-11`) the same in every
 * zone, so what a period's grants are is read from the store, not from memory, across restarts.
 */
import type { Logger } from '../../log/logger.js';
import type { HistoryRepository } from '../../store/history.js';
import type {
  GrantClaim,
  NewGrant,
  PeriodReward,
  RewardGrant,
  RewardRepository,
} from '../../store/rewards.js';
import type { SettingsRepository } from '../../store/settings.js';
import { keyedSource } from '../../tasks/finish-as.js';
import { Outbox, type RunnerOptions } from '../../tasks/outbox.js';
import { PeriodicTask } from '../../tasks/periodic.js';
import { type BackgroundTask, backgroundTask } from '../../tasks/tasks.js';
import { periodAt, previousPeriod } from '../history/calendar.js';
import type { RewardGranter } from './grant.js';

/** How often the ends of periods are looked for. */
export const REWARD_PERIODS_EVERY_MS = 60_000;
/** How often every period reward is looked at again, even one whose period did not change. */
export const REWARD_FULL_PASS_EVERY_MS = 3_600_000;

/** Role changes at once, at most: Discord's limits on member edits are per server, and tight. */
const REWARD_CONCURRENCY = 4;

export interface RewardEngineOptions extends RunnerOptions {
  rewards: Pick<
    RewardRepository,
    'list' | 'periodRewards' | 'enqueue' | 'due' | 'claim' | 'finish' | 'retryAt' | 'open' | 'granted'
  >;
  settings: Pick<SettingsRepository, 'get'>;
  /** The servers' ups: a member's count in a period, a month's top member. */
  history: Pick<HistoryRepository, 'upsIn' | 'top'>;
  /** Gives and takes the roles (grant.ts discordRewardGranter). */
  granter: RewardGranter;
  /** Whether this process looks after the server (its shards'). Default: every server. */
  ownsGuild?: ((guildId: string) => boolean) | undefined;
  /** Default REWARD_PERIODS_EVERY_MS. */
  periodsEveryMs?: number | undefined;
}

export class RewardEngine {
  readonly #rewards: RewardEngineOptions['rewards'];
  readonly #settings: Pick<SettingsRepository, 'get'>;
  readonly #history: Pick<HistoryRepository, 'upsIn' | 'top'>;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #ownsGuild: ((guildId: string) => boolean) | undefined;
  readonly #outbox: Outbox<RewardGrant, GrantClaim>;
  readonly #periodic: PeriodicTask;
  /** `<guild>:<role>` → the period key it was last looked at in. */
  readonly #looked = new Map<string, string>();
  #fullPassAt = Number.NEGATIVE_INFINITY;

  constructor(options: RewardEngineOptions) {
    const { rewards, granter, ownsGuild } = options;
    this.#rewards = rewards;
    this.#settings = options.settings;
    this.#history = options.history;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#ownsGuild = ownsGuild;
    this.#outbox = new Outbox<RewardGrant, GrantClaim>({
      ...options,
      defaults: { concurrency: REWARD_CONCURRENCY },
      source: keyedSource(
        rewards,
        (grant) => grant.id,
        (_now, until, limit) => rewards.due(until, limit),
      ),
      policy: {
        noun: 'reward role change',
        verb: 'made',
        key: (grant) => grant.id,
        dueAt: (grant) => grant.dueAt,
        lane: (grant) => `${grant.guildId}:${grant.roleId}:${grant.userId}`,
        accepts: ownsGuild && ((grant) => ownsGuild(grant.guildId)),
        fields: (grant) => ({
          guildId: grant.guildId,
          roleId: grant.roleId,
          userId: grant.userId,
          periodKey: grant.periodKey,
          action: grant.action,
        }),
        since: (grant) => grant.dueAt,
        act: (grant) => granter.act(grant),
        traceParent: (grant) => grant.traceParent,
      },
    });
    this.#periodic = new PeriodicTask({
      name: 'reward periods',
      everyMs: options.periodsEveryMs ?? REWARD_PERIODS_EVERY_MS,
      run: async () => {
        await this.periodEnds();
      },
      failure: 'could not look for the ends of the reward roles’ periods; looking again in a minute',
      logger: options.logger,
    });
  }

  /** For the process's task list (instead of start() and stop()): the periods, then the outbox. */
  get tasks(): BackgroundTask[] {
    return [this.#periodic, backgroundTask('reward roles outbox', this.#outbox)];
  }

  /** Looks for ended periods now and every minute, and makes the role changes stored. */
  start(): void {
    this.#periodic.start();
    this.#outbox.start();
  }

  stop(): Promise<void> {
    return Promise.all([this.#periodic.stop(), this.#outbox.stop()]).then(() => undefined);
  }

  /** This process stored a change due now: make it at once. */
  wake(): void {
    this.#outbox.wake(this.#now());
  }

  /**
   * `userId` upped the server at `at` (recorded in the history already): each count reward whose
   * count the member's ups in the period holding `at` reach gives its role, once per period. An up
   * in a period already over (told late) gives nothing. Never throws: a failure is one warn line.
   */
  async afterUp(guildId: string, userId: string, at: number): Promise<void> {
    try {
      const rewards = (await this.#rewards.list(guildId)).filter((r) => r.period !== 'top' && r.ups !== null);
      if (rewards.length === 0) return;
      const now = this.#now();
      const timeZone = rewards.some((r) => r.period !== 'all')
        ? ((await this.#settings.get(guildId))?.timeZone ?? 'UTC')
        : 'UTC';
      const counts = new Map<string, number>();
      const grants: NewGrant[] = [];
      for (const reward of rewards) {
        const span =
          reward.period === 'week' || reward.period === 'month'
            ? periodAt(reward.period, at, timeZone)
            : { start: 0, end: null, key: 'all' };
        if (span.end !== null && span.end <= now) continue;
        let ups = counts.get(span.key);
        if (ups === undefined) {
          ups = await this.#history.upsIn(guildId, userId, span.start, span.end);
          counts.set(span.key, ups);
        }
        if (ups < (reward.ups ?? Number.POSITIVE_INFINITY)) continue;
        grants.push({
          guildId,
          roleId: reward.roleId,
          userId,
          periodKey: span.key,
          action: 'add',
          dueAt: now,
        });
      }
      if (grants.length === 0) return;
      if ((await this.#rewards.enqueue(grants, now)) > 0) this.wake();
    } catch (err) {
      this.#logger.warn(
        { err, guildId },
        'could not look at the reward roles after an up; the next up looks again',
      );
    }
  }

  /**
   * The changes the ends of periods call for, as of `now`: the grants of periods over taken back,
   * the top roles moved. Each reward is looked at when its current period is not the one it was
   * last looked at in (at first, after a period's end, after a change of time zone), and all of
   * them every hour. How many changes were stored.
   */
  async periodEnds(now: number = this.#now()): Promise<number> {
    const full = now - this.#fullPassAt >= REWARD_FULL_PASS_EVERY_MS;
    if (full) this.#fullPassAt = now;
    let stored = 0;
    for (const reward of await this.#rewards.periodRewards()) {
      if (this.#ownsGuild && !this.#ownsGuild(reward.guildId)) continue;
      const timeZone = reward.timeZone ?? 'UTC';
      const current = periodAt(reward.period === 'week' ? 'week' : 'month', now, timeZone);
      const seen = `${reward.guildId}:${reward.roleId}`;
      if (!full && this.#looked.get(seen) === `${timeZone}:${current.key}`) continue;
      try {
        const grants =
          reward.period === 'top'
            ? await this.#topChanges(reward, previousPeriod(current))
            : await this.#takeBack(reward, current.key, current.start);
        stored += grants.length === 0 ? 0 : await this.#rewards.enqueue(grants, now);
        this.#looked.set(seen, `${timeZone}:${current.key}`);
      } catch (err) {
        this.#logger.warn(
          { err, guildId: reward.guildId, roleId: reward.roleId },
          'could not look at the end of a reward role’s period; looking again in a minute',
        );
      }
    }
    if (stored > 0) this.wake();
    return stored;
  }

  /**
   * The removals of a week or month reward's grants for periods before `currentKey`, due at
   * `endedAt` (the current period's start: before any grant of this one, in the member's lane).
   * A member who holds the role for the current period too is left be until that one ends.
   */
  async #takeBack(reward: PeriodReward, currentKey: string, endedAt: number): Promise<NewGrant[]> {
    const open = await this.#rewards.open(reward.guildId, reward.roleId);
    const keeps = new Set(open.filter((g) => g.periodKey === currentKey).map((g) => g.userId));
    return open
      .filter((g) => g.periodKey !== currentKey && !keeps.has(g.userId))
      .map((g) => ({
        guildId: reward.guildId,
        roleId: reward.roleId,
        userId: g.userId,
        periodKey: g.periodKey,
        action: 'remove' as const,
        dueAt: endedAt,
      }));
  }

  /**
   * At a month's end, once: the role to `ended`'s top member, taken from whoever held it before
   * (no one upped: taken, and given to no one). A reward set after the month ended waits for the
   * next one.
   */
  async #topChanges(
    reward: PeriodReward,
    ended: { start: number; end: number; key: string },
  ): Promise<NewGrant[]> {
    if (reward.createdAt >= ended.end) return [];
    if (await this.#rewards.granted(reward.guildId, reward.roleId, ended.key)) return [];
    const top = await this.#history.top(reward.guildId, ended.start, ended.end);
    const base = { guildId: reward.guildId, roleId: reward.roleId, dueAt: ended.end };
    const removals = (await this.#rewards.open(reward.guildId, reward.roleId))
      .filter((g) => g.userId !== top?.userId && g.periodKey !== ended.key)
      .map((g) => ({ ...base, userId: g.userId, periodKey: g.periodKey, action: 'remove' as const }));
    const add = top ? [{ ...base, userId: top.userId, periodKey: ended.key, action: 'add' as const }] : [];
    return [...removals, ...add];
  }
}
