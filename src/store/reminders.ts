/**
 * Reminders: each server's next-up reminder and members' personal ones, and the claims that let
 * several processes share the sending (claims.ts). A process claims a due reminder for a lease;
 * the claim is one conditional UPDATE, so exactly one process wins it. A claim whose lease ran out
 * (its process died) can be taken over, and keeps its nonce: the message goes out with the same
 * Discord `nonce` and `enforce_nonce`, so Discord drops the second copy if the first was posted.
 * A transient failure while sending sets the claim to run out when it is to be tried again.
 */
import { type ExpressionBuilder, type Kysely, type Selectable, sql } from 'kysely';
import { currentTraceParent } from '../trace/spans.js';
import { claimRow, finishRow, type Lease, type RowFilter, retryRowAt } from './claims.js';
import { cycleOf, earlyOf, newCycle, type ReminderCycle } from './reminder-cycle.js';
import type { Database, ReminderColumns, ReminderState, RemindersTable } from './schema.js';
import type { Store } from './store.js';

export type ReminderKey =
  | { kind: 'guild'; guildId: string }
  | { kind: 'personal'; guildId: string; userId: string };

export interface Reminder {
  key: ReminderKey;
  dueAt: number;
  state: ReminderState;
  claimedBy: string | null;
  claimExpiresAt: number | null;
  nonce: string | null;
  sentAt: number | null;
  failure: string | null;
  updatedAt: number;
  /** The trace of the work that scheduled it (trace/spans.ts); null when tracing was off. */
  traceParent: string | null;
}

export type { ReminderCycle };

export interface GuildReminder extends Reminder {
  key: { kind: 'guild'; guildId: string };
  /** The directory's next-up time the reminder was computed from. */
  nextUpAt: number;
  /** The cooldown of the directory's last successful answer, when known. */
  cooldownMs: number | null;
}

/** What the winner of a claim needs to send the reminder and then report how it went. */
export interface Claim extends Lease {
  key: ReminderKey;
  dueAt: number;
  /** A server's reminder: where its cycle stands. */
  cycle?: ReminderCycle;
}

type Table = 'reminders' | 'personal_reminders';
type Row = Selectable<ReminderColumns> & { guild_id: string; user_id?: string };

export class ReminderRepository {
  readonly #store: Store;

  constructor(store: Store) {
    this.#store = store;
  }

