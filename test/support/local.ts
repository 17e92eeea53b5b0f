/**
 * 127.0.0.1, the one address the tests and the benchmark talk to, and the guards that keep them
 * there. Imported by bench/ too: nothing here may import vitest.
 */
import { createServer } from 'node:net';

export const LOCALHOST = '127.0.0.1';

/** Throws unless `url` is set and on 127.0.0.1: checked before anything is pointed at it. */
export function assertLocal(url: string | undefined, what: string): void {
  if (url === undefined) throw new Error(`${what} is not set`);
  const host = new URL(url).hostname;
  if (host !== LOCALHOST) throw new Error(`${what} must be on ${LOCALHOST}, got ${host}`);
}

/** A port on 127.0.0.1 nothing listens on just now (given back at once: another process could take it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOCALHOST, resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** A 127.0.0.1 address where nothing listens (connection refused). */
export async function closedPortUrl(): Promise<string> {
  return `http://${LOCALHOST}:${await freePort()}`;
}
