/**
 * One Discord REST limit for several hosts: @discordjs/proxy in front of Discord, which every host
 * sends its bot-token requests to (DISCORD_REST_PROXY_URL). Discord's global limit, 50 requests a
 * second, is per bot token, not per host: three hosts each pacing themselves at 50 a second send
 * 150. Here one @discordjs/rest `REST` sends them all, so they share one limit and one set of
 * per-route buckets. The interactions' own requests (deferrals, answers) never come here
 * (client.ts): Discord does not count them, and this queue would pace them.
 *
 * How the forwarded requests wait. `proxyRequests(rest)` hands every request to
 * `rest.queueRequest` with `auth: false`, forwarding the caller's Authorization header as it is.
 * @discordjs/rest applies its global limit in the request handler (SequentialHandler.runRequest:
 * `manager.globalRemaining`, a window of one second from the first request, refilled to
 * `globalRequestsPerSecond`), for every request that is not an interaction callback, whatever its
 * `auth`: only the route decides (`/interactions/:id/:token/callback` alone goes to the
 * BurstHandler, which does not count). So the forwarded requests are counted with no change; the
 * limit is still spelled out below so that no default can move it.
 *
 * That limit alone is not enough for a proxy that runs at it all the time: every request first
 * takes a slot of a sliding log of 50 in any second (paceGlobally, global-pace.ts, which says
 * why). A request over the limit waits (`rejectOnRateLimit: null`, the default: nothing is refused
 * with a RateLimitError, which the proxy would answer with a 429), and a 429 from Discord (its
 * Retry-After, global or per route) is waited out and the request sent again: the hosts see the
 * answer late, never a 429 of the limits. What a host must allow: its own REST's timeout (15 s by default) is the longest a
 * request may wait here; a host that gives up sends it again.
 *
 * Two things `proxyRequests` leaves to its caller, done here in the REST's makeRequest:
 * - It hands the host's request itself to the REST as the body (`passThroughBody`), a stream that
 *   can be read once: a request sent again (after a 429, a 5xx, a reset connection) would go with
 *   an empty body. The body is read once, kept, and sent as bytes on every attempt.
 * - It answers an error it does not know (an upstream that cannot be reached) with whatever status
 *   the response has, 200 by default, with no body. Such errors become a 502 here, which
 *   @discordjs/rest retries like any 5xx and then forwards as a 502.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { proxyRequests } from '@discordjs/proxy';
import { DefaultRestOptions, REST, type RESTOptions } from '@discordjs/rest';
import { guardedServer, type Listening, listen, listenProblem } from '../http/listener.js';
import { errorLine } from '../log/error-line.js';
import type { Logger } from '../log/logger.js';
import { DISCORD_GLOBAL_REQUESTS_PER_SECOND, paceGlobally } from './global-pace.js';
import { RestHealth } from './rest-health.js';

/** How long stopping lets the requests in flight (waiting for the limit or for Discord) finish. */
export const REST_PROXY_CLOSE_GRACE_MS = 5_000;

export interface RestProxyOptions {
  /** Discord's REST base including /api (DISCORD_API_URL); Discord's own by default. */
  upstream?: string | undefined;
  port: number;
  host: string;
  logger: Logger;
  closeGraceMs?: number;
  /** Discord's global limit for the token, requests a second (DISCORD_GLOBAL_RATE_LIMIT; 50). */
  globalPerSecond?: number;
}

export interface RestProxy extends Listening {
  /** The REST every forwarded request goes through (its events tell what went upstream). */
  readonly rest: REST;
}

export class RestProxyListenError extends Error {
  override name = 'RestProxyListenError';
}

type MakeRequest = NonNullable<RESTOptions['makeRequest']>;

/**
 * @discordjs/rest's own request, with the host's body read once and sent again as it was on every
 * attempt, and an upstream that cannot be reached answered as a 502.
 */
