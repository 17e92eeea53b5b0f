/**
 * The gateway's thread (gateway-thread.ts), started first thing by the entry point (app/main.ts)
 * or as the bot is built (app/bot.ts): its modules (@discordjs/ws and what it needs, about half a
 * second on two cores) load on the other core while the main thread loads the bot's and opens the
 * store, not after. It gets its data as its first message: from the strategy that takes it at
 * login (gateway-thread-strategy.ts), or, on a restart, the saved sessions to resume at once
 * (app/early-resume.ts), its data following at login.
 */
import { Worker } from 'node:worker_threads';
import { threadScript } from '../threads/script.js';
import type { EarlyResume, ToGatewayThread } from './gateway-thread-protocol.js';

/** The gateway's thread, started without its data: it waits for an `init` message. */
export function startGatewayThread(): Worker {
  return new Worker(threadScript(import.meta.url, 'src/gateway', 'gateway-thread.js'));
}

export interface PrestartedThread {
  /**
   * Resume these sessions now, before the strategy takes the thread (early-resume.ts): its
   * shards connect while the main thread loads the bot, and it keeps what it receives until the
   * strategy takes it (GatewayThreadStrategy: `attach`, then `go`). Once, before take().
   */
  resume(resume: EarlyResume): void;
  /**
   * The thread, once, if it is still running; undefined otherwise (the spawn starts one).
   * `early`: it is resuming these shards already (resume), and takes `attach`, not `init`.
   */
  take(): { worker: Worker; early?: Pick<EarlyResume, 'shardIds' | 'shardCount'> } | undefined;
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
  let early: Pick<EarlyResume, 'shardIds' | 'shardCount'> | undefined;
  return {
    resume(resume) {
      if (taken || early) throw new Error('the gateway thread is taken or resuming already');
      early = { shardIds: resume.shardIds, shardCount: resume.shardCount };
      worker.postMessage({ op: 'early', resume } satisfies ToGatewayThread);
    },
    take() {
      if (taken) return undefined;
      taken = true;
      worker.off('error', lost).off('exit', lost);
      if (!usable) return undefined;
      worker.ref();
      return early ? { worker, early } : { worker };
    },
    async close() {
      if (taken) return;
      taken = true;
      await worker.terminate();
    },
  };
}

/** Whether a thread resuming `early`'s shards runs exactly these. */
export function resumesShards(
  early: Pick<EarlyResume, 'shardIds' | 'shardCount'>,
  shardIds: readonly number[],
  shardCount: number,
): boolean {
  return (
    early.shardCount === shardCount &&
    early.shardIds.length === shardIds.length &&
    early.shardIds.every((id, i) => id === shardIds[i])
  );
}
