/**
 * Charts as PNG, drawn on a thread of their own (chart-worker.ts): a render costs 20 to 60 ms of
 * CPU, which on the bot's event loop would hold every interaction back that long. One thread,
 * started at the first chart and kept; renders queue on it. A render that fails or takes longer
 * than RENDER_TIMEOUT_MS rejects (the answer then goes without its image); a thread that dies is
 * started again at the next chart.
 */
import { Worker } from 'node:worker_threads';
import { threadScript } from '../threads/script.js';
import type { ChartRequest } from './chart-spec.js';

export type { ChartRequest } from './chart-spec.js';

const RENDER_TIMEOUT_MS = 5_000;

interface Pending {
  resolve: (png: Buffer) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

export class ChartRenderer {
  #worker: Worker | undefined;
  #next = 0;
  readonly #pending = new Map<number, Pending>();
  #closed = false;

  render(request: ChartRequest): Promise<Buffer> {
    if (this.#closed) return Promise.reject(new Error('the chart renderer is closed'));
    const worker = this.#thread();
    const id = ++this.#next;
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`the chart took longer than ${RENDER_TIMEOUT_MS} ms`));
      }, RENDER_TIMEOUT_MS);
      timer.unref();
      this.#pending.set(id, { resolve, reject, timer });
      worker.postMessage({ id, request });
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#fail(new Error('the chart renderer is closed'));
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }

  #thread(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(threadScript(import.meta.url, 'src/render', 'chart-worker.js'));
    // Idle, the thread keeps nothing alive: the bot's own shutdown decides when to go.
    worker.unref();
    worker.on('message', (message: { id: number; png?: Uint8Array; error?: string }) => {
      const pending = this.#pending.get(message.id);
      if (!pending) return;
      this.#pending.delete(message.id);
      clearTimeout(pending.timer);
      if (message.png)
        pending.resolve(Buffer.from(message.png.buffer, message.png.byteOffset, message.png.byteLength));
      else pending.reject(new Error(`the chart could not be drawn: ${message.error ?? 'no image'}`));
    });
    const gone = (err: Error): void => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#fail(err);
    };
    worker.on('error', gone);
    worker.on('exit', (code) => gone(new Error(`the chart thread exited (${code})`)));
    this.#worker = worker;
    return worker;
  }

  #fail(err: Error): void {
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      pending.reject(err);
      this.#pending.delete(id);
    }
  }
}
