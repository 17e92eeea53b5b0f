/**
 * Graceful shutdown on SIGTERM / SIGINT: run the steps in order (each stops taking work, lets
 * what is in flight finish within its own bound), flush the logs and exit. Docker waits 10 s
 * after SIGTERM before it kills; the hard limit ends the process before that whatever hangs.
 * A second signal exits at once.
 */
import type { Logger } from '../log/logger.js';

/**
 * The longest a process of the bot takes from SIGTERM to its exit, whatever hangs: Docker's 10 s
 * less a margin. The deploy files give the container more than this before they kill it
 * (test/unit/deploy.test.ts checks them against it).
 */
export const SHUTDOWN_HARD_LIMIT_MS = 9_500;

export interface ShutdownOptions {
  logger: Logger;
  steps: ReadonlyArray<() => Promise<unknown>>;
  hardLimitMs: number;
  exit?: (code: number) => void;
}

export interface Shutdown {
  run(code: number): Promise<void>;
}

export function installShutdown(options: ShutdownOptions): Shutdown {
  const { logger } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let running: Promise<void> | undefined;

  const run = (code: number): Promise<void> => {
    if (running) return running;
    const started = Date.now();
    const hard = setTimeout(() => {
      logger.error({ elapsedMs: Date.now() - started }, 'shutdown took too long; exiting now');
      logger.flush();
      exit(code || 1);
    }, options.hardLimitMs);
    hard.unref();
    running = (async () => {
      logger.info('shutting down');
      for (const step of options.steps) {
        try {
          await step();
        } catch (err) {
          logger.error({ err }, 'error while shutting down');
        }
      }
      clearTimeout(hard);
      logger.info({ elapsedMs: Date.now() - started }, 'shut down');
      logger.flush();
      exit(code);
    })();
    return running;
  };

  const onSignal = (signal: NodeJS.Signals): void => {
    if (running) {
      logger.warn({ signal }, 'second signal: exiting at once');
      logger.flush();
      exit(1);
      return;
    }
    logger.info({ signal }, 'signal received');
    void run(0);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  process.on('unhandledRejection', (err) => {
    logger.error({ err }, 'unhandled rejection');
  });
  return { run };
}
