/**
 * The list of background tasks a process runs: what the composition root (app/tasks.ts,
 * app/services.ts, app/sharded.ts) starts once the bot is connected and stops at shutdown.
 */
import type { Logger } from '../log/logger.js';
import { failureOf } from './failure.js';
import { settle } from './loop.js';

/**
 * What the composition root (app/tasks.ts, app/services.ts, app/sharded.ts) lists of a background
 * task: it starts them all once the bot is connected and stops them all at shutdown.
 */
export interface BackgroundTask {
  readonly name: string;
  /** Idempotent: a task that must run sooner (the host's heartbeat) may have been started already. */
  start(): void;
  /** Bounded, and never rejects. */
  stop(): Promise<void>;
}

/** A task that keeps its own start and stop (the reminders, the announcer), under a name for the list. */
export function backgroundTask(
  name: string,
  task: { start?(): void; stop(): Promise<void> },
): BackgroundTask {
  return { name, start: () => task.start?.(), stop: () => task.stop() };
}

/** Starts the tasks in the order listed; one whose start() throws is logged, and the others start. */
export function startTasks(tasks: readonly BackgroundTask[], logger: Logger): void {
  for (const task of tasks) {
    try {
      task.start();
    } catch (err) {
      logger.error({ task: task.name, error: failureOf(err).message }, 'a background task could not start');
    }
  }
}

/** Stops every task at once, each within its own bound. Never rejects. */
export async function stopTasks(tasks: readonly BackgroundTask[], logger: Logger): Promise<void> {
  await Promise.all(
    tasks.map((task) =>
      settle(() => task.stop()).then((stopped) => {
        if (!stopped.ok) {
          logger.error(
            { task: task.name, error: failureOf(stopped.error).message },
            'a background task did not stop',
          );
        }
      }),
    ),
  );
}
