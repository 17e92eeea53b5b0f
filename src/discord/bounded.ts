/**
 * A REST call to Discord bounded in time. Aborting is not enough on its own: discord.js notices
 * the signal only between its steps, not while a request waits for its global limit (50
 * requests/s), and under a burst that wait lasted 10 s. So the caller gets a rejection once `ms`
 * have passed, whatever the work does then, and the work is aborted as soon as it can be.
 */
export async function bounded<T>(work: (signal: AbortSignal) => Promise<T>, ms: number): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new Error('timed out');
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
