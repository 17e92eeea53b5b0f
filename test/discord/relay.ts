/**
 * A TCP relay in front of the stand-in's REST, on a thread of its own, that notes when each
 * interaction's callback reached it. The stand-in takes a request's time when its own event loop
 * reads it; with the stand-in busy (writing a burst's dispatches, answering the requests before),
 * that time says more of the stand-in than of the bot. The relay's does not wait for it: it is
 * when the callback reached "Discord", as far as this machine can tell.
 */
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { threadScript } from '../../src/threads/script.js';

export interface CallbackRelay {
  /** The REST base to give the bot, with the stand-in's path (`/api`). */
  url: string;
  /**
   * When each of these interactions' callback first came through (ms, performance.timeOrigin +
   * performance.now()); forgotten once asked for. An id missing got no callback through here.
   */
  callbacks(ids: readonly string[]): Promise<Record<string, number>>;
  close(): Promise<void>;
}

export async function startCallbackRelay(restUrl: string): Promise<CallbackRelay> {
  const target = new URL(restUrl);
  const worker = new Worker(threadScript(import.meta.url, 'test/discord', 'relay-thread.js'), {
    workerData: { targetPort: Number(target.port) },
  });
  const [{ port }] = (await once(worker, 'message')) as [{ port: number }];
  // One question at a time: the answers come back in order.
  let turn: Promise<unknown> = Promise.resolve();
  return {
    url: `http://127.0.0.1:${port}${target.pathname.replace(/\/+$/, '')}`,
    callbacks(ids) {
      const answer = turn.then(async () => {
        worker.postMessage([...ids]);
        const [times] = (await once(worker, 'message')) as [Record<string, number>];
        return times;
      });
      turn = answer.catch(() => undefined);
      return answer;
    },
    async close() {
      await worker.terminate();
    },
  };
}
