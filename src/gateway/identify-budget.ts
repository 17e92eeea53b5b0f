/**
 * Discord's daily identify budget (1,000 gateway sessions a day for most bots: `session_start_limit`
 * of GET /gateway/bot) against a floor the bot will not spend it below at start. A process that
 * dies at start and is started again, over and over (a crash loop), identifies every shard each
 * time; once the budget is spent, Discord refuses every identify until it resets, and the bot stays
 * off the gateway for the rest of the day, restarts that would have worked included. Refusing to
 * start keeps the last identifies for a start that can work.
 */
import type { APIGatewaySessionStartLimit } from 'discord-api-types/v10';

/** The floor's variable, named in the refusal. */
export const IDENTIFY_FLOOR_VARIABLE = 'IDENTIFY_BUDGET_FLOOR';

/** A start refused: its message is one line for the operator. */
export class IdentifyBudgetError extends Error {
  override readonly name = 'IdentifyBudgetError';
}

/** Minutes or hours, for a human. */
function humanDuration(ms: number): string {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  return minutes < 120 ? `${minutes} min` : `${Math.round(minutes / 60)} h`;
}

/**
 * Why starting `shards` shards now would spend the budget below `floor` (or need more than is
 * left: then some shards could not connect at all, whatever the floor), or undefined to start.
 */
export function identifyBudgetRefusal(
  limit: Pick<APIGatewaySessionStartLimit, 'remaining' | 'total' | 'reset_after'>,
  shards: number,
  floor: number,
): string | undefined {
  const left = limit.remaining - shards;
  if (left >= Math.max(0, floor)) return undefined;
  const budget =
    `Discord allows ${limit.remaining} more gateway identifies of ${limit.total} until its budget resets in ` +
    `${humanDuration(limit.reset_after)}`;
  if (left < 0) return `${budget}; this process needs ${shards} to start its shards: not starting`;
  return (
    `${budget}; identifying ${shards} shard(s) would leave ${left}, under ${IDENTIFY_FLOOR_VARIABLE}=${floor}: ` +
    'not starting (lower it to start anyway)'
  );
}
