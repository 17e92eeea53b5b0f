/**
 * Waiting for something at most so long: the one helper for a Discord REST call, a shutdown step
 * that may hang on what it waits for, and the drain of the interactions still running.
 */

/** The rejection of `bounded` once its time is up. */
export class TimedOutError extends Error {
  override readonly name = 'TimedOutError';
  constructor() {
    super('timed out');
  }
}

/**
 * `work` bounded in time: the caller gets a TimedOutError once `ms` have passed, whatever the work
 * does then, and the signal handed to the work is aborted.
 *
 * A Discord REST call is not given the signal. @discordjs/rest (2.6.3) notices it only once the
 * request has waited its turn at the global limit (50 requests a second), and then takes the abort
 * for a failure worth trying again: one abandoned request took up to four of the 50 slots, sending
 * nothing. Left to run, it takes one, and its answer is dropped.
 */
export async function bounded<T>(work: (signal: AbortSignal) => Promise<T>, ms: number): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new TimedOutError();
      controller.abort(err);
      reject(err);
    }, ms);
  });
  try {
    // A late failure of the work left behind is the race's to swallow, not an unhandled rejection.
    return await Promise.race([work(controller.signal), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether `work` was done within `ms` (it rejects as `work` does, if in time): for what may hang
 * on what it waits for (a socket that never answers) and must not hold the rest.
 */
export async function doneWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  try {
    await bounded(() => work, ms);
    return true;
  } catch (err) {
    if (err instanceof TimedOutError) return false;
    throw err;
  }
}
