/**
 * Reward roles (issue 25): each server's rewards (a role for reaching a count of ups in a week, a
 * month or the whole kept history, or for the month's top member), and every grant and removal of
 * one, an outbox row each (claims.ts), whose id `<guild>:<role>:<user>:<period key>:<action>`
 * makes it happen once across restarts and hosts: inserted with ON CONFLICT DO NOTHING, claimed
 * by one process, then kept, done or failed with its reason, as the record. The counts the engine
 * (features/rewards/engine.ts) decides with are the history's (history.ts: upsIn, top).
 */
import type { Selectable } from 'kysely';
import { claimRow, finishRow, type Lease, pendingColumns, type RowFilter, retryRowAt } from './claims.js';
import type {
  OutboxState,
  RewardAction,
  RewardGrantsTable,
  RewardPeriod,
  RewardRolesTable,
} from './schema.js';
import type { Store } from './store.js';

/** A server's reward: `roleId` for `ups` ups in `period`, or (period 'top', ups null) the month's top. */
export interface RewardRole {
  guildId: string;
  roleId: string;
  ups: number | null;
  period: RewardPeriod;
  createdAt: number;
}

/** A reward whose role is taken back or moved at a period's end, with its server's time zone. */
export interface PeriodReward extends RewardRole {
  /** The server's IANA zone; null: UTC. */
  timeZone: string | null;
}

/** A grant or removal to store. */
export interface NewGrant {
  guildId: string;
  roleId: string;
  userId: string;
  /** 'all', or the calendar period's key (features/history/calendar.ts). */
  periodKey: string;
  action: RewardAction;
  dueAt: number;
}

/** A stored grant or removal, with its reward's period (null: the reward was removed since). */
export interface RewardGrant extends NewGrant {
  id: string;
  period: RewardPeriod | null;
  createdAt: number;
  state: OutboxState;
  failure: string | null;
  traceParent: string | null;
}

/** A grant given (or waiting to be) that has no removal yet: the member holds the role for it. */
export interface OpenGrant {
  userId: string;
  periodKey: string;
  state: OutboxState;
}

/** A period's top member: the most ups; among equals, who reached that count first. */

export interface GrantClaim extends Lease {
  id: string;
}

/** The id that makes a grant or removal happen once. */
export function grantId(grant: Omit<NewGrant, 'dueAt'>): string {
  return `${grant.guildId}:${grant.roleId}:${grant.userId}:${grant.periodKey}:${grant.action}`;
}

const byId =
  (id: string): RowFilter =>
  (eb) =>
    eb('id', '=', id);

/** Rows per INSERT: well under SQLite's and PostgreSQL's bound parameters. */
const INSERT_CHUNK = 200;

/** The reasons a grant fails that the server's admins can fix (features/rewards/grant.ts). */
export const ADMIN_FAILURES = [
  'missing-manage-roles',
  'role-above-bot',
  'managed-role',
  'missing-permission',
];

