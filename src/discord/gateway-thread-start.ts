/**
 * The gateway's thread (gateway-thread.ts), started before anything else of the bot: its modules
 * (@discordjs/ws and what it needs, about half a second on two cores) load on the other core
 * while the main thread loads the bot's and opens the store, not after, when a restart's shards
 * wait to resume (bench scenario 12). It gets its data as its first message, from the strategy
 * that takes it at login (gateway-thread-strategy.ts). This module imports nothing heavy: the
 * entry point (app/main.ts) starts the thread before it loads the rest.
 */
import { Worker } from 'node:worker_threads';
import { threadScript } from '../threads/script.js';

/** The gateway's thread, started without its data: it waits for an `init` message. */
export function startGatewayThread(): Worker {
  return new Worker(threadScript(import.meta.url, 'src/discord', 'gateway-thread.js'));
}

export interface PrestartedThread {
  /** The thread, once, if it is still running; undefined otherwise (the spawn starts one). */
  take(): Worker | undefined;
  /** Ends it if nobody took it (the bot stopped before logging in). */
  close(): Promise<void>;
}

/**
 * Starts the gateway's thread now, to be taken by the strategy's spawn at login. It keeps no
 * process alive until taken, and a thread that failed meanwhile is only not taken.
 */
export function prestartGatewayThread(): PrestartedThread {
  const worker = startGatewayThread();
  worker.unref();
  let usable = true;
  const lost = (): void => {
    usable = false;
  };
  worker.on('error', lost).on('exit', lost);
  let taken = false;
  return {
    take() {
      if (taken) return undefined;
      taken = true;
      worker.off('error', lost).off('exit', lost);
      if (!usable) return undefined;
      worker.ref();
      return worker;
    },
    async close() {
      if (taken) return;
      taken = true;
      await worker.terminate();
    },
  };
}
