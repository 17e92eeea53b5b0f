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

const server = createServer((client: Socket) => {
  const upstream = createConnection(targetPort, '127.0.0.1');
  // A request line cut between two chunks is read whole: the tail of the last chunk is kept.
  let tail = '';
  client.on('data', (chunk: Buffer) => {
    const at = performance.timeOrigin + performance.now();
    const text = tail + chunk.toString('latin1');
    for (const match of text.matchAll(CALLBACK)) {
      const id = match[1] as string;
      if (!seen.has(id)) seen.set(id, at);
    }
    tail = text.slice(-256);
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
