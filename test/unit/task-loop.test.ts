import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimitedError } from '../../src/directory/errors.js';
import { failureOf } from '../../src/tasks/failure.js';
import { ABORT_GRACE_MS, TaskLoop } from '../../src/tasks/loop.js';
import {
  FAILURE_WARN_EVERY_MS,
  PERIODIC_STOP_TIMEOUT_MS,
  PeriodicTask,
  type PeriodicTaskOptions,
} from '../../src/tasks/periodic.js';
import { type BackgroundTask, startTasks, stopTasks } from '../../src/tasks/tasks.js';

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

describe('PeriodicTask', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function periodic(run: PeriodicTaskOptions['run'], options: Partial<PeriodicTaskOptions> = {}) {
    const lines: LogLine[] = [];
    const logger = pino(
      { level: 'debug', base: null },
      { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
    );
    const task = new PeriodicTask({
      name: 'test job',
      everyMs: 1_000,
      run,
      failure: 'the job failed',
      logger,
      ...options,
    });
    return { task, lines };
  }

  /** A run that ends only when told to; counts the runs and the most at once. */
  function gatedRuns() {
    const seen = { runs: 0, inFlight: 0, most: 0, signals: [] as AbortSignal[] };
    const ends: (() => void)[] = [];
    const run = (signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        seen.runs += 1;
        seen.inFlight += 1;
        seen.most = Math.max(seen.most, seen.inFlight);
        seen.signals.push(signal);
        ends.push(() => {
          seen.inFlight -= 1;
          resolve();
        });
      });
    const endAll = () => {
      for (const end of ends.splice(0)) end();
    };
    return { run, seen, endAll };
  }

  it('runs at once, then every everyMs; or first after firstDelayMs; nothing before start or after stop', async () => {
    const at: number[] = [];
    const { task } = periodic(() => void at.push(Date.now() - 1_000_000));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(at).toEqual([]);
    expect(task.start()).toBe(true);
    expect(task.start()).toBe(false);
    await vi.advanceTimersByTimeAsync(2_500);
    expect(at).toEqual([5_000, 6_000, 7_000]);
    await task.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(at).toEqual([5_000, 6_000, 7_000]);
    expect(vi.getTimerCount()).toBe(0);
    await task.runNow();
    expect(task.start()).toBe(false);
    expect(at).toHaveLength(3);

    const later: number[] = [];
    const delayed = periodic(() => void later.push(Date.now() - 1_000_000), { firstDelayMs: 300 }).task;
    delayed.start();
    await vi.advanceTimersByTimeAsync(1_300);
    expect(later).toEqual([17_800, 18_800]);
    await delayed.stop();
  });

  it('never runs twice at once: a tick during a long run is skipped, runNow() follows the run in flight', async () => {
    const { run, seen, endAll } = gatedRuns();
    const { task } = periodic(run);
    task.start();
    await vi.advanceTimersByTimeAsync(3_500);
    // The first run is still going: the ticks at 1, 2 and 3 s found it busy.
    expect(seen).toMatchObject({ runs: 1, most: 1 });
    const first = task.runNow();
    const second = task.runNow();
    endAll();
    await vi.advanceTimersByTimeAsync(0);
    // Both asked for the one run after the first.
    expect(seen).toMatchObject({ runs: 2, inFlight: 1, most: 1 });
    endAll();
    await Promise.all([first, second]);
    // The next tick (at 4 s) runs again, on the same cadence.
    await vi.advanceTimersByTimeAsync(500);
    expect(seen).toMatchObject({ runs: 3, most: 1 });
    endAll();
    await task.stop();
  });

  it('stop() is bounded: a run that hangs is cancelled, then given up; nothing runs after', async () => {
    const runs: AbortSignal[] = [];
    // Ignores its signal: it never ends.
    const { task } = periodic((signal) => {
      runs.push(signal);
      return new Promise<void>(() => undefined);
    });
    task.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(runs).toHaveLength(1);
    let stopped = false;
    const stopping = task.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(PERIODIC_STOP_TIMEOUT_MS - 1);
    expect(runs[0]!.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs[0]!.aborted).toBe(true);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(ABORT_GRACE_MS);
    await stopping;
    expect(stopped).toBe(true);
    expect(task.state).toBe('stopped');
    await task.runNow();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs).toHaveLength(1);
  });

  it('a run that throws is logged, and the next comes as usual; a failure that goes on, at most once a minute', async () => {
    let failing = true;
    let runs = 0;
    const { task, lines } = periodic(
      () => {
        runs += 1;
        if (!failing) return Promise.resolve();
        // Thrown at once and rejected, alike.
        if (runs % 2 === 0) throw new Error('store down');
        return Promise.reject(new Error('store down'));
      },
      { everyMs: 10_000 },
    );
    task.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(lines).toEqual([
      expect.objectContaining({ level: LEVEL.warn, msg: 'the job failed', err: 'Error: store down' }),
    ]);
    expect(lines[0]).not.toHaveProperty('failures');
    // Five more failures within the minute: no line.
    await vi.advanceTimersByTimeAsync(FAILURE_WARN_EVERY_MS - 10_000);
    expect(runs).toBe(6);
    expect(lines).toHaveLength(1);
    // The minute is over: one line, with how many failed in a row.
    await vi.advanceTimersByTimeAsync(10_000);
    expect(runs).toBe(7);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({ level: LEVEL.warn, msg: 'the job failed', failures: 7 });
    // It recovers: the runs go on, quietly.
    failing = false;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(runs).toBe(10);
    expect(lines).toHaveLength(2);
    expect(lines.some((l) => l.msg.includes('internal error'))).toBe(false);
    await task.stop();
  });
});

describe('startTasks and stopTasks', () => {
  it('starts every task in order though one throws; stops them all at once though one rejects', async () => {
    const lines: LogLine[] = [];
    const logger = pino(
      { level: 'debug', base: null },
      { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
    );
    const events: string[] = [];
    const ends: (() => void)[] = [];
    const task = (name: string, broken = false): BackgroundTask => ({
      name,
      start: () => {
        events.push(`start ${name}`);
        if (broken) throw new Error(`${name} broke`);
      },
      stop: () => {
        events.push(`stop ${name}`);
        if (broken) return Promise.reject(new Error(`${name} broke`));
        return new Promise((resolve) => ends.push(() => resolve()));
      },
    });
    const tasks = [task('a'), task('b', true), task('c')];
    startTasks(tasks, logger);
    expect(events).toEqual(['start a', 'start b', 'start c']);
    expect(lines).toEqual([
      expect.objectContaining({ level: LEVEL.error, task: 'b', msg: 'a background task could not start' }),
    ]);
    let stopped = false;
    const stopping = stopTasks(tasks, logger).then(() => {
      stopped = true;
    });
    // Every stop has begun before any has ended.
    expect(events.slice(3)).toEqual(['stop a', 'stop b', 'stop c']);
    await Promise.resolve();
    expect(stopped).toBe(false);
    for (const end of ends) end();
    await stopping;
    expect(lines[1]).toMatchObject({ level: LEVEL.error, task: 'b', msg: 'a background task did not stop' });
  });
});