export class RewardRepository {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * Sets a server's reward for a role (a reward already set for it is replaced). Its grants that
   * failed for a reason admins can fix are tried again: set again once the bot may give the role,
   * the members who earned it meanwhile get it.
   */
  async set(
    reward: { guildId: string; roleId: string; ups: number | null; period: RewardPeriod },
    now: number,
  ): Promise<void> {
    const values = {
      guild_id: reward.guildId,
      role_id: reward.roleId,
      ups: reward.ups,
      period: reward.period,
    };
    await this.#store.run((db) =>
      db
        .insertInto('reward_roles')
        .values({ ...values, created_at: now })
        .onConflict((oc) =>
          oc
            .columns(['guild_id', 'role_id'])
            .doUpdateSet({ ups: values.ups, period: values.period, created_at: now }),
        )
        .execute(),
    );
    await this.#store.run((db) =>
      db
        .updateTable('reward_grants')
        .set({ ...pendingColumns(), due_at: now })
        .where('guild_id', '=', reward.guildId)
        .where('role_id', '=', reward.roleId)
        .where('state', '=', 'failed')
        .where('failure', 'in', ADMIN_FAILURES)
        .execute(),
    );
  }

  /**
   * Removes a server's reward for a role, and its grants and removals still waiting (those done or
   * failed stay, as the record). False when there was none.
   */
  remove(guildId: string, roleId: string): Promise<boolean> {
    return this.#store.transaction(async (trx) => {
      const removed = await trx
        .deleteFrom('reward_roles')
        .where('guild_id', '=', guildId)
        .where('role_id', '=', roleId)
        .executeTakeFirst();
      await trx
        .deleteFrom('reward_grants')
        .where('guild_id', '=', guildId)
        .where('role_id', '=', roleId)
        .where('state', '=', 'pending')
        .execute();
      return removed.numDeletedRows > 0n;
    });
  }

  /** A server's rewards, oldest first. */
  async list(guildId: string): Promise<RewardRole[]> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('reward_roles')
        .selectAll()
        .where('guild_id', '=', guildId)
        .orderBy('created_at')
        .orderBy('role_id')
        .execute(),
    );
    return rows.map(rewardOf);
  }

  /** Every server's rewards that end with a period (week, month, top), with the server's zone. */
  async periodRewards(): Promise<PeriodReward[]> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('reward_roles as r')
        .leftJoin('guild_settings as s', 's.guild_id', 'r.guild_id')
        .selectAll('r')
        .select('s.time_zone')
        .where('r.period', 'in', ['week', 'month', 'top'])
        .orderBy('r.guild_id')
        .orderBy('r.role_id')
        .execute(),
    );
    return rows.map((row) => ({ ...rewardOf(row), timeZone: row.time_zone ?? null }));
  }

  /** Stores grants and removals not stored yet; how many were new. */
  async enqueue(grants: readonly NewGrant[], now: number): Promise<number> {
    let added = 0;
    for (let i = 0; i < grants.length; i += INSERT_CHUNK) {
      const rows = grants.slice(i, i + INSERT_CHUNK).map((g) => ({
        id: grantId(g),
        guild_id: g.guildId,
        role_id: g.roleId,
        user_id: g.userId,
        period_key: g.periodKey,
        action: g.action,
        due_at: g.dueAt,
        created_at: now,
        ...pendingColumns(),
      }));
      const result = await this.#store.run((db) =>
        db
          .insertInto('reward_grants')
          .values(rows)
          .onConflict((oc) => oc.column('id').doNothing())
          .executeTakeFirst(),
      );
      added += Number(result.numInsertedOrUpdatedRows ?? 0n);
    }
    return added;
  }

  /** Grants waiting (or claimed, whose claim may run out) due by `until`, earliest first. */
  async due(until: number, limit: number): Promise<RewardGrant[]> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('reward_grants as g')
        .leftJoin('reward_roles as r', (join) =>
          join.onRef('r.guild_id', '=', 'g.guild_id').onRef('r.role_id', '=', 'g.role_id'),
        )
        .selectAll('g')
        .select('r.period')
        .where('g.state', 'in', ['pending', 'claimed'])
        .where('g.due_at', '<=', until)
        .orderBy('g.due_at')
        .orderBy('g.id')
        .limit(limit)
        .execute(),
    );
    return rows.map((row) => grantOf(row, row.period ?? null));
  }

  /** One grant or removal as stored (its state and failure: the record). */
  async get(id: string): Promise<RewardGrant | undefined> {
    const row = await this.#store.run((db) =>
      db
        .selectFrom('reward_grants as g')
        .leftJoin('reward_roles as r', (join) =>
          join.onRef('r.guild_id', '=', 'g.guild_id').onRef('r.role_id', '=', 'g.role_id'),
        )
        .selectAll('g')
        .select('r.period')
        .where('g.id', '=', id)
        .executeTakeFirst(),
    );
    return row && grantOf(row, row.period ?? null);
  }

  /** Claims a grant for `leaseMs` (claims.ts): one process of several wins it. */
  async claim(id: string, by: string, leaseMs: number, now: number): Promise<GrantClaim | undefined> {
    const won = await this.#store.run((db) =>
      claimRow(db, 'reward_grants', { where: byId(id), waiting: 'pending', by, leaseMs, now }),
    );
    return won && { id, ...won.lease };
  }

  /** Records a claimed grant done, or failed with its reason; false when the claim was lost. */
  finish(claim: GrantClaim, state: 'done' | 'failed', failure: string | null, now: number): Promise<boolean> {
    return this.#store.run((db) =>
      finishRow(db, 'reward_grants', byId(claim.id), claim, { state, failure, done_at: now }),
    );
  }

  /** Lets the claim run out at `at`, when the grant is tried again. */
  retryAt(claim: GrantClaim, at: number): Promise<boolean> {
    return this.#store.run((db) => retryRowAt(db, 'reward_grants', byId(claim.id), claim, at));
  }

  /**
   * The grants of a role given or waiting (not failed) that have no removal yet: who holds the
   * role, and for which periods. Oldest period first.
   */
  async open(guildId: string, roleId: string): Promise<OpenGrant[]> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('reward_grants as g')
        .select(['g.user_id', 'g.period_key', 'g.state'])
        .where('g.guild_id', '=', guildId)
        .where('g.role_id', '=', roleId)
        .where('g.action', '=', 'add')
        .where('g.state', '<>', 'failed')
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('reward_grants as r')
                .select('r.id')
                .whereRef('r.guild_id', '=', 'g.guild_id')
                .whereRef('r.role_id', '=', 'g.role_id')
                .whereRef('r.user_id', '=', 'g.user_id')
                .whereRef('r.period_key', '=', 'g.period_key')
                .where('r.action', '=', 'remove'),
            ),
          ),
        )
        .orderBy('g.period_key')
        .orderBy('g.user_id')
        .execute(),
    );
    return rows.map((r) => ({ userId: r.user_id, periodKey: r.period_key, state: r.state }));
  }

  /**
   * Each role's last grant that failed for a reason the server's admins can fix (the bot's
   * permission or its place among the roles), when it came after the reward was set: what
   * `/settings rewards show` warns of.
   */
  async lastFailures(guildId: string): Promise<Map<string, string>> {
    const rows = await this.#store.run((db) =>
      db
        .selectFrom('reward_grants as g')
        .innerJoin('reward_roles as r', (join) =>
          join.onRef('r.guild_id', '=', 'g.guild_id').onRef('r.role_id', '=', 'g.role_id'),
        )
        .select(['g.role_id', 'g.failure'])
        .where('g.guild_id', '=', guildId)
        .where('g.state', '=', 'failed')
        .where('g.failure', 'in', ADMIN_FAILURES)
        .whereRef('g.done_at', '>=', 'r.created_at')
        .orderBy('g.done_at', 'desc')
        .limit(100)
        .execute(),
    );
    const last = new Map<string, string>();
    for (const row of rows) if (row.failure && !last.has(row.role_id)) last.set(row.role_id, row.failure);
    return last;
  }

  /** Whether a grant of the role for the period was stored (a top role's month is settled). */
  async granted(guildId: string, roleId: string, periodKey: string): Promise<boolean> {
    const row = await this.#store.run((db) =>
      db
        .selectFrom('reward_grants')
        .select('id')
        .where('guild_id', '=', guildId)
        .where('role_id', '=', roleId)
        .where('action', '=', 'add')
        .where('period_key', '=', periodKey)
        .limit(1)
        .executeTakeFirst(),
    );
    return row !== undefined;
  }
}

function rewardOf(row: Selectable<RewardRolesTable>): RewardRole {
  return {
    guildId: row.guild_id,
    roleId: row.role_id,
    ups: row.ups === null ? null : Number(row.ups),
    period: row.period,
    createdAt: Number(row.created_at),
  };
}

function grantOf(row: Selectable<RewardGrantsTable>, period: RewardPeriod | null): RewardGrant {
  return {
    id: row.id,
    guildId: row.guild_id,
    roleId: row.role_id,
    userId: row.user_id,
    periodKey: row.period_key,
    action: row.action,
    dueAt: Number(row.due_at),
    createdAt: Number(row.created_at),
    period,
    state: row.state,
    failure: row.failure,
    traceParent: row.trace_parent,
  };
}