  /**
   * The directory's latest answer wins: the reminder takes the new due time and is scheduled
   * again, unless it already has that due time and was sent (or is being sent) for it.
   */
  async scheduleGuild(
    guildId: string,
    times: { dueAt: number; nextUpAt: number; cooldownMs?: number | undefined },
    now: number,
  ): Promise<'scheduled' | 'unchanged'> {
    const cooldown = times.cooldownMs === undefined ? {} : { cooldown_ms: times.cooldownMs };
    const { nextUpAt } = times;
    const row = await this.#store.run((db) =>
      db
        .insertInto('reminders')
        .values((eb) => ({
          guild_id: guildId,
          next_up_at: nextUpAt,
          cooldown_ms: times.cooldownMs ?? null,
          ...scheduledColumns(times.dueAt, now),
          ...newCycle(),
          due_at: eb(eb.val(times.dueAt), '-', earlyOf(eb, guildId)),
        }))
        .onConflict((oc) =>
          oc
            .column('guild_id')
            .doUpdateSet((eb) => ({
              next_up_at: nextUpAt,
              ...cooldown,
              ...scheduledColumns(times.dueAt, now),
              ...newCycle(),
              due_at: eb(eb.val(times.dueAt), '-', earlyOf(eb, guildId)),
            }))
            // The same next-up time whose cycle has begun (a heads-up or a reminder posted, or
            // being posted) keeps it: no reminder twice.
            .where((eb) =>
              eb.not(
                eb.and([
                  eb('reminders.next_up_at', '=', nextUpAt),
                  eb.or([
                    eb('reminders.state', 'in', ['sent', 'claimed']),
                    eb('reminders.step', '>', 0),
                    eb('reminders.heads_up_at', 'is not', null),
                  ]),
                ]),
              ),
            ),
        )
        .returning('guild_id')
        .executeTakeFirst(),
    );
    return row ? 'scheduled' : 'unchanged';
  }

  /**
   * An up given elsewhere (the directory's `new_server_bump`) at `upAt`: the server's reminder
   * moves to `upAt` plus the cooldown of the directory's last answer, when one is known and that
   * is later than the next-up time the reminder has by more than `toleranceMs` (an up this bot
   * gave itself, or an older delivery, changes nothing). One conditional UPDATE. The new due time,
   * or undefined when nothing moved.
   */
  async moveForUp(
    guildId: string,
    upAt: number,
    toleranceMs: number,
    now: number,
  ): Promise<number | undefined> {
    const row = await this.#store.run((db) =>
      db
        .updateTable('reminders')
        .set((eb) => ({
          ...scheduledColumns(0, now),
          ...newCycle(),
          next_up_at: eb(eb.val(upAt), '+', eb.ref('cooldown_ms')),
          due_at: eb(eb(eb.val(upAt), '+', eb.ref('cooldown_ms')), '-', earlyOf(eb, guildId)),
        }))
        .where('guild_id', '=', guildId)
        .where('cooldown_ms', 'is not', null)
        .where((eb) =>
          eb(
            eb(eb.ref('next_up_at'), '+', eb.val(toleranceMs)),
            '<',
            eb(eb.val(upAt), '+', eb.ref('cooldown_ms')),
          ),
        )
        .returning('due_at')
        .executeTakeFirst(),
    );
    return row === undefined ? undefined : Number(row.due_at);
  }

  /**
   * The server's heads-up setting changed: a reminder whose cycle has not begun is due that long
   * before its next-up time (or at it, with none). Its new due time, or undefined when none moved.
   */
  async retime(guildId: string, now: number): Promise<number | undefined> {
    const row = await this.#store.run((db) =>
      db
        .updateTable('reminders')
        .set((eb) => ({ due_at: eb(eb.ref('next_up_at'), '-', earlyOf(eb, guildId)), updated_at: now }))
        .where('guild_id', '=', guildId)
        .where('state', '=', 'scheduled')
        .where('step', '=', 0)
        .where('heads_up_at', 'is', null)
        .returning('due_at')
        .executeTakeFirst(),
    );
    return row === undefined ? undefined : Number(row.due_at);
  }

  async getGuild(guildId: string): Promise<GuildReminder | undefined> {
    const row = await this.#store.run((db) =>
      db.selectFrom('reminders').selectAll().where('guild_id', '=', guildId).executeTakeFirst(),
    );
    return row && guildReminder(row);
  }

  async getPersonal(guildId: string, userId: string): Promise<Reminder | undefined> {
    const row = await this.#store.run((db) =>
      db
        .selectFrom('personal_reminders')
        .selectAll()
        .where('guild_id', '=', guildId)
        .where('user_id', '=', userId)
        .executeTakeFirst(),
    );
    return row && reminder(row);
  }

  /**
   * A member's reminder for the server's next up: on if they had none (or the last one is over),
   * off if one is waiting. Each step is one statement, so two toggles racing (a double click)
   * still end in one state or the other, never in an error.
   */
  async togglePersonal(guildId: string, userId: string, dueAt: number, now: number): Promise<'on' | 'off'> {
    const key = (eb: ExpressionBuilder<Database, 'personal_reminders'>) =>
      eb.and([eb('guild_id', '=', guildId), eb('user_id', '=', userId)]);
    return this.#store.run(async (db) => {
      for (;;) {
        const added = await db
          .insertInto('personal_reminders')
          .values({ guild_id: guildId, user_id: userId, ...scheduledColumns(dueAt, now) })
          .onConflict((oc) => oc.columns(['guild_id', 'user_id']).doNothing())
          .returning('guild_id')
          .executeTakeFirst();
        if (added) return 'on';
        const removed = await db
          .deleteFrom('personal_reminders')
          .where(key)
          .where('state', 'in', ['scheduled', 'claimed'])
          .returning('guild_id')
          .executeTakeFirst();
        if (removed) return 'off';
        const renewed = await db
          .updateTable('personal_reminders')
          .set(scheduledColumns(dueAt, now))
          .where(key)
          .where('state', 'in', ['sent', 'failed'])
          .returning('guild_id')
          .executeTakeFirst();
        if (renewed) return 'on';
        // Another toggle removed the row between our steps: start over.
      }
    });
  }

  /** A member's reminder again at `dueAt` (snoozed from the reminder), whatever became of the last one. */
  async snoozePersonal(guildId: string, userId: string, dueAt: number, now: number): Promise<void> {
    await this.#store.run((db) =>
      db
        .insertInto('personal_reminders')
        .values({ guild_id: guildId, user_id: userId, ...scheduledColumns(dueAt, now) })
        .onConflict((oc) => oc.columns(['guild_id', 'user_id']).doUpdateSet(scheduledColumns(dueAt, now)))
        .execute(),
    );
  }

  /** Removes a reminder (the server's reminder channel was unset, say). */
  async cancel(key: ReminderKey): Promise<void> {
    await this.#store.run((db) => db.deleteFrom(tableOf(key)).where(matches(key)).execute());
  }

  /**
   * Reminders to send before `until`, earliest first: those scheduled, and those claimed (whose
   * claim may expire and be taken over). For a scheduler that loads what is due soon.
   */
  async dueSoon(until: number, limit: number): Promise<Reminder[]> {
    const [guilds, personal] = await this.#store.run((db) =>
      Promise.all([
        pending(db, 'reminders', until, limit).execute(),
        pending(db, 'personal_reminders', until, limit).execute(),
      ]),
    );
    return [...guilds.map(reminder), ...personal.map(reminder)]
      .sort((a, b) => a.dueAt - b.dueAt)
      .slice(0, limit);
  }

  /**
   * Claims a due reminder for `leaseMs`: undefined if it is not due, not there, already sent or
   * failed, or claimed by another process whose lease runs. One statement: atomic across
   * processes (claims.ts). Taking over an expired claim keeps its nonce.
   */
  async claim(key: ReminderKey, by: string, leaseMs: number, now: number): Promise<Claim | undefined> {
    const due: RowFilter = (eb) => eb.and([matches(key)(eb), eb('due_at', '<=', now)]);
    const won = await this.#store.run((db) =>
      claimRow(db, tableOf(key), { where: due, waiting: 'scheduled', by, leaseMs, now }, { updated_at: now }),
    );
    if (!won) return undefined;
    const claim: Claim = { key, ...won.lease, dueAt: Number(won.row.due_at) };
    if (key.kind === 'guild') claim.cycle = cycleOf(won.row as Selectable<RemindersTable>);
    return claim;
  }

  /**
   * False if the claim was no longer ours (taken over, rescheduled, cancelled). A server's reminder
   * due `again` (its next repeat, or the reminder after its heads-up: step 0) waits for then, with
   * a new nonce: another message.
   */
  markSent(claim: Claim, now: number, again?: { at: number; step: number }): Promise<boolean> {
    if (again && claim.key.kind === 'guild') {
      return this.#store.run((db) =>
        finishRow(db, 'reminders', matches(claim.key), claim, {
          state: 'scheduled',
          due_at: again.at,
          step: again.step,
          nonce: null,
          sent_at: now,
          failure: null,
          updated_at: now,
          ...(again.step === 0 ? { heads_up_at: now } : {}),
        }),
      );
    }
    return this.#finish(claim, { state: 'sent', sent_at: now, failure: null, updated_at: now });
  }

  /** A failure that trying again will not fix (the channel is gone, a permission is missing). */
  markFailed(claim: Claim, failure: string, now: number): Promise<boolean> {
    return this.#finish(claim, { state: 'failed', failure, updated_at: now });
  }

  /** A failure that may pass: the claim runs out at `at`, and the reminder is sent again then. */
  retryAt(claim: Claim, at: number): Promise<boolean> {
    return this.#store.run((db) => retryRowAt(db, tableOf(claim.key), matches(claim.key), claim, at));
  }

  #finish(
    claim: Claim,
    outcome: Pick<ReminderColumns, 'state' | 'failure' | 'updated_at'> & { sent_at?: number },
  ) {
    return this.#store.run((db) => finishRow(db, tableOf(claim.key), matches(claim.key), claim, outcome));
  }
}

