/** The one bounded wait (src/time/bounded.ts): a REST call, a shutdown step, the interactions' drain. */
import { describe, expect, it } from 'vitest';
import { bounded, doneWithin, TimedOutError } from '../../src/time/bounded.js';

const never = new Promise<never>(() => {});
const later = <T>(ms: number, value: T): Promise<T> =>
  new Promise((resolve) => setTimeout(resolve, ms, value));

describe('bounded', () => {
  it('gives the value of work done in time', async () => {
    expect(await bounded(() => later(1, 'ok'), 1_000)).toBe('ok');
  });

  it('rejects with TimedOutError once the time is up, and aborts the work', async () => {
    let signal: AbortSignal | undefined;
    const started = Date.now();
    await expect(
      bounded((s) => {
        signal = s;
        return never;
      }, 30),
    ).rejects.toBeInstanceOf(TimedOutError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(TimedOutError);
  });

  it('swallows a failure of the work left behind (no unhandled rejection)', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      await expect(
        bounded(() => later(20, null).then(() => Promise.reject(new Error('late'))), 5),
      ).rejects.toBeInstanceOf(TimedOutError);
      await later(40, null);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('doneWithin', () => {
  it('is true for work done in time and false for work that hangs', async () => {
    expect(await doneWithin(later(1, 'x'), 1_000)).toBe(true);
    expect(await doneWithin(never, 20)).toBe(false);
  });

  it('rejects as the work does when it fails in time', async () => {
    await expect(doneWithin(Promise.reject(new Error('refused')), 1_000)).rejects.toThrow('refused');
  });
});
