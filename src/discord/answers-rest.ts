/**
 * Interaction answers on a path of their own. Discord does not count interaction endpoints
 * against a bot's global rate limit (50 requests a second), but @discordjs/rest exempts only the
 * first callback: editing the original answer, follow-ups and deleting the original
 * (`/webhooks/{application}/{token}/…`, sent without the bot's token) wait in the same global
 * queue as the guild and user look-ups. Under a burst of /up, bench scenario 2 measured the final
 * answers 7 s behind that queue.
 *
 * Here the client's REST hands those requests to a second REST with no global limit. It keeps
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
import { type InternalRequest, REST, type RESTOptions } from 'discord.js';

/** Whether a request is an answer to one of the bot's interactions. */
export function isInteractionAnswer(
  request: Pick<InternalRequest, 'auth' | 'fullRoute'>,
  applicationId: string | undefined,
): boolean {
  if (applicationId === undefined || request.auth !== false) return false;
  return request.fullRoute.startsWith(`/webhooks/${applicationId}/`);
}

/**
 * Sends `rest`'s interaction answers through a REST of their own, made with `options` (the
 * client's) and no global limit; `applicationId` is read at each request (unknown before ready).
 */
export function sendAnswersApart(
  rest: REST,
  options: Partial<RESTOptions>,
  applicationId: () => string | undefined,
): void {
  const answers = new REST({ ...options, globalRequestsPerSecond: Number.POSITIVE_INFINITY });
  const queue = rest.queueRequest.bind(rest);
  rest.queueRequest = (request: InternalRequest) =>
    isInteractionAnswer(request, applicationId()) ? answers.queueRequest(request) : queue(request);
}
