/**
 * An outbox over a store whose rows end `done` or `failed`: how an item ended (finishAs), and its
 * source (keyedSource).
 */
import type { Lease } from '../store/claims.js';
import type { OutboxSource, SendOutcome } from './outbox.js';

/**
 * `finish` for a store whose rows end `done` or `failed` (webhook events, reminder follow-ups): a
 * sent item is done, a failed one failed with its reason.
 */
export function finishAs<C>(
  finish: (claim: C, state: 'done' | 'failed', failure: string | null, now: number) => Promise<unknown>,
): (claim: C, outcome: Exclude<SendOutcome, { kind: 'retry' }>, now: number) => Promise<unknown> {
  return (claim, outcome, now) =>
    outcome.kind === 'sent' ? finish(claim, 'done', null, now) : finish(claim, 'failed', outcome.reason, now);
}

/** A store whose rows are claimed by a key and end `done` or `failed` (store/claims.ts). */
export interface KeyedRows<C> {
  claim(key: string, by: string, leaseMs: number, now: number): Promise<C | undefined>;
  finish(claim: C, state: 'done' | 'failed', failure: string | null, now: number): Promise<unknown>;
  retryAt(claim: C, at: number): Promise<unknown>;
}

/**
 * An outbox's source over such a store (digests, live leaderboards, streak notices, follow-ups):
 * what is due, and each item's key for its claim.
 */
export function keyedSource<I, C extends Lease>(
  rows: KeyedRows<C>,
  keyOf: (item: I) => string,
  due: OutboxSource<I, C>['due'],
): OutboxSource<I, C> {
  return {
    due,
    claim: (item, by, leaseMs, now) => rows.claim(keyOf(item), by, leaseMs, now),
    finish: finishAs((claim, state, failure, now) => rows.finish(claim, state, failure, now)),
    retryAt: (claim, at) => rows.retryAt(claim, at),
  };
}
