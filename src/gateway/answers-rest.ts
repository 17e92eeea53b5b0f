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
import { type InternalRequest, REST, type RESTOptions } from 'discord.js';

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
