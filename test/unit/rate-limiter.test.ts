import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimitedError } from '../../src/directory/errors.js';
import { RateLimiter } from '../../src/directory/rate-limiter.js';

describe('RateLimiter', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A limiter whose grants are answered at once (settled), as the transport does on each answer. */
  function limiter(marginMs = 0): RateLimiter {
    const rl = new RateLimiter({
      global: { max: 5, windowMs: 5000 },
      routes: { max: 1, windowMs: 2000 },
      marginMs,
    });
    const acquire = rl.acquire.bind(rl);
    rl.acquire = (options) =>
      acquire(options).then((grant) => {
        grant.settle();
        return grant;
      });
    return rl;
  }

  it('never grants more than max in any sliding window', async () => {
    const rl = limiter();
    const grants: number[] = [];
    const all = Array.from({ length: 12 }, () => rl.acquire().then(() => grants.push(Date.now())));
    await vi.advanceTimersByTimeAsync(20_000);
    await Promise.all(all);
    expect(grants).toHaveLength(12);
    for (let i = 5; i < grants.length; i++) {
      expect(grants[i]! - grants[i - 5]!).toBeGreaterThanOrEqual(5000);
    }
    // and it goes as fast as allowed: 12 grants need two full windows, not more
    expect(grants.at(-1)! - grants[0]!).toBe(10_000);
  });

  it('applies the route bucket and the global bucket together', async () => {
    const rl = limiter();
    const grants: number[] = [];
    const all = Array.from({ length: 3 }, () =>
      rl.acquire({ buckets: ['server'] }).then(() => grants.push(Date.now() - 1_000_000)),
    );
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all(all);
    expect(grants).toEqual([0, 2000, 4000]);
  });

  it('adds the margin to every window', async () => {
    const rl = limiter(100);
    const grants: number[] = [];
    const all = Array.from({ length: 2 }, () =>
      rl.acquire({ buckets: ['stats'] }).then(() => grants.push(Date.now() - 1_000_000)),
    );
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all(all);
    expect(grants).toEqual([0, 2100]);
  });

  it('serves interactive requests before background ones queued earlier', async () => {
    const rl = limiter();
    const order: string[] = [];
    // Fill the /server bucket, then queue background before interactive.
    await rl.acquire({ buckets: ['server'] });
    const bg = rl
      .acquire({ buckets: ['server'], priority: 'background' })
      .then(() => order.push('background'));
    const fg = rl
      .acquire({ buckets: ['server'], priority: 'interactive' })
      .then(() => order.push('interactive'));
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all([bg, fg]);
    expect(order).toEqual(['interactive', 'background']);
  });

  it('does not let background traffic take the global budget an interactive up waits for', async () => {
    const rl = limiter();
    const times: Record<string, number> = {};
    await rl.acquire({ buckets: ['server'] }); // t=0: 1 global, server busy until 2000
    const up = rl.acquire({ buckets: ['server'] }).then(() => {
      times.up = Date.now() - 1_000_000;
    });
    const background = Array.from({ length: 4 }, (_, i) =>
      rl.acquire({ priority: 'background' }).then(() => {
        times[`bg${i}`] = Date.now() - 1_000_000;
      }),
    );
    await vi.advanceTimersByTimeAsync(20_000);
    await Promise.all([up, ...background]);
    expect(times.up).toBe(2000);
    for (let i = 0; i < 4; i++) expect(times[`bg${i}`]).toBeGreaterThanOrEqual(2000);
  });

  it('lets a look-up pass an up that waits on its route bucket (same class)', async () => {
    const rl = limiter();
    await rl.acquire({ buckets: ['server'] });
    let upAt = -1;
    let lookupAt = -1;
    const up = rl.acquire({ buckets: ['server'] }).then(() => {
      upAt = Date.now() - 1_000_000;
    });
    const lookup = rl.acquire().then(() => {
      lookupAt = Date.now() - 1_000_000;
    });
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all([up, lookup]);
    expect(lookupAt).toBe(0);
    expect(upAt).toBe(2000);
  });

  it('fails at once with the expected wait when the wait would pass the deadline', async () => {
    const rl = limiter();
    await rl.acquire({ buckets: ['server'] });
    const started = Date.now();
    const err = await rl
      .acquire({ buckets: ['server'], deadline: started + 500, method: 'postServer' })
      .catch((e: unknown) => e);
    expect(Date.now()).toBe(started);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(2000);
    expect((err as RateLimitedError).local).toBe(true);
    expect(rl.pending).toBe(0);
  });

  it('holds a bucket when penalized by a 429', async () => {
    const rl = limiter();
    rl.penalize('global', Date.now() + 3000);
    let at = -1;
    const p = rl.acquire().then(() => {
      at = Date.now() - 1_000_000;
    });
    await vi.advanceTimersByTimeAsync(5_000);
    await p;
    expect(at).toBe(3000);
  });

  it('rejects waiters on abort and on close', async () => {
    const rl = limiter();
    await rl.acquire({ buckets: ['server'] });
    const controller = new AbortController();
    const aborted = rl.acquire({ buckets: ['server'], signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new Error('gone'));
    expect(((await aborted) as Error).message).toBe('gone');
    const closed = rl.acquire({ buckets: ['server'] }).catch((e: unknown) => e);
    rl.close(new Error('closed'));
    expect(((await closed) as Error).message).toBe('closed');
  });

  it('measures the next window from when the answer came, not from when the request left', async () => {
    const rl = new RateLimiter({
      global: { max: 5, windowMs: 5000 },
      routes: { max: 1, windowMs: 2000 },
      marginMs: 0,
    });
    const first = await rl.acquire({ buckets: ['server'] });
    // The answer took 700 ms: the server may have counted the request as late as that.
    await vi.advanceTimersByTimeAsync(700);
    first.settle();
    let at = -1;
    const next = rl.acquire({ buckets: ['server'] }).then(() => {
      at = Date.now() - 1_000_000;
    });
    await vi.advanceTimersByTimeAsync(5_000);
    await next;
    expect(at).toBe(2700);
  });

  it('counts a request that has not been answered as current, however long it takes', async () => {
    const rl = new RateLimiter({
      global: { max: 5, windowMs: 5000 },
      routes: { max: 1, windowMs: 2000 },
      marginMs: 0,
    });
    const slow = await rl.acquire({ buckets: ['server'] });
    let at = -1;
    const next = rl.acquire({ buckets: ['server'] }).then((g) => {
      at = Date.now() - 1_000_000;
      g.settle();
    });
    // Still unanswered after 6 s: the server may count it any moment, so the next one waits.
    await vi.advanceTimersByTimeAsync(6_000);
    expect(at).toBe(-1);
    slow.settle();
    await vi.advanceTimersByTimeAsync(3_000);
    await next;
    expect(at).toBe(8_000);
  });

  it('estimates the wait without queueing', async () => {
    const rl = limiter();
    await rl.acquire({ buckets: ['server'] });
    expect(rl.estimateWait({ buckets: ['server'] })).toBe(2000);
    expect(rl.estimateWait()).toBe(0);
    expect(rl.pending).toBe(0);
  });
});
