/**
 * What our two HTTP listeners (the operations endpoint, the webhook receiver) share: the bounds on
 * a slow client and on connections, the answer to a malformed request, and listening with a close
 * that does not wait for idle keep-alive connections. Plain node:http; nothing a client sends can
 * throw out of here.
 */
import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { errorLine } from '../log/error-line.js';

/**
 * A request's head must come within HEADERS_TIMEOUT_MS, the whole request within
 * REQUEST_TIMEOUT_MS. Node looks for overdue sockets every CHECK_EVERY_MS (every 30 s by default,
 * which let a slow socket live 30 s and more): a socket that drips its head or its body is cut
 * within about 12 s.
 */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 11_000;
const CHECK_EVERY_MS = 1_000;
/**
 * Connections open at once (before file descriptors run out). At the cap the oldest connection
 * that is not in the middle of a request (it has sent no complete head yet, or waits idle between
 * keep-alive requests) is closed to make room; only when every one is busy is the new one closed.
 * Closing the newcomer instead let 500 idle sockets shut out a real delivery until the headers
 * timeout, and an attacker simply opened them again.
 */
export const MAX_CONNECTIONS = 512;
/**
 * Connections one address holds at once, where the listener bounds each (the operations endpoint,
 * the webhook receiver but for a trusted proxy's): one address cannot take more than half the cap.
 * Half, not less: the directory's own deliveries come from few addresses, and a burst of 50 at a
 * time opened more than 64 connections from one (the emulator's HTTP client, fault row A2), where
 * closing one of them to make room raced the client's next request on it. Past it,
 * its own oldest idle connection makes room, or, when all of its connections are busy, its new one
 * is closed. Behind a trusted proxy every connection comes from the proxy: the bound per client is
 * the proxy's to keep (nginx: limit_conn).
 */
export const MAX_CONNECTIONS_PER_SOURCE = 256;
/** Requests on one keep-alive socket; the last one is answered with `Connection: close`. */
export const MAX_REQUESTS_PER_SOCKET = 1_000;
/** Connections refused or closed to make room: one line at most every minute. */
const REFUSED_LINE_EVERY_MS = 60_000;

export interface GuardOptions {
  /**
   * Whether an address's connections are bounded (MAX_CONNECTIONS_PER_SOURCE); default: every
   * address's. A trusted proxy's are not: its connections carry many clients.
   */
  bounded?: (address: string) => boolean;
}

