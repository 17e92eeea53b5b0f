/**
 * The operations endpoint: liveness, readiness and Prometheus metrics over plain node:http.
 *
 *   GET /healthz  200 `ok` while the process can answer at all
 *   GET /readyz   200 when isReady() says so, else 503; JSON body `{ ready, detail? }`
 *   GET /metrics  the registry in Prometheus text format
 *
 * HEAD is answered like GET without the body; other methods on these paths get 405, other
 * paths 404. Nothing a client sends can throw out of here: a malformed request gets 400 and
 * the socket is closed, a failing readiness check reads as not ready, a failing scrape as 500.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { guardedServer, listen } from '../http/listener.js';
import { errorLine } from '../log/error-line.js';
import type { Logger } from '../log/logger.js';
import type { Metrics } from './metrics.js';

export type Readiness = boolean | { ready: boolean; detail?: unknown };

export interface OpsServerOptions {
  /** 0 picks a free port (tests); the port taken is in the result. */
  port: number;
  /** Default 127.0.0.1: /metrics is not for everyone (the Docker image sets HTTP_HOST=0.0.0.0 for its probes). */
  host?: string;
  metrics: Pick<Metrics, 'registry'>;
  isReady: () => Readiness;
  logger: Logger;
  /** How long close() lets requests in progress finish before cutting them. Default 1000 ms. */
  closeGraceMs?: number;
}

export interface OpsServer {
  /** The port listened on (the one picked when 0 was asked). */
  port: number;
  /** Stops listening and closes every connection, idle keep-alive ones included. Idempotent. */
  close(): Promise<void>;
}

const ALLOW = 'GET, HEAD';
const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const DEFAULT_CLOSE_GRACE_MS = 1_000;

type Route = '/healthz' | '/readyz' | '/metrics';
const ROUTES: ReadonlySet<string> = new Set<Route>(['/healthz', '/readyz', '/metrics']);

interface Reply {
  status: number;
  type: string;
  body: string;
  headers?: Record<string, string>;
}

function text(status: number, body: string, headers?: Record<string, string>): Reply {
  return { status, type: TEXT_TYPE, body: `${body}\n`, headers };
}

/** JSON that cannot fail: a detail with cycles or BigInts is shown as text. */
function json(status: number, value: { ready: boolean; detail?: unknown }): Reply {
  let body: string;
  try {
    body = JSON.stringify(value);
  } catch (err) {
    body = JSON.stringify({ ready: value.ready, detail: `unserializable detail (${errorLine(err)})` });
  }
  return { status, type: JSON_TYPE, body: `${body}\n` };
}

function pathOf(url: string | undefined): string {
  const raw = url ?? '/';
  const end = raw.search(/[?#]/);
  return end === -1 ? raw : raw.slice(0, end);
}

export function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const { metrics, isReady } = options;
  const host = options.host ?? '127.0.0.1';
  const closeGraceMs = options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
  const log = options.logger.child({ component: 'ops-server' });

  function readiness(): Reply {
    let answer: Readiness;
    try {
      answer = isReady();
    } catch (err) {
      log.error({ error: errorLine(err) }, 'readiness check failed');
      return json(503, { ready: false, detail: 'readiness check failed' });
    }
    const ready = typeof answer === 'boolean' ? answer : answer?.ready === true;
    const detail = typeof answer === 'object' && answer !== null ? answer.detail : undefined;
    const body = detail === undefined ? { ready } : { ready, detail };
    return json(ready ? 200 : 503, body);
  }

  async function scrape(): Promise<Reply> {
    try {
      const body = await metrics.registry.metrics();
      return { status: 200, type: metrics.registry.contentType, body };
    } catch (err) {
      log.error({ error: errorLine(err) }, 'metrics collection failed');
      return text(500, 'metrics collection failed');
    }
  }

  async function route(req: IncomingMessage): Promise<Reply> {
    const path = pathOf(req.url);
    if (!ROUTES.has(path)) return text(404, 'not found');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return text(405, 'method not allowed', { Allow: ALLOW });
    }
    if (path === '/healthz') return text(200, 'ok');
    if (path === '/readyz') return readiness();
    return scrape();
  }

  function send(req: IncomingMessage, res: ServerResponse, reply: Reply): void {
    if (res.headersSent || res.destroyed) return;
    res.writeHead(reply.status, {
      'Content-Type': reply.type,
      'Content-Length': Buffer.byteLength(reply.body),
      'Cache-Control': 'no-store',
      ...reply.headers,
    });
    res.end(req.method === 'HEAD' ? undefined : reply.body);
  }

  const server: Server = guardedServer(log, 'ops', (req, res) => {
    res.on('error', (err) => log.debug({ error: errorLine(err) }, 'ops response failed'));
    route(req)
      .then((reply) => send(req, res, reply))
      .catch((err: unknown) => {
        log.error({ error: errorLine(err), path: pathOf(req.url) }, 'ops request failed');
        try {
          send(req, res, text(500, 'internal error'));
        } catch {
          res.destroy();
        }
      });
  });
  return listen(server, {
    port: options.port,
    host,
    closeGraceMs,
    log,
    what: 'ops server',
    listenError: (err) => err,
  });
}
