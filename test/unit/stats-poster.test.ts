import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RequestOptions } from '../../src/directory/client.js';
import {
  BadRequestError,
  ForbiddenError,
  InvalidResponseError,
  RateLimitedError,
  TokenKindNotAcceptedError,
  UnauthorizedError,
  UnavailableError,
} from '../../src/directory/errors.js';
import type { BotStatsUpdate, OkResult } from '../../src/directory/types.js';
import {
  type StatsGate,
  type StatsOutcome,
  type StatsOutcomeInfo,
  StatsPoster,
  type StatsPosterOptions,
  type StatsSnapshot,
} from '../../src/tasks/stats-poster.js';
import { inspectSnapshot, totals } from '../../src/tasks/stats-snapshot.js';
import { captureLogger, LEVEL } from '../support/logs.js';

const TOKEN = 'tok_9f8e7d6c5b4a3928170615aabbccddeeff';
const MIN = 60_000;
const INTERVAL = 15 * MIN;
/** start() looks after 1 s; with every shard ready the first post follows 30 s later. */
const FIRST_POST_AT = 1_000 + 30_000;

interface Call {
  stats: BotStatsUpdate;
  options: RequestOptions | undefined;
  at: number;
  resolve: (result?: OkResult) => void;
  reject: (err: unknown) => void;
}

/**
 * A directory whose answers the test gives: `answer` acts on each call as it arrives, or the test
 * settles calls later. Like the real client, it turns a cancel into Unavailable unless told to hang.
 */
function fakeDirectory(answer?: (n: number, call: Call) => void, honourAbort = true) {
  const calls: Call[] = [];
  const state = { inFlight: 0, maxInFlight: 0 };
  const directory = {
    postBotStats(stats: BotStatsUpdate, options?: RequestOptions): Promise<OkResult> {
      state.inFlight += 1;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      const promise = new Promise<OkResult>((resolve, reject) => {
        const call: Call = {
          stats,
          options,
          at: Date.now(),
          resolve: (r = { ok: true }) => resolve(r),
          reject,
        };
        calls.push(call);
        if (honourAbort) {
          options?.signal?.addEventListener('abort', () =>
            reject(new UnavailableError('postBotStats was cancelled', { reason: 'timeout' })),
          );
        }
        answer?.(calls.length - 1, call);
      });
      const done = (): void => {
        state.inFlight -= 1;
      };
      promise.then(done, done);
      return promise;
    },
  };
  return { calls, directory, state };
}

const ok = (_n: number, call: Call): void => call.resolve();

function snapshotOf(
  shards: Array<[guilds: number, members: number, ready?: boolean]>,
  expectedShards = shards.length,
): StatsSnapshot {
  return {
    expectedShards,
    shards: shards.map(([guilds, members, ready = true], id) => ({ id, ready, guilds, members })),
  };
}

