/**
 * The first statement of every transaction that holds something the hosts share (an advisory
 * lock for a turn of the directory's limits, of IDENTIFY or of the shard claims; a lease's row).
 *
 * PostgreSQL keeps a transaction's locks until its client commits or its connection is seen to
 * be gone. A process frozen in the middle of a turn (SIGSTOP, a machine suspended) or cut off
 * without the server noticing would hold every host's turns for as long as TCP keep-alive takes
 * to give up: hours by default. So each of these transactions sets, for itself only,
 * `idle_in_transaction_session_timeout`: left idle that long between two of its statements, the
 * server ends the session, and with it the transaction and its locks; the others go on. A turn's
 * statements follow each other within milliseconds, so only a stuck process ever meets it (it
 * then sees an error, and takes its turn again). `set_config(…, true)` lasts for the transaction,
 * so it works behind a pooler in transaction mode too.
 */
import { sql } from './kysely.js';

/** How long a transaction holding a shared turn may sit idle before PostgreSQL ends it. */
export const TURN_IDLE_LIMIT_MS = 5_000;

const bound = () =>
  sql`set_config('idle_in_transaction_session_timeout', ${String(TURN_IDLE_LIMIT_MS)}, true)`;

/** Bounds the transaction's idle time (above) and waits for the turn lock `name` of this schema. */
export function turnLock(name: string) {
  // One key per schema: stores in other schemas of the database (tests) keep their own turns.
  return sql`select ${bound()}, pg_advisory_xact_lock(hashtext(current_schema() || ${`:${name}`}))`;
}

/** Bounds the transaction's idle time (above): for one that locks rows rather than a turn. */
export function boundIdle() {
  return sql`select ${bound()}`;
}
