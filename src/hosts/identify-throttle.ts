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
import type { IIdentifyThrottler } from '@discordjs/ws';

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

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
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
      await sleep(Math.max(1, waitMs), signal);
    }
  }
}

/**
 * The day's session budget (GET /gateway/bot's session_start_limit): a host that would use it up
 * starting its shards refuses to start, saying so. Discord resets the budget once a day; a bot
 * out of it cannot connect at all until then, and a token that keeps trying may be reset.
 */
export function sessionBudgetProblem(
  info: { session_start_limit: { remaining: number; total: number; reset_after: number } },
  shardsToStart: number,
): string | undefined {
  const { remaining, total, reset_after: resetAfterMs } = info.session_start_limit;
  if (remaining >= shardsToStart) return undefined;
  const minutes = Math.ceil(resetAfterMs / 60_000);
  const when = `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  return (
    `Discord allows ${remaining} more gateway session(s) today (of ${total}; resets in ${when}); ` +
    `this host needs ${shardsToStart} to start its shards: not starting`
  );
}
