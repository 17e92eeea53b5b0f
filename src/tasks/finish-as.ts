/** How an outbox's item ended, recorded by a store whose rows end `done` or `failed`. */
import type { SendOutcome } from './outbox.js';

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
