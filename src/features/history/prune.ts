/**
 * What the store keeps: the up history UP_HISTORY_DAYS, the webhook events announced (or given
 * up) WEBHOOK_EVENT_DAYS, the /up answers waiting for a notification until their token expires.
 * What is older is deleted at start and every six hours, one DELETE each on an indexed time.
 */
import type { Logger } from '../../log/logger.js';
import { UP_HISTORY_DAYS, UP_HISTORY_MS, WEBHOOK_EVENT_MS } from '../../store/index.js';
import { PeriodicTask } from '../../tasks/periodic.js';

export const PRUNE_EVERY_MS = 6 * 3_600_000;

export interface PruneOptions {
  /** Each deletes what is older than `before` and says how many went. */
  history: { prune(before: number): Promise<number> };
  webhooks: { prune(before: number): Promise<number> };
  /** v3: the /up answers whose token expired before `before` (store/notifications.ts). */
  watches?: { prune(before: number): Promise<number> } | undefined;
  logger: Logger;
  now: () => number;
}

/** One pass: the ups older than UP_HISTORY_MS, then the webhook events older than WEBHOOK_EVENT_MS. */
export async function pruneOld({ history, webhooks, watches, logger, now }: PruneOptions): Promise<void> {
  const deleted = await history.prune(now() - UP_HISTORY_MS);
  if (deleted > 0) logger.info({ deleted, days: UP_HISTORY_DAYS }, 'old ups deleted from the history');
  const events = await webhooks.prune(now() - WEBHOOK_EVENT_MS);
  if (events > 0) logger.info({ deleted: events }, 'old webhook events deleted');
  const expired = (await watches?.prune(now())) ?? 0;
  if (expired > 0)
    logger.info({ deleted: expired }, 'expired /up answers deleted (their tokens edit nothing now)');
}

/** The pass at start() and every PRUNE_EVERY_MS. */
export function historyPruner(options: PruneOptions): PeriodicTask {
  return new PeriodicTask({
    name: 'history pruner',
    everyMs: PRUNE_EVERY_MS,
    run: () => pruneOld(options),
    failure: 'could not delete old ups or webhook events',
    logger: options.logger,
  });
}