export interface ListenerLog {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface Listening {
  port: number;
  /** Stops listening and closes every connection, idle keep-alive ones included. Idempotent. */
  close(): Promise<void>;
}

/** Why listening failed, in one line that names the variable to change. */
export function listenProblem(
  err: unknown,
  host: string,
  port: number,
  names: { port: string; host: string } = { port: 'HTTP_PORT', host: 'HTTP_HOST' },
): string {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  const P = names.port;
  const H = names.host;
  switch (code) {
    case 'EADDRINUSE':
      return `${P} ${port} is already in use on ${host}: stop what listens there or choose another ${P}`;
    case 'EACCES':
      return `${P} ${port} on ${host} needs privileges this user does not have: choose a port from 1024 up`;
    case 'EADDRNOTAVAIL':
      return `${H} ${host} is not an address of this machine: use 0.0.0.0 (every interface) or 127.0.0.1`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${H} ${host} does not resolve to an address: use 0.0.0.0 (every interface) or 127.0.0.1`;
    default:
      return `could not listen on ${host} port ${port}: ${errorLine(err)}`;
  }
}

/**
 * A server for `handler` that bounds slow clients, connections (in all and per address) and
 * requests per socket, and answers malformed requests, resets and timeouts (400, 408, or the
 * socket closed): the client's business, never an error of ours.
 */
export function guardedServer(
  log: ListenerLog,
  what: string,
  handler: RequestListener,
  options: GuardOptions = {},
): Server {
  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CHECK_EVERY_MS,
    },
    handler,
  );
  server.maxRequestsPerSocket = MAX_REQUESTS_PER_SOCKET;
  admitConnections(server, log, what, options.bounded ?? (() => true));
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    log.debug({ error: errorLine(err), code: err.code }, `${what} client error`);
    if (socket.writable && !socket.destroyed && err.code !== 'ECONNRESET') {
      const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    } else {
      socket.destroy();
    }
  });
  return server;
}

/**
 * The connections a server keeps: each address's at most MAX_CONNECTIONS_PER_SOURCE (where
 * `bounded`), and MAX_CONNECTIONS in all; at either bound, room is made by closing the oldest one
 * (of that address, at its share) that is not in the middle of a request. Said in one line a
 * minute at most, with how many were refused and closed.
 */
function admitConnections(
  server: Server,
  log: ListenerLog,
  what: string,
  bounded: (address: string) => boolean,
): void {
  /** Open connections, oldest first, and how many requests are in progress on each. */
  const open = new Map<Socket, { source: string; requests: number }>();
  const bySource = new Map<string, number>();
  const said = { refused: 0, closed: 0, at: Number.NEGATIVE_INFINITY };
  const tell = (): void => {
    const now = Date.now();
    if (now - said.at < REFUSED_LINE_EVERY_MS) return;
    log.warn(
      {
        refused: said.refused,
        closedForRoom: said.closed,
        maxConnections: MAX_CONNECTIONS,
        maxPerSource: MAX_CONNECTIONS_PER_SOURCE,
      },
      `${what} listener at its connection cap: idle connections closed to make room, or new ones refused`,
    );
    said.at = now;
    said.refused = 0;
    said.closed = 0;
  };
  /** The oldest connection not in the middle of a request (of `source` only, when given). */
  const oldestIdle = (source?: string): Socket | undefined => {
    for (const [socket, state] of open) {
      if (state.requests === 0 && (source === undefined || state.source === source)) return socket;
    }
    return undefined;
  };
  /** Closes the oldest idle connection (of `source`) to make room; false when every one is busy. */
  const makeRoom = (source?: string): boolean => {
    const idle = oldestIdle(source);
    if (!idle) return false;
    forget(idle);
    idle.destroy();
    // A client's own idle connections closed past its share is routine (a keep-alive pool larger
    // than the share): only room made at the cap in all is told.
    if (source === undefined) said.closed += 1;
    return true;
  };
  const refuse = (socket: Socket): void => {
    said.refused += 1;
    tell();
    socket.destroy();
  };
  server.on('connection', (socket: Socket) => {
    const source = socket.remoteAddress ?? 'unknown';
    // An address at its share makes room among its own idle connections, or is refused.
    if ((bySource.get(source) ?? 0) >= MAX_CONNECTIONS_PER_SOURCE && bounded(source)) {
      if (!makeRoom(source)) return refuse(socket);
    }
    if (open.size >= MAX_CONNECTIONS) {
      if (!makeRoom()) return refuse(socket);
      tell();
    }
    open.set(socket, { source, requests: 0 });
    bySource.set(source, (bySource.get(source) ?? 0) + 1);
    socket.once('close', () => forget(socket));
  });
  function forget(socket: Socket): void {
    const state = open.get(socket);
    if (!state) return;
    open.delete(socket);
    const left = (bySource.get(state.source) ?? 1) - 1;
    if (left > 0) bySource.set(state.source, left);
    else bySource.delete(state.source);
  }
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = open.get(req.socket);
    if (!state) return;
    state.requests += 1;
    res.once('close', () => {
      state.requests -= 1;
    });
  });
}

/**
 * Listens; rejects with `listenError(err)` when it cannot. `close()` lets requests in progress
 * finish for `closeGraceMs`, then cuts them.
 */
export function listen(
  server: Server,
  options: {
    port: number;
    host: string;
    closeGraceMs: number;
    log: ListenerLog;
    what: string;
    listenError: (err: Error) => Error;
  },
): Promise<Listening> {
  const { log, what } = options;
  return new Promise<Listening>((resolve, reject) => {
    const onListenError = (err: Error): void => {
      log.error(
        { error: errorLine(err), host: options.host, port: options.port },
        `${what} could not listen`,
      );
      reject(options.listenError(err));
    };
    server.once('error', onListenError);
    server.listen(options.port, options.host, () => {
      server.off('error', onListenError);
      server.on('error', (err) => log.error({ error: errorLine(err) }, `${what} error`));
      const address = server.address() as AddressInfo;
      log.info({ address: address.address, port: address.port }, `${what} listening`);
      let closing: Promise<void> | undefined;
      const close = (): Promise<void> => {
        closing ??= new Promise<void>((done) => {
          const cut = setTimeout(() => server.closeAllConnections(), options.closeGraceMs);
          cut.unref();
          server.close(() => {
            clearTimeout(cut);
            done();
          });
          // Keep-alive sockets waiting for their next request would hold close() open.
          server.closeIdleConnections();
        });
        return closing;
      };
      resolve({ port: address.port, close });
    });
  });
}
