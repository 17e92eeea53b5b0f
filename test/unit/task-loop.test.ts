import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimitedError } from '../../src/directory/errors.js';
import { failureOf } from '../../src/tasks/failure.js';
import { ABORT_GRACE_MS, TaskLoop } from '../../src/tasks/loop.js';

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

const LEVEL = { warn: 40, error: 50 } as const;

function setup(stopTimeoutMs = 5_000) {
  const lines: LogLine[] = [];
  const logger = pino(
    { level: 'debug', base: null },
    { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  );
  const stopped: boolean[] = [];
  const loop = new TaskLoop({
    name: 'test task',
    logger,
    stopTimeoutMs,
    onStopped: (unanswered) => stopped.push(unanswered),
  });
  return { lines, loop, stopped };
}

/** A request that settles only when told to, and notes whether it was cancelled. */
function hangingRequest(honourAbort: boolean) {
  const seen: { signal?: AbortSignal } = {};
  const request = (signal: AbortSignal): Promise<string> =>
    new Promise((_resolve, reject) => {
      seen.signal = signal;
      if (honourAbort) signal.addEventListener('abort', () => reject(new Error('cancelled')));
    });
  return { request, seen };
}

describe('TaskLoop', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('has one timer slot: a later schedule replaces the earlier; nothing fires before start or after stop', async () => {
    const { loop, lines } = setup();
    const fired: string[] = [];
    loop.schedule(10, () => fired.push('idle'));
    await vi.advanceTimersByTimeAsync(10);
    expect(fired).toEqual([]);
    loop.start();
    loop.schedule(10, () => fired.push('first'));
    loop.schedule(20, () => fired.push('second'));
    await vi.advanceTimersByTimeAsync(20);
    expect(fired).toEqual(['second']);
    loop.schedule(10, () => {
      throw new Error('boom');
    });
    await vi.advanceTimersByTimeAsync(10);
    expect(lines.find((l) => l.msg === 'test task internal error')).toMatchObject({
      level: LEVEL.error,
      where: 'timer',
    });
    loop.schedule(10, () => fired.push('after stop'));
    await loop.stop();
    await vi.advanceTimersByTimeAsync(100);
    expect(fired).toEqual(['second']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('cancels an attempt at its timeout and gives it up a grace later if it does not let go', async () => {
    const { loop } = setup();
    const honours = hangingRequest(true);
    const cancelled = loop.attempt(honours.request, 1_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(honours.seen.signal?.aborted).toBe(true);
    await expect(cancelled).resolves.toMatchObject({ ok: false, abandoned: false });

    const ignores = hangingRequest(false);
    const abandoned = loop.attempt(ignores.request, 1_000);
    await vi.advanceTimersByTimeAsync(1_000 + ABORT_GRACE_MS);
    await expect(abandoned).resolves.toEqual({ ok: false, abandoned: true });
  });

  it('an attempt that throws at once is a failure, not an exception', async () => {
    const { loop } = setup();
    const answer = await loop.attempt(() => {
      throw new TypeError('boom');
    });
    expect(answer).toMatchObject({ ok: false, abandoned: false, error: expect.any(TypeError) });
  });

  it('stop() is bounded: waits for the job, cancels its request, gives it up after a grace', async () => {
    const { loop, stopped } = setup(2_000);
    loop.start();
    const { request, seen } = hangingRequest(false);
    // The job never ends: its request ignores the cancel.
    void loop.run(() => loop.attempt(request));
    expect(loop.busy).toBe(true);
    const stopping = loop.stop();
    expect(loop.stop()).toBe(stopping);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(seen.signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(seen.signal?.aborted).toBe(true);
    expect(stopped).toEqual([]);
    await vi.advanceTimersByTimeAsync(ABORT_GRACE_MS);
    await stopping;
    expect(stopped).toEqual([true]);
    expect(loop.state).toBe('stopped');
  });

  it('stop() cuts a sleep short and lets a job that ends in time end', async () => {
    const { loop, stopped } = setup();
    loop.start();
    const job = loop.run(() => loop.sleep(60_000));
    await loop.stop();
    await expect(job).resolves.toBe(false);
    expect(loop.busy).toBe(false);
    expect(stopped).toEqual([false]);
    await expect(loop.sleep(10)).resolves.toBe(false);
  });

  it('waits a Retry-After as asked up to the cap, the cap beyond it, in one warn line', () => {
    const { loop, lines } = setup();
    const asked = (retryAfterMs?: number) =>
      failureOf(new RateLimitedError('Too many requests', { status: 429, retryAfterMs }));
    expect(loop.retryAfter(asked(7_000), 60_000)).toBe(7_000);
    expect(loop.retryAfter(asked(undefined), 60_000)).toBeUndefined();
    expect(loop.retryAfter(asked(Number.NaN), 60_000)).toBeUndefined();
    expect(lines).toEqual([]);
    expect(loop.retryAfter(asked(86_400_000), 60_000)).toBe(60_000);
    expect(lines).toEqual([
      expect.objectContaining({ level: LEVEL.warn, retryAfterMs: 86_400_000, capMs: 60_000, status: 429 }),
    ]);
    expect(lines[0]!.msg).toContain('86400000 ms');
  });

  it('a hook that throws is logged, not let through', () => {
    const { loop, lines } = setup();
    expect(() =>
      loop.callHook(
        'onThing',
        () => {
          throw new Error('metrics are down');
        },
        { id: 1 },
      ),
    ).not.toThrow();
    expect(lines).toEqual([
      expect.objectContaining({
        level: LEVEL.warn,
        msg: 'onThing hook threw',
        id: 1,
        error: 'Error: metrics are down',
      }),
    ]);
  });
});
