/**
 * IDENTIFY across hosts. discord.js's own throttler (@discordjs/ws SimpleIdentifyThrottler)
 * spaces the shards of one process; several hosts starting together would each identify at
 * once, and Discord answers a bucket's second IDENTIFY within 5 s with an invalid session. This
 * one takes each turn from a ledger the hosts share (PostgreSQL: identify-ledger.ts),
 * through discord.js's extension point `ws.buildIdentifyThrottler`.
 *
 * An IDENTIFY never goes without its turn: a ledger that cannot be reached is asked again every
 * second (a shard that waits is better than one that burns the day's session budget).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { IIdentifyThrottler, WebSocketManager } from '@discordjs/ws';
import type { Logger } from '../log/logger.js';
import { LEDGER_WARN_EVERY_MS, logThrottle } from '../log/throttle.js';

/** Discord's 5 s per bucket, and a little: the hosts' requests reach Discord at different times. */
export const IDENTIFY_SPACING_MS = 5_250;
const LEDGER_RETRY_MS = 1_000;

export interface IdentifyLedger {
  take(
    bucket: number,
    spacingMs: number,
  ): Promise<{ granted: true; at: number } | { granted: false; waitMs: number }>;
}

export interface SharedIdentifyThrottlerOptions {
  ledger: IdentifyLedger;
  /** From GET /gateway/bot: how many buckets identify in parallel. */
  maxConcurrency: number;
  spacingMs?: number;
  onLedgerError?: (err: unknown) => void;
}

export class SharedIdentifyThrottler implements IIdentifyThrottler {
  readonly #options: Required<Omit<SharedIdentifyThrottlerOptions, 'onLedgerError'>> &
    Pick<SharedIdentifyThrottlerOptions, 'onLedgerError'>;

  constructor(options: SharedIdentifyThrottlerOptions) {
    this.#options = {
      spacingMs: IDENTIFY_SPACING_MS,
      ...options,
      maxConcurrency: Math.max(1, options.maxConcurrency),
    };
  }

  async waitForIdentify(shardId: number, signal: AbortSignal): Promise<void> {
    const { ledger, maxConcurrency, spacingMs, onLedgerError } = this.#options;
    const bucket = shardId % maxConcurrency;
    for (;;) {
      if (signal.aborted) throw signal.reason;
      let waitMs: number;
      try {
        const turn = await ledger.take(bucket, spacingMs);
        if (turn.granted) return;
        waitMs = turn.waitMs;
      } catch (err) {
        onLedgerError?.(err);
        waitMs = LEDGER_RETRY_MS;
      }
      await sleep(Math.max(1, waitMs), undefined, { signal }).catch(() => {
        throw signal.reason;
      });
    }
  }
}

/**
 * discord.js's `ws.buildIdentifyThrottler` for one host of several: each IDENTIFY takes its turn
 * from the ledger the hosts share (`ledger` is asked when discord.js connects, after the store
 * opened), in Discord's max_concurrency buckets; a ledger that cannot be read is said at most
 * every 10 s while the shard waits.
 */
export function hostIdentifyThrottler(
  ledger: () => IdentifyLedger,
  logger: Logger,
): (manager: WebSocketManager) => Promise<IIdentifyThrottler> {
  const warn = logThrottle(LEDGER_WARN_EVERY_MS);
  return async (manager) => {
    const info = await manager.fetchGatewayInformation();
    return new SharedIdentifyThrottler({
      ledger: ledger(),
      maxConcurrency: info.session_start_limit.max_concurrency,
      onLedgerError: (err) => {
        if (!warn()) return;
        logger.warn({ err: String(err) }, 'cannot take an IDENTIFY turn from the store; the shard waits');
      },
    });
  };
}
