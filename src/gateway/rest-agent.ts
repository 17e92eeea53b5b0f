/**
 * The connections the bot keeps to Discord's REST API: one undici Agent per process, given to
 * discord.js (`rest.agent`), with a bound on the connections and a long keep-alive, so that a
 * burst of interactions queues briefly on warm connections instead of opening one for each.
 */
import { DefaultRestOptions, type RESTOptions } from '@discordjs/rest';
import { Agent, type Dispatcher } from 'undici';

/**
 * At most this many connections to Discord's REST API per process. Without an agent discord.js
 * uses undici's global one, which opens a connection for every request that finds none idle: a
 * burst of 200 interactions opened about 190 at once, each a TCP (in production also a TLS)
 * handshake between an interaction and its deferral, most of them closed again seconds later.
 * Sized above what the REST traffic needs at once (a deferral is one short request; everything
 * else discord.js holds to 50 requests/s), so a burst waits a few round trips at most.
 */
export const DISCORD_REST_CONNECTIONS = 32;

/**
 * How long an idle connection is kept when Discord does not say (a `Keep-Alive: timeout` it sends
 * wins). undici's default is 4 s, after which a quiet bot pays a new handshake for its next
 * interaction; Cloudflare, in front of Discord, keeps idle HTTP/1.1 connections for 400 s.
 */
export const DISCORD_REST_KEEP_ALIVE_MS = 60_000;

/**
 * A request whose signal has fired before it reaches the agent is failed there, with the signal's
 * reason, without taking a connection. undici dispatches such a request anyway, and once it has a
 * connection for it aborts it and destroys that connection (nodejs/undici#386): a warm connection
 * lost, or a new one opened only to be closed. discord.js hands over exactly such requests when a
 * caller aborts while the request waits for its 50 requests/s limit. The bot's own look-ups no
 * longer pass a signal (time/bounded.ts says why); this stays for any request that does.
 */
const refuseAborted: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) => {
  // undici's request() (discord.js's, and ours) passes its options on whole, the signal with them.
  const signal = (options as { signal?: unknown }).signal;
  if (signal instanceof AbortSignal && signal.aborted) {
    const reason: unknown = signal.reason;
    const error =
      reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
    // compose() hands interceptors a handler with both of undici's interfaces: onError reaches
    // request()'s callback. Without one, a throw does (request() reports what dispatch throws).
    if (!handler.onError) throw error;
    handler.onError(error);
    return true;
  }
  return dispatch(options, handler);
};

/** The dispatcher for discord.js's REST; destroy it after the client. */
export function createDiscordRestAgent(): Dispatcher {
  return new Agent({
    connections: DISCORD_REST_CONNECTIONS,
    keepAliveTimeout: DISCORD_REST_KEEP_ALIVE_MS,
  }).compose(refuseAborted);
}

type MakeRequest = NonNullable<RESTOptions['makeRequest']>;

/**
 * @discordjs/rest's own request strategy, with a multipart body (a message with files: a chart)
 * encoded to bytes first. Its copy of undici (6) hands a FormData on as a stream that our agent's
 * undici (7) cannot read ("action is not a function"); bytes with their content type go through
 * either. JSON bodies, nearly every request, pass as they are.
 */
export const encodeFormsFirst: MakeRequest = async (url, init) => {
  if (!(init.body instanceof FormData)) return DefaultRestOptions.makeRequest(url, init);
  const encoded = new Response(init.body);
  const headers = { ...(init.headers as Record<string, string> | undefined) };
  headers['content-type'] = encoded.headers.get('content-type') ?? 'multipart/form-data';
  const body = new Uint8Array(await encoded.arrayBuffer());
  return DefaultRestOptions.makeRequest(url, { ...init, headers, body });
};