/** A reminder waiting to be sent: no claim, no nonce, no outcome. */
/**
 * An up given elsewhere at `upAt` restarts the server's reminder cycle, in one statement (usable
 * inside a transaction: the notifications' intake, store/notifications.ts): the next up is `upAt`
 * plus the cooldown of the directory's last answer, or `fallbackCooldownMs` when none is known
 * (kept as the server's cooldown from then on). Nothing changes when the reminder's next-up time is
 * already that late, within `toleranceMs` (the same up told again, or an older one told late). The
 * new next-up and due times, or undefined when nothing changed.
 */
export async function restartForUp(
  db: Kysely<Database>,
  guildId: string,
  up: { at: number; fallbackCooldownMs: number; toleranceMs: number },
  now: number,
): Promise<{ nextUpAt: number; dueAt: number } | undefined> {
  const { at, fallbackCooldownMs, toleranceMs } = up;
  const nextUpAt = at + fallbackCooldownMs;
  const row = await db
    .insertInto('reminders')
    .values((eb) => ({
      guild_id: guildId,
      next_up_at: nextUpAt,
      cooldown_ms: fallbackCooldownMs,
      ...scheduledColumns(nextUpAt, now),
      ...newCycle(),
      due_at: eb(eb.val(nextUpAt), '-', earlyOf(eb, guildId)),
    }))
    .onConflict((oc) =>
      oc
        .column('guild_id')
        .doUpdateSet((eb) => {
          const cooldown = eb.fn.coalesce('reminders.cooldown_ms', eb.val(fallbackCooldownMs));
          const next = eb(eb.val(at), '+', cooldown);
          return {
            ...scheduledColumns(0, now),
            ...newCycle(),
            cooldown_ms: cooldown,
            next_up_at: next,
            due_at: eb(next, '-', earlyOf(eb, guildId)),
          };
        })
        .where((eb) =>
          eb(
            eb(eb.ref('reminders.next_up_at'), '+', eb.val(toleranceMs)),
            '<',
            eb(eb.val(at), '+', eb.fn.coalesce('reminders.cooldown_ms', eb.val(fallbackCooldownMs))),
          ),
        ),
    )
    .returning(['next_up_at', 'due_at'])
    .executeTakeFirst();
  return row && { nextUpAt: Number(row.next_up_at), dueAt: Number(row.due_at) };
}

