/**
 * The claims of the outboxes (reminders.ts, webhooks.ts): a row waits, a process claims it for a
 * lease, acts on it, then records it done or failed. The claim is one conditional UPDATE, so of
 * several processes exactly one wins it, on SQLite and on PostgreSQL alike. A claim whose lease
 * ran out (its process died, or it asked to be tried again then) can be taken over, and keeps its
 * nonce: the message goes out with the same Discord `nonce` and `enforce_nonce`, so Discord drops
 * the second copy if the first was posted.
 */
import { randomBytes } from 'node:crypto';
import type { Expression, ExpressionBuilder, Kysely, Selectable, SqlBool, Updateable } from 'kysely';
import { currentTraceParent } from '../trace/spans.js';
import type { Database, OutboxColumns } from './schema.js';

/** The tables whose rows are claimed: each has state, claimed_by, claim_expires_at and nonce. */
export type ClaimTable =
  | 'reminders'
  | 'personal_reminders'
  | 'webhook_events'
  | 'reminder_followups'
  | 'digests'
  | 'live_boards'
  | 'reward_grants'
  | 'streak_notices';

/** Picks the row (or rows) of a claim table a statement is about. */
export type RowFilter = (eb: ExpressionBuilder<Database, ClaimTable>) => Expression<SqlBool>;

/** What the winner of a claim holds. */
export interface Lease {
  by: string;
  /** For Discord's `nonce` (with `enforce_nonce`). */
  nonce: string;
  expiresAt: number;
}

/** An outbox row waiting to be claimed, stored by the work now running (its trace, if traced). */
export function pendingColumns(): OutboxColumns {
  return {
    state: 'pending',
    claimed_by: null,
    claim_expires_at: null,
    nonce: null,
    done_at: null,
    failure: null,
    trace_parent: currentTraceParent(),
  };
}

/** At most 25 characters, as Discord's `nonce` requires; 96 random bits. */
export function newNonce(): string {
  return randomBytes(12).toString('base64url');
}

/**
 * Claims the row `where` picks for `leaseMs` when it waits (`waiting`, its table's state for a row
 * not yet claimed) or its claim ran out: the row as it now is, or undefined (not there, done,
 * failed, or held by another process whose lease runs). `also`: columns set besides the claim's.
 */
export async function claimRow<T extends ClaimTable>(
  db: Kysely<Database>,
  table: T,
  claim: { where: RowFilter; waiting: 'scheduled' | 'pending'; by: string; leaseMs: number; now: number },
  also: Updateable<Database[T]> = {},
): Promise<{ row: Selectable<Database[T]>; lease: Lease } | undefined> {
  const { by, now } = claim;
  const expiresAt = now + claim.leaseMs;
  const row = await db
    .updateTable(table as ClaimTable)
    .set(also as Updateable<Database[ClaimTable]>)
    .set((eb) => ({
      state: 'claimed',
      claimed_by: by,
      claim_expires_at: expiresAt,
      nonce: eb.fn.coalesce('nonce', eb.val(newNonce())),
    }))
    .where(claim.where)
    .where((eb) =>
      eb.or([
        eb('state', '=', claim.waiting),
        eb.and([eb('state', '=', 'claimed'), eb('claim_expires_at', '<=', now)]),
      ]),
    )
    .returningAll()
    .executeTakeFirst();
  if (!row?.nonce) return undefined;
  return { row: row as Selectable<Database[T]>, lease: { by, nonce: row.nonce, expiresAt } };
}

/**
 * Sets columns of the row `where` picks while `lease` still holds it; false when it no longer does
 * (taken over after its lease, rescheduled, cancelled).
 */
async function whileHeld(
  db: Kysely<Database>,
  table: ClaimTable,
  where: RowFilter,
  lease: Lease,
  set: Updateable<Database[ClaimTable]>,
): Promise<boolean> {
  const result = await db
    .updateTable(table)
    .set(set)
    .where(where)
    .where('state', '=', 'claimed')
    .where('claimed_by', '=', lease.by)
    .where('nonce', '=', lease.nonce)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Records how the claimed row ended (`set`: its state, failure...) and ends the claim. */
export function finishRow<T extends ClaimTable>(
  db: Kysely<Database>,
  table: T,
  where: RowFilter,
  lease: Lease,
  set: Updateable<Database[T]>,
): Promise<boolean> {
  const ended = { ...set, claimed_by: null, claim_expires_at: null };
  return whileHeld(db, table, where, lease, ended as Updateable<Database[ClaimTable]>);
}

/**
 * Lets the claim run out at `at` (sooner or later than its lease): the row is claimed again then,
 * here or by another process, with its nonce.
 */
export function retryRowAt(
  db: Kysely<Database>,
  table: ClaimTable,
  where: RowFilter,
  lease: Lease,
  at: number,
): Promise<boolean> {
  return whileHeld(db, table, where, lease, { claim_expires_at: at });
}
