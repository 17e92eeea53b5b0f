/**
 * What our two HTTP listeners (the operations endpoint, the webhook receiver) share: the bounds on
 * a slow client and on connections, the answer to a malformed request, and listening with a close
 * that does not wait for idle keep-alive connections. Plain node:http; nothing a client sends can
 * throw out of here.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
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
/** Connections open at once; past them a new one is closed straight away (before file descriptors run out). */
export const MAX_CONNECTIONS = 512;
/** Requests on one keep-alive socket; the last one is answered with `Connection: close`. */
export const MAX_REQUESTS_PER_SOCKET = 1_000;
/** Connections refused at the cap: one line at most every minute. */
const REFUSED_LINE_EVERY_MS = 60_000;

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
 * A server for `handler` that bounds slow clients, connections and requests per socket, and answers
 * malformed requests, resets and timeouts (400, 408, or the socket closed): the client's business,
 * never an error of ours.
 */
export function guardedServer(log: ListenerLog, what: string, handler: RequestListener): Server {
  const server = createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CHECK_EVERY_MS,
    },
    handler,
  );
  server.maxConnections = MAX_CONNECTIONS;
  server.maxRequestsPerSocket = MAX_REQUESTS_PER_SOCKET;
  let refused = 0;
  let saidAt = Number.NEGATIVE_INFINITY;
  server.on('drop', () => {
    refused += 1;
    const now = Date.now();
    if (now - saidAt < REFUSED_LINE_EVERY_MS) return;
    log.warn(
      { refused, maxConnections: MAX_CONNECTIONS },
      `${what} listener at its connection cap: new connections refused`,
    );
    saidAt = now;
    refused = 0;
  });
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
