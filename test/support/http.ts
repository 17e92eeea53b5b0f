/** One bounded HTTP request to a server on 127.0.0.1, the path sent byte for byte. */
import { type Agent, type IncomingHttpHeaders, request } from 'node:http';
import { LOCALHOST } from './local.js';

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface HttpGetOptions {
  /** Default GET. */
  method?: string;
  /** Default false: a connection of its own, closed after the answer. */
  agent?: Agent | false;
  /** Default 2 s. */
  timeoutMs?: number;
}

/**
 * A GET unless `method` says otherwise; resolves with the answer, or rejects with the socket's
 * error (ECONNREFUSED, ECONNRESET …) or on timeout.
 */
export function httpGet(port: number, path: string, options: HttpGetOptions = {}): Promise<HttpAnswer> {
  const { method = 'GET', agent = false, timeoutMs = 2_000 } = options;
  return new Promise<HttpAnswer>((done, fail) => {
    const req = request({ host: LOCALHOST, port, path, method, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', fail);
    });
    req.setTimeout(timeoutMs, () =>
      req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)),
    );
    req.on('error', fail);
    req.end();
  });
}
