/**
 * One statistics post and its retries inside a tick (stats-poster.ts schedules the ticks): which
 * failures are retried at once, which wait for the next interval, and which are the operator's
 * to fix.
 */
import { type DirectoryClient, UnavailableError } from '../directory/index.js';
import type { Logger } from '../log/logger.js';
import { failureFields, failureOf } from './failure.js';
import { backoffDelay, MAX_TIMER_MS, type TaskLoop } from './loop.js';
import type { StatsGate } from './stats-gate.js';
import type { StatsBody } from './stats-snapshot.js';

export interface StatsRetry {
  /** Attempts inside one tick, the first included. */
  attempts: number;
  baseMs: number;
  capMs: number;
}

export type StatsOutcome =
  | 'posted'
  | 'skipped-not-ready'
  | 'skipped-not-leader'
  | 'skipped-snapshot-failed'
  | 'unauthorized'
  | 'forbidden'
  | 'rate-limited'
  | 'failed'
  | 'rejected';

/** What one tick came to, for the poster to log, report and schedule by. */
export interface TickResult {
  outcome: StatsOutcome;
  /** A gate's "not now" that knows when the next turn is. */
  retryInMs?: number;
  code?: string;
  body?: StatsBody;
  attempts?: number;
  /** Not before this time: a 429 that asked for longer than the interval. */
  notBefore?: number;
}

/**
 * The longest Retry-After the poster waits, in intervals: a 429 may push the next post back by one
 * interval (one post skipped), not by a day.
 */
const RETRY_AFTER_CAP_INTERVALS = 2;

/**
 * Failures that the same request would meet again: someone has to change the token, its kind or
 * the configuration. Logged at error; the loop goes on at the next interval, since a token can be
 * fixed on the directory's side without a restart.
 */
const OPERATOR_HINTS: Readonly<Record<string, string>> = {
  Unauthorized: "the directory refused the token; check DIRECTORY_TOKEN (POST /stats takes the bot's own)",
  Forbidden:
    'the directory forbids this token to post stats; check DIRECTORY_TOKEN (v3: a key of the account that owns the bot) and, on v2, DIRECTORY_TOKEN_KIND',
  TokenKindNotAccepted: 'POST /stats takes a Bot token in API v2; check DIRECTORY_TOKEN_KIND',
  InvalidArgument:
    "nothing was sent; check that DIRECTORY_TOKEN is set, DIRECTORY_API_VERSION, and on v3 the bot's ID (DISCORD_APPLICATION_ID)",
  BadRequest: 'the directory rejected the body of the stats',
  NotFound:
    'the directory has no POST /stats here, or (v3) no such bot; check DIRECTORY_API_URL, DIRECTORY_API_VERSION and DISCORD_APPLICATION_ID',
};

const OUTCOME_OF: Readonly<Record<string, StatsOutcome>> = {
  Unauthorized: 'unauthorized',
  // A token of the wrong kind is a token problem, like a wrong token.
  TokenKindNotAccepted: 'unauthorized',
  Forbidden: 'forbidden',
};

/** What a post needs of its poster. */
export interface PostContext {
  directory: Pick<DirectoryClient, 'postBotStats'>;
  log: Logger;
  loop: TaskLoop;
  retry: StatsRetry;
  random: () => number;
  now: () => number;
  intervalMs: number;
  attemptTimeoutMs: number;
  /** The bot's ID, for v3's route. */
  botId: string | undefined;
  /** When the post went out (the directory client's onSend). */
  onSend: (at: number) => void;
}

export async function postStats(ctx: PostContext, body: StatsBody, gate?: StatsGate): Promise<TickResult> {
  const { attempts, capMs } = ctx.retry;
  for (let attempt = 1; ; attempt += 1) {
    // Right before sending: a host that lost the lead meanwhile (frozen, cut off) sends nothing.
    if (gate?.go && !(await gate.stillValid().catch(() => false))) {
      ctx.log.warn({ attempt }, 'this host no longer leads the stats posts; nothing sent');
      return { outcome: 'skipped-not-leader', code: 'fenced', attempts: attempt - 1 };
    }
    const answer = await ctx.loop.attempt(
      (signal) =>
        ctx.directory.postBotStats(
          { ...body, ...(ctx.botId ? { botId: ctx.botId } : {}) },
          // Before look-ups and background work (with /up); the deadline keeps it from queueing
          // behind a flood of ups past the cap.
          {
            priority: 'critical',
            deadline: ctx.now() + capMs,
            signal,
            onSend: ctx.onSend,
          },
        ),
      ctx.attemptTimeoutMs,
    );
    if (answer.ok) {
      if (answer.value.ok === true) return { outcome: 'posted', body, attempts: attempt };
      // The same body would meet the same answer: for the operator to read, not to repeat.
      ctx.log.warn({ body, attempt, code: 'NotOk' }, 'the directory answered ok: false to the stats');
      return { outcome: 'rejected', code: 'NotOk', body, attempts: attempt };
    }
    const failure = failureOf(answer.abandoned ? hung(ctx.attemptTimeoutMs) : answer.error);
    const fields = { body, attempt, attempts, ...failureFields(failure) };
    const result = { code: failure.code, body, attempts: attempt };
    if (ctx.loop.stopRequested) {
      ctx.log.warn(fields, 'stats post ended by stop');
      return { outcome: 'failed', ...result };
    }
    if (answer.abandoned) {
      // Retrying now could put two posts in flight; by the next interval this one is long gone.
      ctx.log.error(fields, 'stats post did not settle even when cancelled; waiting for the next interval');
      return { outcome: 'failed', ...result };
    }
    const hint = OPERATOR_HINTS[failure.code];
    if (hint !== undefined) {
      ctx.log.error({ ...fields, hint }, 'stats post refused; trying again at the next interval');
      return { outcome: OUTCOME_OF[failure.code] ?? 'failed', ...result };
    }
    if (failure.code === 'RateLimited') {
      const cap = Math.min(RETRY_AFTER_CAP_INTERVALS * ctx.intervalMs, MAX_TIMER_MS);
      const waitMs = ctx.loop.retryAfter(failure, cap) ?? backoffDelay(attempt, ctx.retry, ctx.random);
      if (attempt < attempts && waitMs <= capMs) {
        ctx.log.warn({ ...fields, retryInMs: waitMs }, 'stats post rate limited; retrying');
        if (await ctx.loop.sleep(waitMs)) continue;
        return { outcome: 'rate-limited', ...result };
      }
      ctx.log.warn(
        { ...fields, retryInMs: waitMs },
        'stats post rate limited; waiting for the next interval',
      );
      return { outcome: 'rate-limited', ...result, notBefore: ctx.now() + waitMs };
    }
    if (failure.code === 'Unavailable' || failure.code === 'InvalidResponse') {
      if (attempt < attempts) {
        const waitMs = backoffDelay(attempt, ctx.retry, ctx.random);
        ctx.log.warn({ ...fields, retryInMs: waitMs }, 'stats post failed; retrying');
        if (await ctx.loop.sleep(waitMs)) continue;
        return { outcome: 'failed', ...result };
      }
      ctx.log.warn(fields, 'stats post failed; waiting for the next interval');
      return { outcome: 'failed', ...result };
    }
    ctx.log.error(fields, 'stats post failed unexpectedly; waiting for the next interval');
    return { outcome: 'failed', ...result };
  }
}

/** What a post that ignored its cancel is logged as. */
function hung(attemptTimeoutMs: number): UnavailableError {
  return new UnavailableError(`postBotStats did not settle within ${attemptTimeoutMs} ms`, {
    method: 'postBotStats',
    reason: 'timeout',
  });
}
