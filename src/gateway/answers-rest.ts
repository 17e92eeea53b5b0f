/**
 * Interaction answers on a path of their own. Discord does not count interaction endpoints
 * against a bot's global rate limit (50 requests a second), but @discordjs/rest exempts only the
 * first callback: editing the original answer, follow-ups and deleting the original
 * (`/webhooks/{application}/{token}/…`, sent without the bot's token) wait in the same global
 * queue as the guild and user look-ups. Under a burst of /up, bench scenario 2 measured the final
 * answers 7 s behind that queue.
 *
 * Here the client's REST hands those requests to a second REST with no global limit, made with the
 * direct address (DISCORD_API_URL): with a REST proxy for the rest (client.ts), the answers and
 * the first responses discord.js sends still go straight to Discord, never paced by the proxy.
 * A first response was already exempt from the global limit in @discordjs/rest (its BurstHandler):
 * it comes here only for the address. It keeps
 * everything else of @discordjs/rest: the per-route buckets (one per interaction token), the 429s
 * and their Retry-After, Discord's own global 429. Only requests to the bot's own application's
 * webhooks, without the token, take it: a channel webhook (another application's id) stays on the
 * global path. Nothing else changes for the callers: discord.js's editReply, followUp and
 * deleteReply, and the answers after a restart (respond.ts), go through `client.rest` as before.
 *
 * Why a wrapped queueRequest rather than a REST of our own for the client: discord.js builds its
 * REST itself from the options (BaseClient), and every request of discord.js and ours ends in
 * `queueRequest` (REST.request calls it), so this is the one place every answer passes.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type InternalRequest, REST, type RESTOptions } from 'discord.js';
import { failureOf } from './rest-health.js';

/** How long an interaction's token lets the bot answer: an answer Discord failed is tried again within it. */
export const TOKEN_LIFETIME_MS = 15 * 60_000;
/** The first wait before an answer is tried again, doubled each time up to ANSWER_RETRY_MAX_MS. */
export const ANSWER_RETRY_FIRST_MS = 1_000;
export const ANSWER_RETRY_MAX_MS = 30_000;
/** How often the answers' idle route queues and old bucket hashes are let go. */
const SWEEP_EVERY_MS = 5 * 60_000;

/** The answers' REST, apart: `close` ends the retries still waiting (the bot stopping). */
export interface AnswersApart {
  close(): void;
}

/** `/interactions/{id}/{token}/callback`: a first response. */
const CALLBACK = /^\/interactions\/\d+\/[^/]+\/callback$/;

/**
 * Whether a request is an answer to one of the bot's interactions: a first response sent through
 * discord.js (the rare ones the acknowledger does not send: a fallback deferral, "unknown command",
 * "restarting"), or an edit, follow-up or deletion on the bot's own application's webhook.
 */
export function isInteractionAnswer(
  request: Pick<InternalRequest, 'auth' | 'fullRoute'>,
  applicationId: string | undefined,
): boolean {
  if (request.auth !== false) return false;
  if (CALLBACK.test(request.fullRoute)) return true;
  return applicationId !== undefined && request.fullRoute.startsWith(`/webhooks/${applicationId}/`);
}

/**
 * Sends `rest`'s interaction answers through a REST of their own, made with `options` (the
 * client's) and no global limit; `applicationId` is read at each request (unknown before ready).
 *
 * An answer whose every retry of @discordjs/rest failed (Discord answering 5xx, or not reached:
 * its three retries come back to back, 0.2 s for all) is tried again, 1 s later, then 2, 4 … up to
 * 30 s apart, for as long as its token lives (15 minutes from its first try, a bound the real one
 * is past: the interaction came before its answer). Discord having a bad minute then makes the
 * answer late instead of lost. A 4xx is Discord answering (an expired token: 401, 404) and ends it.
 * @discordjs/rest already retries a 5xx of any method, a follow-up's POST included, so these
 * retries add no kind of risk it does not take.
 */
export function sendAnswersApart(
  rest: REST,
  options: Partial<RESTOptions>,
  applicationId: () => string | undefined,
): AnswersApart {
  const answers = new REST({
    ...options,
    globalRequestsPerSecond: Number.POSITIVE_INFINITY,
    // @discordjs/rest keeps a queue and a bucket hash per route, and each interaction's token is a
    // route of its own: at its defaults (idle queues swept hourly, hashes kept a day) a busy bot
    // holds an hour of queues and a day of hashes for tokens dead after 15 minutes (the soak,
    // bench scenario 17, saw them among the heap's growth). Swept as the tokens die instead.
    handlerSweepInterval: SWEEP_EVERY_MS,
    hashSweepInterval: SWEEP_EVERY_MS,
    hashLifetime: TOKEN_LIFETIME_MS + SWEEP_EVERY_MS,
  });
  const closing = new AbortController();
  const answer = async (request: InternalRequest) => {
    const deadline = Date.now() + TOKEN_LIFETIME_MS;
    let waitMs = ANSWER_RETRY_FIRST_MS;
    for (;;) {
      try {
        return await answers.queueRequest(request);
      } catch (err) {
        const failure = failureOf(err);
        if (failure === undefined || closing.signal.aborted || Date.now() + waitMs > deadline) throw err;
        await sleep(waitMs, undefined, { signal: closing.signal, ref: false }).catch(() => {
          throw err;
        });
        waitMs = Math.min(waitMs * 2, ANSWER_RETRY_MAX_MS);
      }
    }
  };
  const queue = rest.queueRequest.bind(rest);
  rest.queueRequest = (request: InternalRequest) =>
    isInteractionAnswer(request, applicationId()) ? answer(request) : queue(request);
  return {
    close: () => {
      closing.abort();
      answers.clearHashSweeper();
      answers.clearHandlerSweeper();
    },
  };
}