/** Lets settled promises run their handlers without moving the clock. */
async function flush(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

function setup(
  answer: ((n: number, call: Call) => void) | undefined = ok,
  options: Partial<StatsPosterOptions> & { honourAbort?: boolean } = {},
) {
  const { honourAbort, ...rest } = options;
  const { calls, directory, state } = fakeDirectory(answer, honourAbort);
  const { lines, raw, logger } = captureLogger();
  const world = {
    snapshot: snapshotOf([
      [10, 1_000],
      [20, 2_500],
    ]),
  };
  const outcomes: Array<{ outcome: StatsOutcome; info: StatsOutcomeInfo }> = [];
  /** When (on the fake clock) the poster reported each outcome. */
  const reportedAt: number[] = [];
  const poster = new StatsPoster({
    directory,
    logger,
    snapshot: () => world.snapshot,
    intervalMs: INTERVAL,
    // random 1 makes the jittered backoff its full step: 2 s, 4 s, 8 s, ...
    random: () => 1,
    onOutcome: (outcome, info) => {
      outcomes.push({ outcome, info });
      reportedAt.push(Date.now());
    },
    ...rest,
  });
  return { calls, lines, raw, outcomes, reportedAt, poster, state, world };
}

describe('totals', () => {
  it('sums guilds and member counts over every shard; shards is the expected count', () => {
    const snapshot: StatsSnapshot = {
      expectedShards: 3,
      shards: [
        { id: 2, ready: true, guilds: 30, members: 3_000 },
        { id: 0, ready: true, guilds: 10, members: 1_000 },
        { id: 1, ready: true, guilds: 20, members: 2_000 },
      ],
    };
    expect(totals(snapshot)).toEqual({ servers: 60, shards: 3, users: 6_000 });
  });

  it('accepts shards without guilds and extra fields such as a ping', () => {
    const shards = [
      { id: 0, ready: true, guilds: 0, members: 0, ping: 42 },
      { id: 1, ready: true, guilds: 1, members: 7, ping: -1 },
    ];
    expect(totals({ expectedShards: 2, shards })).toEqual({ servers: 1, shards: 2, users: 7 });
  });

  it('is null when a shard is missing, reported twice, not ready or not expected', () => {
    const ready = (id: number) => ({ id, ready: true, guilds: 5, members: 50 });
    expect(totals({ expectedShards: 3, shards: [ready(0), ready(2)] })).toBeNull();
    // The count of entries matches, but shard 1 is counted twice and shard 2 never.
    expect(totals({ expectedShards: 3, shards: [ready(0), ready(1), ready(1)] })).toBeNull();
    expect(totals({ expectedShards: 2, shards: [ready(0), ready(1), ready(1)] })).toBeNull();
    expect(totals({ expectedShards: 2, shards: [ready(0), { ...ready(1), ready: false }] })).toBeNull();
    expect(totals({ expectedShards: 2, shards: [ready(0), ready(1), ready(2)] })).toBeNull();
    expect(totals({ expectedShards: 2, shards: [] })).toBeNull();
  });

  it('is null for malformed snapshots, which may come from other processes', () => {
    const bad: unknown[] = [
      null,
      { expectedShards: 0, shards: [] },
      { expectedShards: 1.5, shards: [] },
      { expectedShards: 1, shards: 'nope' },
      { expectedShards: 1, shards: [null] },
      { expectedShards: 1, shards: [{ id: '0', ready: true, guilds: 1, members: 1 }] },
      { expectedShards: 1, shards: [{ id: 0, ready: 'yes', guilds: 1, members: 1 }] },
      { expectedShards: 1, shards: [{ id: 0, ready: true, guilds: -1, members: 1 }] },
      { expectedShards: 1, shards: [{ id: 0, ready: true, guilds: 1, members: Number.NaN }] },
      { expectedShards: 1, shards: [{ id: 0, ready: true, guilds: 1.5, members: 1 }] },
    ];
    for (const snapshot of bad) {
      expect(totals(snapshot as StatsSnapshot)).toBeNull();
      expect(inspectSnapshot(snapshot).kind).toBe('invalid');
    }
  });

  it('says which shards are missing, not ready, duplicated or unexpected', () => {
    const check = inspectSnapshot({
      expectedShards: 4,
      shards: [
        { id: 0, ready: true, guilds: 1, members: 1 },
        { id: 0, ready: true, guilds: 1, members: 1 },
        { id: 2, ready: false, guilds: 0, members: 0 },
        { id: 9, ready: true, guilds: 1, members: 1 },
      ],
    });
    expect(check).toEqual({
      kind: 'not-ready',
      expectedShards: 4,
      missingCount: 2,
      missing: [1, 3],
      notReady: [2],
      duplicate: [0],
      unexpected: [9],
    });
  });

  it('lists only the first missing shards of a huge expected count, quickly', () => {
    const check = inspectSnapshot({ expectedShards: 1_000_000_000, shards: [] });
    expect(check.kind).toBe('not-ready');
    if (check.kind !== 'not-ready') return;
    expect(check.missingCount).toBe(1_000_000_000);
    expect(check.missing).toHaveLength(20);
  });
});

describe('StatsPoster', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('with a gate (one host of several): posts only when it says go, asks again soon, and sends nothing once fenced', async () => {
    const answers: Array<StatsGate> = [];
    const asked: number[] = [];
    let valid = true;
    let broken = false;
    const { calls, poster, outcomes } = setup(ok, {
      intervalMs: 20_000,
      notReadyRetryMs: 15_000,
      gate: async (startedAgoMs) => {
        asked.push(startedAgoMs);
        if (broken) throw new Error('the database is gone');
        return answers.shift() ?? { go: true, stillValid: async () => valid };
      },
    });
    answers.push({ go: false, reason: 'not-leader' }, { go: false, reason: 'too-soon', retryInMs: 4_000 });
    poster.start();
    await vi.advanceTimersByTimeAsync(FIRST_POST_AT);
    // Another host leads: nothing sent; asked again after min(notReadyRetryMs, interval) = 15 s.
    expect(calls).toHaveLength(0);
    expect(outcomes.map((o) => o.outcome)).toEqual(['skipped-not-leader']);
    expect(asked).toEqual([0]);
    await vi.advanceTimersByTimeAsync(15_000);
    // This host leads now, but the last post (by another host) was too recent: again in 4 s.
    expect(outcomes.map((o) => o.outcome)).toEqual(['skipped-not-leader', 'skipped-not-leader']);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(calls).toHaveLength(1);
    await flush();
    expect(outcomes.at(-1)?.outcome).toBe('posted');
    // The next tick: the lead moved on between the claim and the send (a freeze): nothing sent.
    valid = false;
    await vi.advanceTimersByTimeAsync(20_000);
    expect(calls).toHaveLength(1);
    expect(outcomes.at(-1)).toMatchObject({ outcome: 'skipped-not-leader', info: { code: 'fenced' } });
    // A gate that fails is "not now", never a post on a doubt.
    broken = true;
    await vi.advanceTimersByTimeAsync(15_000);
    expect(calls).toHaveLength(1);
    expect(outcomes.at(-1)).toMatchObject({ outcome: 'skipped-not-leader', info: { code: 'unknown' } });
    await poster.stop();
  });

  it('refuses options that cannot work', () => {
    const { logger } = captureLogger();
    const { directory } = fakeDirectory();
    const base = { directory, logger, snapshot: () => snapshotOf([[1, 1]]) };
    expect(() => new StatsPoster({ ...base, intervalMs: 0 })).toThrow(RangeError);
    expect(() => new StatsPoster({ ...base, intervalMs: Number.NaN })).toThrow(RangeError);
    expect(
      () => new StatsPoster({ ...base, intervalMs: INTERVAL, retry: { attempts: 0, baseMs: 1, capMs: 1 } }),
    ).toThrow(RangeError);
  });

  it('posts nothing while a shard is not ready, then the total once all are, after firstDelayMs', async () => {
    const { calls, poster, world, lines, outcomes, reportedAt } = setup();
    const t0 = Date.now();
    world.snapshot = snapshotOf([
      [10, 1_000],
      [20, 2_500, false],
    ]);
    poster.start();
    await vi.advanceTimersByTimeAsync(5 * MIN);
    expect(calls).toHaveLength(0);
    expect(lines.filter((l) => l.msg?.startsWith('shards not ready yet')).length).toBeGreaterThan(10);

    // Checks run every 15 s after the first at 1 s: the next one, at 5 min 1 s, finds both shards ready.
    world.snapshot = snapshotOf([
      [10, 1_000],
      [20, 2_500],
    ]);
    await vi.advanceTimersByTimeAsync(1_000);
    const seenAt = Date.now();
    expect(lines.some((l) => l.msg === 'every shard is ready; first stats post scheduled')).toBe(true);
    await vi.advanceTimersByTimeAsync(30_000 - 1);
    expect(calls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.at - seenAt).toBe(30_000);
    expect(calls[0]!.at - t0).toBe(5 * MIN + 1_000 + 30_000);
    // Every shard's numbers, not one shard's.
    expect(calls[0]!.stats).toEqual({ servers: 30, shards: 2, users: 3_500 });
    // Before look-ups and background work, with /up.
    expect(calls[0]!.options?.priority).toBe('critical');
    expect(calls[0]!.options?.signal).toBeInstanceOf(AbortSignal);
    await flush();
    // The poster takes the answer as a success, at once.
    expect(outcomes.at(-1)).toMatchObject({
      outcome: 'posted',
      info: { body: { servers: 30, shards: 2, users: 3_500 } },
    });
    expect(reportedAt.at(-1)).toBe(calls[0]!.at);
    await poster.stop();
  });

  it('a shard missing from the snapshot holds the post like a shard that is not ready', async () => {
    const { calls, poster, world } = setup();
    world.snapshot = snapshotOf([[10, 1_000]], 2);
    poster.start();
    await vi.advanceTimersByTimeAsync(10 * MIN);
    expect(calls).toHaveLength(0);
    world.snapshot = snapshotOf([
      [10, 1_000],
      [5, 20],
    ]);
    await vi.advanceTimersByTimeAsync(15_000 + 30_000);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.stats).toEqual({ servers: 15, shards: 2, users: 1_020 });
    await poster.stop();
  });

  it('posts once per interval, measured from the previous post’s start, one info line each', async () => {
    let slow: Call | undefined;
    const { calls, poster, lines, outcomes } = setup((n, call) => {
      // The first post takes 10 s; the interval still counts from its start.
      if (n === 0) slow = call;
      else call.resolve();
    });
    poster.start();
    await vi.advanceTimersByTimeAsync(FIRST_POST_AT);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10_000);
    slow!.resolve();
    await flush();
    await vi.advanceTimersByTimeAsync(INTERVAL - 10_000 - 1);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(3 * INTERVAL);
    expect(calls).toHaveLength(5);
    for (let i = 1; i < calls.length; i += 1) expect(calls[i]!.at - calls[i - 1]!.at).toBe(INTERVAL);

    const posted = lines.filter((l) => l.msg === 'stats posted');
    expect(posted).toHaveLength(5);
    expect(posted[0]).toMatchObject({
      level: LEVEL.info,
      task: 'stats-poster',
      body: { servers: 30, shards: 2, users: 3_500 },
      durationMs: 10_000,
      attempts: 1,
    });
    expect(outcomes.map((o) => o.outcome)).toEqual(Array(5).fill('posted'));
    expect(outcomes[0]!.info).toEqual({
      durationMs: 10_000,
      body: { servers: 30, shards: 2, users: 3_500 },
      attempts: 1,
    });
    await poster.stop();
  });

  it('counts the interval from when a post went out, when it waited its turn for the directory’s limits', async () => {
    let queued: Call | undefined;
    const { calls, poster } = setup((n, call) => {
      // The first post waits 10 s behind interactive ups, then goes out and is answered at once.
      if (n === 0) queued = call;
      else call.resolve();
    });
    poster.start();
    await vi.advanceTimersByTimeAsync(FIRST_POST_AT);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(10_000);
    const sentAt = Date.now();
    queued!.options?.onSend?.(sentAt);
    queued!.resolve();
    await flush();
    await vi.advanceTimersByTimeAsync(INTERVAL - 1);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - sentAt).toBe(INTERVAL);
    await poster.stop();
  });

  it('never posts twice at once: a tick() during a slow post returns the running promise', async () => {
    const { calls, poster, state } = setup(() => undefined);
    poster.start();
    await vi.advanceTimersByTimeAsync(FIRST_POST_AT);
    expect(calls).toHaveLength(1);
    const a = poster.tick();
    const b = poster.tick();
    expect(a).toBe(b);
    // Long enough for a scheduled tick to come due, short of the attempt timeout (2 min).
    await vi.advanceTimersByTimeAsync(MIN);
    expect(calls).toHaveLength(1);
    calls[0]!.resolve();
    await expect(a).resolves.toBe('posted');
    expect(state.maxInFlight).toBe(1);
    // The next one is a new tick and posts again.
    const c = poster.tick();
    expect(c).not.toBe(a);
    await flush();
    expect(calls).toHaveLength(2);
    calls[1]!.resolve();
    await expect(c).resolves.toBe('posted');
    expect(state.maxInFlight).toBe(1);
    await poster.stop();
  });

  it('a tick() before start() posts at once, and start() keeps the interval from it', async () => {
    const { calls, poster } = setup();
    await expect(poster.tick()).resolves.toBe('posted');
    const first = Date.now();
    poster.start();
    await vi.advanceTimersByTimeAsync(INTERVAL - 1);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - first).toBe(INTERVAL);
    poster.start();
    poster.start();
    await vi.advanceTimersByTimeAsync(INTERVAL);
    expect(calls).toHaveLength(3);
    await poster.stop();
  });

  it('survives a 401: error for the operator, no retry in the tick, next interval posts, recovery logged', async () => {
    const { calls, poster, lines, outcomes, reportedAt } = setup((n, call) =>
      n === 0 ? call.reject(new UnauthorizedError('Unauthorized', { status: 401 })) : call.resolve(),
    );
    poster.start();
    await vi.advanceTimersByTimeAsync(FIRST_POST_AT);
    expect(outcomes.map((o) => o.outcome)).toEqual(['unauthorized']);
    const refused = lines.find((l) => l.msg?.startsWith('stats post refused'));
    expect(refused).toMatchObject({ level: LEVEL.error, code: 'Unauthorized', status: 401 });
    expect(String(refused?.hint)).toContain('DIRECTORY_TOKEN');
    await vi.advanceTimersByTimeAsync(INTERVAL - 1);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect(outcomes.map((o) => o.outcome)).toEqual(['unauthorized', 'posted']);
    expect(lines.find((l) => l.msg?.startsWith('stats posted'))).toMatchObject({
      level: LEVEL.info,
      msg: 'stats posted; recovered after 1 failed tick(s)',
      recoveredFrom: 'Unauthorized',
      failedTicks: 1,
    });
    expect(reportedAt.at(-1)).toBe(calls[1]!.at);
    await poster.stop();
  });

  it('logs token and configuration failures at error and keeps going', async () => {
    const cases: Array<[unknown, StatsOutcome, string]> = [
      [new ForbiddenError('Forbidden', { status: 403 }), 'forbidden', 'Forbidden'],
      [
        new TokenKindNotAcceptedError('postBotStats', 'Profile', ['Bot']),
        'unauthorized',
        'TokenKindNotAccepted',
      ],
      [new BadRequestError('body must have required property', { status: 400 }), 'failed', 'BadRequest'],
    ];
    for (const [error, outcome, code] of cases) {
      const { calls, poster, lines } = setup((n, call) => (n === 0 ? call.reject(error) : call.resolve()));
      await expect(poster.tick()).resolves.toBe(outcome);
      expect(calls).toHaveLength(1);
      expect(lines.find((l) => l.code === code)).toMatchObject({
        level: LEVEL.error,
        hint: expect.any(String),
      });
      await expect(poster.tick()).resolves.toBe('posted');
    }
  });

  it('429: waits retryAfterMs, then posts within the same tick', async () => {
    const { calls, poster, lines } = setup((n, call) =>
      n === 0
        ? call.reject(new RateLimitedError('Too many requests', { status: 429, retryAfterMs: 5_000 }))
        : call.resolve(),
    );
    const result = poster.tick();
    await flush();
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    await expect(result).resolves.toBe('posted');
    expect(lines.find((l) => l.code === 'RateLimited')).toMatchObject({
      level: LEVEL.warn,
      retryInMs: 5_000,
    });
  });

  it('429 without Retry-After waits the backoff step', async () => {
    const { calls, poster } = setup((n, call) =>
      n === 0 ? call.reject(new RateLimitedError('Too many requests', { status: 429 })) : call.resolve(),
    );
    const result = poster.tick();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - calls[0]!.at).toBe(2_000);
    await expect(result).resolves.toBe('posted');
  });

  it('429 longer than capMs waits for the next interval, or longer when the directory asks', async () => {
    const { calls, poster, outcomes } = setup((n, call) =>
      n === 0
        ? call.reject(new RateLimitedError('Too many requests', { status: 429, retryAfterMs: 20 * MIN }))
        : call.resolve(),
    );
    poster.start();
    await vi.advanceTimersByTimeAsync(FIRST_POST_AT);
    expect(outcomes.map((o) => o.outcome)).toEqual(['rate-limited']);
    await vi.advanceTimersByTimeAsync(INTERVAL);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(5 * MIN);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - calls[0]!.at).toBe(20 * MIN);
    await poster.stop();
  });

  it('a 429 asking for a day waits two intervals at most (one post skipped), and says so', async () => {
    const DAY = 24 * 60 * MIN;
    const { calls, poster, lines } = setup((n, call) =>
      n === 0
        ? call.reject(new RateLimitedError('Too many requests', { status: 429, retryAfterMs: DAY }))
        : call.resolve(),
    );
    poster.start();
    await vi.advanceTimersByTimeAsync(FIRST_POST_AT);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2 * INTERVAL - 1);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - calls[0]!.at).toBe(2 * INTERVAL);
    const capped = lines.filter((l) => l.retryAfterMs === DAY);
    expect(capped).toEqual([expect.objectContaining({ level: LEVEL.warn, capMs: 2 * INTERVAL })]);
    expect(lines.find((l) => l.code === 'RateLimited')).toMatchObject({ retryInMs: 2 * INTERVAL });
    await poster.stop();
  });

  it('5xx: retries with capped exponential backoff inside the tick, then waits for the next interval', async () => {
    const { calls, poster, lines, outcomes } = setup((n, call) =>
      n < 3
        ? call.reject(new UnavailableError('the directory answered 502', { status: 502, reason: 'status' }))
        : call.resolve(),
    );
    poster.start();
    await vi.advanceTimersByTimeAsync(FIRST_POST_AT + 10 * MIN);
    expect(calls).toHaveLength(3);
    expect(calls[1]!.at - calls[0]!.at).toBe(2_000);
    expect(calls[2]!.at - calls[1]!.at).toBe(4_000);
    expect(outcomes).toEqual([
      {
        outcome: 'failed',
        info: expect.objectContaining({ code: 'Unavailable', attempts: 3, durationMs: 6_000 }),
      },
    ]);
    const retries = lines.filter((l) => l.msg === 'stats post failed; retrying');
    expect(retries.map((l) => l.retryInMs)).toEqual([2_000, 4_000]);
    expect(lines.find((l) => l.msg === 'stats post failed; waiting for the next interval')).toMatchObject({
      level: LEVEL.warn,
      status: 502,
    });
    await vi.advanceTimersByTimeAsync(5 * MIN);
    expect(calls).toHaveLength(4);
    expect(calls[3]!.at - calls[0]!.at).toBe(INTERVAL);
    expect(outcomes.at(-1)?.outcome).toBe('posted');
    await poster.stop();
  });

  it('backoff has jitter and a cap', async () => {
    const fail = (_n: number, call: Call) =>
      call.reject(new UnavailableError('the directory answered 503', { status: 503, reason: 'status' }));
    const { calls, poster } = setup(fail, {
      random: () => 0,
      retry: { attempts: 5, baseMs: 2_000, capMs: 5_000 },
    });
    const result = poster.tick();
    await vi.advanceTimersByTimeAsync(MIN);
    await expect(result).resolves.toBe('failed');
    const gaps = calls.slice(1).map((c, i) => c.at - calls[i]!.at);
    // random 0: half of each step of 2 s, 4 s, then the 5 s cap.
    expect(gaps).toEqual([1_000, 2_000, 2_500, 2_500]);
  });

  it('InvalidResponse and client timeouts are retried like 5xx', async () => {
    const errors = [
      new InvalidResponseError('not JSON', { status: 200, excerpt: '<html>' }),
      new UnavailableError('the directory did not answer postBotStats in time', { reason: 'timeout' }),
    ];
    const { calls, poster } = setup((n, call) => (n < 2 ? call.reject(errors[n]) : call.resolve()));
    const result = poster.tick();
    await vi.advanceTimersByTimeAsync(6_000);
    await expect(result).resolves.toBe('posted');
    expect(calls).toHaveLength(3);
  });

  it('a post that hangs is cancelled after attemptTimeoutMs and retried', async () => {
    const { calls, poster } = setup((n, call) => (n === 0 ? undefined : call.resolve()), {
      attemptTimeoutMs: 10_000,
    });
    const result = poster.tick();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls[0]!.options?.signal?.aborted).toBe(true);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(calls).toHaveLength(2);
    await expect(result).resolves.toBe('posted');
  });

  it('a post that ignores cancellation is given up without a second request in flight', async () => {
    const { calls, poster, lines, state } = setup((n, call) => (n === 0 ? undefined : call.resolve()), {
      attemptTimeoutMs: 10_000,
      honourAbort: false,
    });
    const result = poster.tick();
    await vi.advanceTimersByTimeAsync(11_000);
    await expect(result).resolves.toBe('failed');
    expect(calls).toHaveLength(1);
    expect(lines.find((l) => l.msg?.startsWith('stats post did not settle'))).toMatchObject({
      level: LEVEL.error,
    });
    expect(state.maxInFlight).toBe(1);
  });

  it('{ok: false} is logged at warn and counted as rejected', async () => {
    const { calls, poster, lines, outcomes } = setup((_n, call) => call.resolve({ ok: false }));
    await expect(poster.tick()).resolves.toBe('rejected');
    expect(calls).toHaveLength(1);
    expect(lines.find((l) => l.code === 'NotOk')).toMatchObject({ level: LEVEL.warn });
    // Not taken for a success: no 'posted' outcome, no 'stats posted' line.
    expect(outcomes.map((o) => o.outcome)).toEqual(['rejected']);
    expect(lines.filter((l) => l.msg?.startsWith('stats posted'))).toEqual([]);
  });

  it('a snapshot that throws, rejects, hangs or is malformed skips the tick', async () => {
    const { calls, directory } = fakeDirectory(ok);
    const { lines, logger } = captureLogger();
    const make = (snapshot: StatsPosterOptions['snapshot']) =>
      new StatsPoster({ directory, logger, snapshot, intervalMs: INTERVAL, snapshotTimeoutMs: 5_000 });

    await expect(
      make(() => {
        throw new Error('shard process 1 is still spawning');
      }).tick(),
    ).resolves.toBe('skipped-snapshot-failed');
    await expect(make(() => Promise.reject(new Error('broadcastEval failed'))).tick()).resolves.toBe(
      'skipped-snapshot-failed',
    );
    const hanging = make(() => new Promise<StatsSnapshot>(() => undefined)).tick();
    await vi.advanceTimersByTimeAsync(5_000);
    await expect(hanging).resolves.toBe('skipped-snapshot-failed');
    await expect(make(() => ({ expectedShards: 'two' }) as unknown as StatsSnapshot).tick()).resolves.toBe(
      'skipped-snapshot-failed',
    );

    expect(calls).toHaveLength(0);
    const skipped = lines.filter((l) => l.level === LEVEL.warn);
    expect(skipped.map((l) => l.code)).toEqual([
      'Unexpected',
      'Unexpected',
      'SnapshotTimeout',
      'InvalidSnapshot',
    ]);
    expect(skipped[0]!.error).toContain('still spawning');
  });

  it('the loop survives snapshot failures and posts once the snapshot answers', async () => {
    let failures = 3;
    const { calls, poster, world } = setup();
    const good = world.snapshot;
    // A getter stands in for a sharding manager whose processes are still spawning.
    Object.defineProperty(world, 'snapshot', {
      get: () => {
        if (failures > 0) {
          failures -= 1;
          throw new Error('shard process 1 is still spawning');
        }
        return good;
      },
    });
    poster.start();
    // Checks at 1 s, 16 s and 31 s fail; 46 s finds every shard ready; the post follows 30 s later.
    await vi.advanceTimersByTimeAsync(1_000 + 3 * 15_000 + 30_000 - 1);
    expect(calls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(1);
    await poster.stop();
  });

  it('after the first post, a shard that is not ready delays the post by notReadyRetryMs only', async () => {
    const { calls, poster, world, lines, outcomes } = setup();
    const good = world.snapshot;
    poster.start();
    await vi.advanceTimersByTimeAsync(FIRST_POST_AT);
    expect(calls).toHaveLength(1);
    world.snapshot = snapshotOf([
      [10, 1_000],
      [20, 2_500, false],
    ]);
    await vi.advanceTimersByTimeAsync(INTERVAL);
    expect(calls).toHaveLength(1);
    expect(outcomes.at(-1)?.outcome).toBe('skipped-not-ready');
    expect(lines.find((l) => l.msg?.startsWith('not every shard is ready'))).toMatchObject({
      level: LEVEL.info,
      notReady: [1],
    });
    world.snapshot = good;
    await vi.advanceTimersByTimeAsync(15_000);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - calls[0]!.at).toBe(INTERVAL + 15_000);
    await poster.stop();
  });

  it('readiness lost before the first post sends the poster back to waiting for it', async () => {
    const { calls, poster, world } = setup();
    const good = world.snapshot;
    poster.start();
    await vi.advanceTimersByTimeAsync(20_000);
    world.snapshot = snapshotOf([
      [10, 1_000],
      [20, 2_500, false],
    ]);
    await vi.advanceTimersByTimeAsync(11_000);
    expect(calls).toHaveLength(0);
    world.snapshot = good;
    // Skipped at 31 s; the next check at 46 s finds every shard ready; the post follows 30 s later.
    await vi.advanceTimersByTimeAsync(15_000 + 30_000 - 1);
    expect(calls).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(1);
    await poster.stop();
  });

  it('stop() cancels every timer: nothing is posted afterwards', async () => {
    const { calls, poster } = setup();
    poster.start();
    await vi.advanceTimersByTimeAsync(FIRST_POST_AT);
    expect(calls).toHaveLength(1);
    const stopping = poster.stop();
    expect(poster.stop()).toBe(stopping);
    await stopping;
    expect(vi.getTimerCount()).toBe(0);
    poster.start();
    await expect(poster.tick()).resolves.toBe('failed');
    await vi.advanceTimersByTimeAsync(3 * INTERVAL);
    expect(calls).toHaveLength(1);
  });

  it('stop() before start() and during the first readiness wait leaves nothing behind', async () => {
    const { calls, poster, world } = setup();
    world.snapshot = snapshotOf([[1, 1, false]]);
    poster.start();
    await vi.advanceTimersByTimeAsync(20_000);
    await poster.stop();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(INTERVAL);
    expect(calls).toHaveLength(0);
  });

  it('stop() during a hanging post is bounded: waits, cancels, then gives up after a grace', async () => {
    const { calls, poster, lines, outcomes } = setup(() => undefined, {
      honourAbort: false,
      stopTimeoutMs: 5_000,
      attemptTimeoutMs: 60_000,
    });
    poster.start();
    await vi.advanceTimersByTimeAsync(FIRST_POST_AT);
    expect(calls).toHaveLength(1);
    let stopped = false;
    void poster.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(4_999);
    expect(stopped).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls[0]!.options?.signal?.aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(stopped).toBe(true);
    expect(lines.find((l) => l.msg?.startsWith('stats poster stopped'))).toMatchObject({ level: LEVEL.warn });
    // The abandoned tick still ends (at its own timeout) without a retry or a new schedule.
    await vi.advanceTimersByTimeAsync(INTERVAL);
    expect(calls).toHaveLength(1);
    expect(outcomes.map((o) => o.outcome)).toEqual(['failed']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('stop() cancels a post that honours cancellation and ends the tick as failed', async () => {
    const { calls, poster, outcomes } = setup(() => undefined, { stopTimeoutMs: 5_000 });
    const result = poster.tick();
    await flush();
    expect(calls).toHaveLength(1);
    const stopping = poster.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    await stopping;
    await expect(result).resolves.toBe('failed');
    expect(outcomes[0]).toMatchObject({ outcome: 'failed', info: { code: 'Unavailable' } });
  });

  it('stop() while the snapshot is being taken ends the tick without a post', async () => {
    const { calls, poster, outcomes } = setup();
    const result = poster.tick();
    await poster.stop();
    await expect(result).resolves.toBe('skipped-snapshot-failed');
    expect(outcomes[0]).toMatchObject({ info: { code: 'Stopped' } });
    await vi.advanceTimersByTimeAsync(INTERVAL);
    expect(calls).toHaveLength(0);
  });

  it('stop() cuts a backoff wait short', async () => {
    const { calls, poster } = setup((_n, call) =>
      call.reject(new UnavailableError('the directory answered 500', { status: 500, reason: 'status' })),
    );
    const result = poster.tick();
    await flush();
    expect(calls).toHaveLength(1);
    await poster.stop();
    await expect(result).resolves.toBe('failed');
    await vi.advanceTimersByTimeAsync(MIN);
    expect(calls).toHaveLength(1);
  });

  it('a throwing onOutcome hook does not stop the posts', async () => {
    const { calls, poster, lines } = setup(ok, {
      onOutcome: () => {
        throw new Error('metrics are down');
      },
    });
    poster.start();
    await vi.advanceTimersByTimeAsync(FIRST_POST_AT + INTERVAL);
    expect(calls).toHaveLength(2);
    expect(lines.find((l) => l.msg === 'onOutcome hook threw')).toMatchObject({ level: LEVEL.warn });
    await poster.stop();
  });

  it('never logs the token, whatever the failures carry', async () => {
    const leaky = Object.assign(new Error('socket hang up'), {
      options: { headers: { authorization: `Bot ${TOKEN}` } },
    });
    const errors: unknown[] = [
      new UnauthorizedError('Unauthorized', { status: 401, cause: { authorization: `Bot ${TOKEN}` } }),
      leaky,
      new UnavailableError('the directory answered 502', {
        status: 502,
        reason: 'status',
        cause: new Error(`upstream saw ${TOKEN}`),
      }),
    ];
    const { poster, raw, lines } = setup((n, call) => (n < 3 ? call.reject(errors[n]) : call.resolve()), {
      retry: { attempts: 1, baseMs: 1_000, capMs: 1_000 },
    });
    for (let i = 0; i < 4; i += 1) await poster.tick();
    expect(lines.length).toBeGreaterThanOrEqual(4);
    expect(raw.join('\n')).not.toContain(TOKEN);
  });
});
