/**
 * A directory that misbehaves on purpose: a node:http server on 127.0.0.1 that answers with
 * whatever the test's handler writes and records what it was asked. A drip stops when the
 * client goes away, and close() ends every connection, so nothing outlives a test.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface HostileServer {
  /** 'http://127.0.0.1:PORT'. */
  url: string;
  /** `METHOD /path` of every request, in order of arrival. */
  requests: string[];
  handle(handler: Handler): void;
  close(): Promise<void>;
}

export async function startHostileServer(): Promise<HostileServer> {
  let handler: Handler = (_req, res) => res.writeHead(500).end();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    // The request's own body is not needed; reading it lets a POST's answer start.
    req.resume();
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    handle(next) {
      handler = next;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A 200 whose head comes at once and whose body comes one byte every `everyMs` for as long as
 * the client listens: spaces, which a JSON reader would skip, so only a deadline ends it.
 */
export function drip(res: ServerResponse, options: { everyMs?: number; contentLength?: number } = {}): void {
  const headers: Record<string, string | number> = { 'content-type': 'application/json' };
  if (options.contentLength !== undefined) headers['content-length'] = options.contentLength;
  res.writeHead(200, headers);
  res.write(' ');
  const timer = setInterval(() => res.write(' '), options.everyMs ?? 400);
  res.on('close', () => clearInterval(timer));
}

/** A 429 in the directory's usual shape that asks to wait `seconds`. */
export function tooManyRequests(res: ServerResponse, seconds: number): void {
  res
    .writeHead(429, { 'content-type': 'application/json', 'retry-after': String(seconds) })
    .end(JSON.stringify({ error: { code: 429, message: 'Too many requests' } }));
}
