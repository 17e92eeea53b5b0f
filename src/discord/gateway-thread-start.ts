/**
 * The gateway's thread (gateway-thread.ts), started as the bot is built (app/bot.ts): its modules
 * (@discordjs/ws and what it needs, about half a second on two cores) load on the other core
 * while the main thread opens the store and builds the bot, not after, when a restart's shards
 * wait to resume (bench scenario 12). It gets its data as its first message, from the strategy
 * that takes it at login (gateway-thread-strategy.ts).
 *
 * Not earlier: started by the entry point before the bot's modules load, it made the process's
 * exit 100 to 200 ms slower (a second SIGTERM's "at once"; measured, cause not found), for 0.1 s
 * less of a restart.
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
