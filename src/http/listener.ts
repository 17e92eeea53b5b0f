/**
 * What our two HTTP listeners (the operations endpoint, the webhook receiver) share: the bounds on
 * a slow client, the answer to a malformed request, and listening with a close that does not wait
 * for idle keep-alive connections. Plain node:http; nothing a client sends can throw out of here.
 */
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { errorLine } from '../log/error-line.js';

/** A request's head must come within this, the whole request within REQUEST_TIMEOUT_MS. */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 15_000;

export interface ListenerLog {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
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
 * Bounds slow clients and answers malformed requests, resets and timeouts (400, 408, or the
 * socket closed): the client's business, never an error of ours.
 */
export function guard(server: Server, log: ListenerLog, what: string): void {
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    log.debug({ error: errorLine(err), code: err.code }, `${what} client error`);
    if (socket.writable && !socket.destroyed && err.code !== 'ECONNRESET') {
      const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    } else {
      socket.destroy();
    }
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
