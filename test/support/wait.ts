/**
 * Waiting helpers shared by the test folders that drive real sockets and processes, and by the
 * benchmark (no vitest here).
 */

/**
 * How long a start-up may take (a bot's login and READY, a child's port or 'listening' line, a
 * worker's first message) before it counts as failed: generous, so that a busy machine is slow
 * rather than failing. A start-up that fails usually says so at once (an error, an exit), and
 * every wait for one names what it waited for and what the process wrote.
 */
export const START_BOUND_MS = 60_000;

export function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** Rejects with `timed out after … waiting for <what>` if the promise does not settle in time. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Polls until `probe` returns something other than undefined; throws after `timeoutMs`, naming
 * `what` and the last error the probe threw (a probe that throws is tried again).
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  what: string,
  everyMs = 50,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (performance.now() >= deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await sleep(everyMs);
  }
}