function upstreamRequest(logger: Logger): MakeRequest {
  const bodies = new WeakMap<Readable, Uint8Array>();
  const replayable = async (body: RequestInit['body']): Promise<RequestInit['body']> => {
    if (!(body instanceof Readable)) return body;
    let bytes = bodies.get(body);
    if (bytes === undefined) {
      bytes = Buffer.concat(await body.toArray());
      bodies.set(body, bytes);
    }
    return bytes.length === 0 ? undefined : bytes;
  };
  return async (url, init) => {
    // A body the host did not finish sending fails here, not as an unreachable Discord.
    const body = await replayable(init.body);
    try {
      return await DefaultRestOptions.makeRequest(url, { ...init, body });
    } catch (err) {
      // A timeout stays one: the proxy answers it with a 504.
      if (err instanceof Error && err.name === 'AbortError') throw err;
      // Per attempt, so debug: the outage is told once, by the REST's health (failing, 502).
      logger.debug({ error: errorLine(err) }, 'REST proxy: Discord could not be reached');
      const body = JSON.stringify({ message: '502: Bad Gateway', code: 0 });
      return new Response(body, { status: 502, headers: { 'content-type': 'application/json' } });
    }
  };
}

/**
 * Headers of one connection (RFC 9110, 7.6.1), which `proxyRequests` copies from Discord's answer
 * with the others: Discord's `Connection: keep-alive` would keep the hosts' connections open past a
 * stop, and its `Transfer-Encoding` is not ours to repeat (Node frames the answer itself).
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

/** `res` without the hop-by-hop headers anyone sets on it. */
function withoutHopByHop(res: ServerResponse): ServerResponse {
  const setHeader = res.setHeader.bind(res);
  res.setHeader = (name, value) => (HOP_BY_HOP.has(name.toLowerCase()) ? res : setHeader(name, value));
  return res;
}

/** The request's path without its query (which may be long), for the log line. */
function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** Listens on `port` and `host`; rejects with a RestProxyListenError naming the variable to change. */
export async function startRestProxy(options: RestProxyOptions): Promise<RestProxy> {
  const { logger, host, port } = options;
  // The hosts never see a 429 (it is waited out here): Discord's trouble is told here, once per
  // change (rest-health.ts).
  const health = new RestHealth({ logger: logger.child({ component: 'discord-rest' }) });
  const perSecond = options.globalPerSecond ?? DISCORD_GLOBAL_REQUESTS_PER_SECOND;
  const rest = new REST({
    api: options.upstream ?? DefaultRestOptions.api,
    globalRequestsPerSecond: perSecond,
    // Wait, never refuse: a RateLimitError would reach the host as a 429.
    rejectOnRateLimit: null,
    makeRequest: health.attempts(upstreamRequest(logger)),
  });
  // The sliding log in front of @discordjs/rest's window (global-pace.ts): 50 in any second.
  paceGlobally(rest, perSecond);
  health.watch(rest);
  const forward = proxyRequests(rest);
  let closing = false;
  const inFlight = new Set<ServerResponse>();
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    // Stopping: a connection is closed once its last answer is out, not kept for the next request.
    if (closing) res.shouldKeepAlive = false;
    // The probes' own answer, never forwarded (Discord's paths all start with /api).
    if (pathOf(req) === '/healthz' && (req.method === 'GET' || req.method === 'HEAD')) {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : 'ok\n');
      return;
    }
    const started = performance.now();
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
    Promise.resolve(forward(req, withoutHopByHop(res))).then(
      // The method, path and status only: the Authorization header is never logged.
      () =>
        logger.debug(
          {
            method: req.method,
            path: pathOf(req),
            status: res.statusCode,
            ms: Math.round(performance.now() - started),
          },
          'forwarded',
        ),
      (err: unknown) => {
        logger.error({ error: errorLine(err), method: req.method, path: pathOf(req) }, 'REST proxy: failed');
        if (!res.writableEnded) res.end();
      },
    );
  };
  // Its clients are the bot's own processes, all from a few addresses: no bound per address.
  const server = guardedServer(logger, 'REST proxy', handler, { bounded: () => false });
  const listening = await listen(server, {
    port,
    host,
    closeGraceMs: options.closeGraceMs ?? REST_PROXY_CLOSE_GRACE_MS,
    log: logger,
    what: 'REST proxy',
    listenError: (err) =>
      new RestProxyListenError(
        `the REST proxy could not start: ${listenProblem(err, host, port, {
          port: 'DISCORD_REST_PROXY_PORT',
          host: 'DISCORD_REST_PROXY_HOST',
        })}`,
      ),
  });
  return {
    port: listening.port,
    rest,
    close: () => {
      closing = true;
      health.close();
      // The connections whose request is in flight close after its answer.
      for (const res of inFlight) res.shouldKeepAlive = false;
      return listening.close();
    },
  };
}
