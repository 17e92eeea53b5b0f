/**
 * Identifies while the bot runs, kept within Discord's daily budget (1,000 sessions a day for most
 * bots) and its floor. The start is held to the floor before any shard connects
 * (identify-budget.ts); afterwards every identify is a session lost (Discord invalidated it, or it
 * could not be resumed), and Discord having a bad hour can invalidate a shard's session every few
 * seconds: at discord.js's pace (one identify per 5 s) that is 720 an hour for one shard, the
 * day's budget gone in under two hours, and the bot off the gateway until it resets, the hour
 * after the storm included. Two guards, asked before each identify:
 *
 * - a shard whose sessions keep being lost waits before identifying again: its first
 *   FREE_IDENTIFIES identifies in a row never wait, the next waits 5 s, then 10, 20 … up to 10
 *   minutes. A row ends when a session lasts QUIET_MS (10 minutes) from its identify. An hour of
 *   sessions invalidated every few seconds then spends about fifteen identifies per shard rather
 *   than 720, and a shard that loses its session now and then (the usual) never waits.
 * - the budget as Discord last told it (`session_start_limit`, fetched at each start), less the
 *   identifies made since: an identify that would leave less than the floor (IDENTIFY_BUDGET_FLOOR)
 *   waits for the budget's reset, told in one error line. The floor is kept for a start that can
 *   work: a restart resumes its sessions without spending, but a shard whose session is gone needs
 *   one. With several hosts, each counts the identifies it made itself since its own start: the
 *   others' are not seen until it starts again (the start's check asks Discord).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { APIGatewaySessionStartLimit } from 'discord-api-types/v10';
import type { Logger } from '../log/logger.js';
import { IDENTIFY_FLOOR_VARIABLE } from './identify-budget.js';

/** Identifies of one shard in a row that never wait. */
export const FREE_IDENTIFIES = 3;
/** A session that lasts this long from its identify ends the row. */
export const QUIET_MS = 10 * 60_000;
/** The first wait past the free ones, doubled at each further identify in the row. */
export const FIRST_WAIT_MS = 5_000;
export const MAX_WAIT_MS = 10 * 60_000;
/** Discord's budget period, for when it has reset with no fetch since. */
const DAY_MS = 24 * 60 * 60_000;

export interface IdentifyPaceOptions {
  floor: number;
  logger: Logger;
  now?: () => number;
  /** Waits `ms`, rejecting when `signal` aborts (tests give a clock of their own). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const realSleep = async (ms: number, signal: AbortSignal): Promise<void> => {
  await sleep(ms, undefined, { signal });
};

interface Budget {
  total: number;
  remaining: number;
  resetAt: number;
}

function minutes(ms: number): string {
  return `${Math.max(1, Math.ceil(ms / 60_000))} min`;
}

export class IdentifyPace {
  readonly #floor: number;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Each shard's identifies in a row, and when the last was let through. */
  readonly #rows = new Map<number, { count: number; lastAt: number }>();
  #budget: Budget | undefined;
  /** The reset whose wait was told (one error line per budget period). */
  #toldFloorFor: number | undefined;

  constructor(options: IdentifyPaceOptions) {
    this.#floor = Math.max(0, options.floor);
    this.#log = options.logger;
    this.#now = options.now ?? Date.now;
    this.#sleep = options.sleep ?? realSleep;
  }

  /** Discord's budget as fetched (at each start): it replaces what was counted here. */
  told(limit: Pick<APIGatewaySessionStartLimit, 'total' | 'remaining' | 'reset_after'>): void {
    this.#budget = {
      total: limit.total,
      remaining: limit.remaining,
      resetAt: this.#now() + limit.reset_after,
    };
  }

  /** The budget left as counted here, or undefined before Discord told it. */
  remaining(): number | undefined {
    this.#renew();
    return this.#budget?.remaining;
  }

  /** Waits until the shard may identify (within the pace and the floor), and counts it. */
  async before(shardId: number, signal: AbortSignal): Promise<void> {
    const row = this.#rows.get(shardId) ?? { count: 0, lastAt: 0 };
    if (this.#now() - row.lastAt >= QUIET_MS) row.count = 0;
    const waitMs =
      row.count < FREE_IDENTIFIES
        ? 0
        : Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** (row.count - FREE_IDENTIFIES));
    if (waitMs > 0) {
      this.#log.debug(
        { shardId, waitMs, inARow: row.count },
        'shard keeps losing its session: its next identify waits',
      );
      await this.#sleep(waitMs, signal);
    }
    await this.#withinFloor(shardId, signal);
    row.count += 1;
    row.lastAt = this.#now();
    this.#rows.set(shardId, row);
    if (this.#budget) this.#budget.remaining -= 1;
  }

  /** A budget period over: Discord gave the whole budget back. */
  #renew(): void {
    const budget = this.#budget;
    if (!budget) return;
    const now = this.#now();
    while (now >= budget.resetAt) {
      budget.remaining = budget.total;
      budget.resetAt += DAY_MS;
    }
  }

  async #withinFloor(shardId: number, signal: AbortSignal): Promise<void> {
    for (;;) {
      this.#renew();
      const budget = this.#budget;
      if (!budget || budget.remaining - 1 >= this.#floor) return;
      const waitMs = Math.max(0, budget.resetAt - this.#now());
      if (this.#toldFloorFor !== budget.resetAt) {
        this.#toldFloorFor = budget.resetAt;
        this.#log.error(
          { shardId, remaining: budget.remaining, floor: this.#floor, resetInMs: waitMs },
          `Discord's identify budget is down to ${budget.remaining} of ${budget.total} (${IDENTIFY_FLOOR_VARIABLE}=${this.#floor}): ` +
            `shard ${shardId} lost its session and waits for the budget's reset in ${minutes(waitMs)} before identifying`,
        );
      }
      await this.#sleep(waitMs, signal);
    }
  }
}
