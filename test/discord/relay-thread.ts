/**
 * The callback relay's thread (relay.ts): passes bytes both ways between each client connection
 * and the stand-in's REST port, and notes when the first bytes of each interaction's callback
 * came through, on this thread's clock (performance.timeOrigin + performance.now(), comparable
 * across threads), whatever the stand-in's own thread is doing.
 */
import { createConnection, createServer, type Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

const CALLBACK = /POST [^ ]*\/interactions\/(\d+)\/[^ ]*\/callback /g;
const port = parentPort;
const { targetPort } = workerData as { targetPort: number };
const seen = new Map<string, number>();

/** Looked for in the bytes first: most of what passes (edits, look-ups) is not read as text at all. */
const MARK = Buffer.from('/callback ');
/** A request line cut between two chunks is read whole: this much of the last chunk is kept. */
const TAIL = 256;

const server = createServer((client: Socket) => {
  const upstream = createConnection(targetPort, '127.0.0.1');
  let tail = Buffer.alloc(0);
  client.on('data', (chunk: Buffer) => {
    const at = performance.timeOrigin + performance.now();
    const bytes = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
    if (bytes.includes(MARK)) {
      for (const match of bytes.toString('latin1').matchAll(CALLBACK)) {
        const id = match[1] as string;
        if (!seen.has(id)) seen.set(id, at);
      }
    }
    tail = Buffer.from(bytes.subarray(Math.max(0, bytes.length - TAIL)));
    upstream.write(chunk);
  });
  upstream.on('data', (chunk: Buffer) => client.write(chunk));
  const end = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', end).on('close', end);
  upstream.on('error', end).on('close', end);
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  port?.postMessage({ port: typeof address === 'object' && address ? address.port : 0 });
});
port?.on('message', (ids: string[]) => {
  const times: Record<string, number> = {};
  for (const id of ids) {
    const at = seen.get(id);
    if (at !== undefined) times[id] = at;
    seen.delete(id);
  }
  port.postMessage(times);
});