export function scheduledColumns(dueAt: number, now: number): ReminderColumns {
  return {
    due_at: dueAt,
    state: 'scheduled',
    claimed_by: null,
    claim_expires_at: null,
    nonce: null,
    sent_at: null,
    failure: null,
    updated_at: now,
    // The work scheduling it (an /up's trace), when tracing is on.
    trace_parent: currentTraceParent(),
  };
}

function tableOf(key: ReminderKey): Table {
  return key.kind === 'guild' ? 'reminders' : 'personal_reminders';
}

function matches(key: ReminderKey): RowFilter {
  return (eb: ExpressionBuilder<Database, Table>) =>
    key.kind === 'guild'
      ? eb('guild_id', '=', key.guildId)
      : eb.and([eb('guild_id', '=', key.guildId), eb('user_id', '=', key.userId)]);
}

/**
 * The scheduler's look: what is scheduled or claimed and due before `until`, in due order. The
 * states are written out as the partial index `<table>_pending_due_at` has them (migration 018),
 * not as bound parameters: SQLite uses a partial index only for a WHERE that states its terms, and
 * both engines then read the index in due order and stop at `limit`, whatever the backlog.
 */
export function pending(db: Kysely<Database>, table: Table, until: number, limit: number) {
  return db
    .selectFrom(table)
    .selectAll()
    .where(sql<boolean>`state in ('scheduled', 'claimed')`)
    .where('due_at', '<=', until)
    .orderBy('due_at')
    .limit(limit);
}

function reminder(row: Row): Reminder {
  return {
    key:
      row.user_id === undefined
        ? { kind: 'guild', guildId: row.guild_id }
        : { kind: 'personal', guildId: row.guild_id, userId: row.user_id },
    dueAt: row.due_at,
    state: row.state,
    claimedBy: row.claimed_by,
    claimExpiresAt: row.claim_expires_at,
    nonce: row.nonce,
    sentAt: row.sent_at,
    failure: row.failure,
    updatedAt: row.updated_at,
    traceParent: row.trace_parent,
  };
}

function guildReminder(row: Selectable<RemindersTable>): GuildReminder {
  return {
    ...reminder(row),
    key: { kind: 'guild', guildId: row.guild_id },
    nextUpAt: row.next_up_at,
    cooldownMs: row.cooldown_ms === null ? null : Number(row.cooldown_ms),
  };
}
