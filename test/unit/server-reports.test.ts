import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DirectoryClient, type RequestOptions } from '../../src/directory/client.js';
import {
  BadRequestError,
  ForbiddenError,
  InvalidResponseError,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  UnavailableError,
} from '../../src/directory/errors.js';
import type { ServerUpdate, ServerUpResult } from '../../src/directory/types.js';
import { backoffDelay } from '../../src/tasks/loop.js';
import {
  type GuildReport,
  type ReportResult,
  ServerReporter,
  type ServerReporterOptions,
} from '../../src/tasks/server-reports.js';
import { captureLogger, LEVEL, type LogEntry } from '../support/logs.js';

const BOT_ID = '724663360934772797';
const GUILD_A = '722424773233213460';
const GUILD_B = '722424773233213461';
const GUILD_C = '722424773233213462';
const TOKEN = 'tok_9f8e7d6c5b4a3928170615aabbccddeeff';

interface Call {
  update: ServerUpdate;
  options: RequestOptions | undefined;
  resolve: (result?: Partial<ServerUpResult>) => void;
  reject: (err: unknown) => void;
}

/** A directory whose answers the test gives, one call at a time. */
function fakeDirectory() {
  const calls: Call[] = [];
  const directory = {
    postServer(update: ServerUpdate, options?: RequestOptions): Promise<ServerUpResult> {
      return new Promise<ServerUpResult>((resolve, reject) => {
        calls.push({
          update,
          options,
          resolve: (result = {}) =>
            resolve({
              serverId: update.serverId,
              up: 0,
              updated: true,
              bumps: 3,
              boost: false,
              upSuccessfully: false,
              nextUpAt: null,
              timeToNextUpInMs: null,
              message: '',
              ...result,
            }),
          reject,
        });
        // The real client turns a cancel into Unavailable; so does this one.
        options?.signal?.addEventListener('abort', () =>
          reject(new UnavailableError('postServer was cancelled', { reason: 'timeout' })),
        );
      });
    },
  };
  return { calls, directory };
}

function join(guildId: string, extra: Partial<GuildReport> = {}): GuildReport {
  return {
    guildId,
    botPresent: true,
    name: `Guild ${guildId.slice(-2)}`,
    membersAll: 120,
    membersOnline: 17,
    ownerId: '111111111111111111',
    ownerTag: 'owner',
    reporterUserId: BOT_ID,
    channelId: '333333333333333333',
    channelName: 'general',
    ...extra,
  };
}

function leave(guildId: string): GuildReport {
  return {
    guildId,
    botPresent: false,
    reporterUserId: BOT_ID,
    channelId: '333333333333333333',
    channelName: 'general',
  };
}

/** Lets settled promises run their handlers without moving the clock. */
async function flush(): Promise<void> {
  await vi.advanceTimersByTimeAsync(0);
}

/** Reports waiting behind the one in flight, as the reporter's last queue line counts them. */
function queued(lines: LogEntry[]): unknown {
  return lines.findLast((l) => l.queued !== undefined)?.queued;
}

/** Whether idle() resolves now: nothing is waiting or in flight. */
async function isIdle(reporter: ServerReporter): Promise<boolean> {
  let idle = false;
  void reporter.idle().then(() => {
    idle = true;
  });
  await flush();
  return idle;
}

function setup(options: Partial<ServerReporterOptions> = {}) {
  const { calls, directory } = fakeDirectory();
  const { lines, logger } = captureLogger();
  const results: ReportResult[] = [];
  // random 1 makes the jittered backoff its full step: 5 s, 10 s, 20 s, ...
  const reporter = new ServerReporter({
    directory,
    logger,
    random: () => 1,
    onResult: (r) => results.push(r),
    ...options,
  });
  return { calls, lines, results, reporter };
}

describe('ServerReporter', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('posts up 0 with botPresent per state, the guild stats and background priority', async () => {
    const { calls, reporter, results, lines } = setup();
    reporter.report(join(GUILD_A));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.update).toEqual({
      serverId: GUILD_A,
      up: false,
      botPresent: true,
      name: 'Guild 60',
      membersAll: 120,
      membersOnline: 17,
      ownerId: '111111111111111111',
      ownerTag: 'owner',
      upUserId: BOT_ID,
      upChannelId: '333333333333333333',
      upChannelName: 'general',
    });
    expect(calls[0]!.options?.priority).toBe('background');
    expect(calls[0]!.options?.signal).toBeInstanceOf(AbortSignal);
    calls[0]!.resolve();
    await flush();

    reporter.report(leave(GUILD_A));
    expect(calls).toHaveLength(2);
    expect(calls[1]!.update).toEqual({
      serverId: GUILD_A,
      up: false,
      botPresent: false,
      upUserId: BOT_ID,
      upChannelId: '333333333333333333',
      upChannelName: 'general',
    });
    expect(calls[1]!.options?.priority).toBe('background');
    calls[1]!.resolve();
    await reporter.idle();
    expect(results).toEqual([
      { guildId: GUILD_A, outcome: 'sent' },
      { guildId: GUILD_A, outcome: 'sent' },
    ]);
    const sent = lines.filter((l) => l.msg === 'server report sent');
    expect(sent.map((l) => [l.guildId, l.botPresent, l.attempt])).toEqual([
      [GUILD_A, true, 1],
      [GUILD_A, false, 1],
    ]);
  });

  it('sends one request at a time for the whole reporter', async () => {
    const { calls, reporter, lines } = setup();
    reporter.report(join(GUILD_A));
    reporter.report(join(GUILD_B));
    reporter.report(join(GUILD_C));
    await flush();
    expect(calls).toHaveLength(1);
    expect(queued(lines)).toBe(2);
    calls[0]!.resolve();
    await flush();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.update.serverId).toBe(GUILD_B);
    calls[1]!.resolve();
    await flush();
    expect(calls).toHaveLength(3);
    expect(calls[2]!.update.serverId).toBe(GUILD_C);
    calls[2]!.resolve();
    await reporter.idle();
    expect(await isIdle(reporter)).toBe(true);
  });

  it('coalesces per guild: the latest state wins and join then leave sends only the leave', async () => {
    const { calls, reporter, results, lines } = setup();
    reporter.report(join(GUILD_A)); // in flight, keeps the others waiting
    reporter.report(join(GUILD_B));
    reporter.report(join(GUILD_C, { membersAll: 1 }));
    reporter.report(leave(GUILD_B));
    reporter.report(join(GUILD_C, { membersAll: 2 }));
    expect(queued(lines)).toBe(2);
    calls[0]!.resolve();
    await flush();
    calls[1]!.resolve();
    await flush();
    calls[2]!.resolve();
    await reporter.idle();
    expect(calls.map((c) => [c.update.serverId, c.update.botPresent, c.update.membersAll])).toEqual([
      [GUILD_A, true, 120],
      [GUILD_B, false, undefined],
      [GUILD_C, true, 2],
    ]);
    expect(results.filter((r) => r.outcome === 'sent')).toHaveLength(3);
  });

  it('sends a state that arrives while its guild is in flight after it, in order', async () => {
    const { calls, reporter } = setup();
    reporter.report(join(GUILD_A));
    reporter.report(leave(GUILD_A));
    expect(calls).toHaveLength(1);
    calls[0]!.resolve();
    await flush();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.update.botPresent).toBe(false);
    calls[1]!.resolve();
    await reporter.idle();
  });

  it('retries Unavailable with exponential backoff, then succeeds', async () => {
    const { calls, reporter, results, lines } = setup();
    reporter.report(join(GUILD_A));
    calls[0]!.reject(new UnavailableError('the directory answered 502', { reason: 'status', status: 502 }));
    await flush();
    expect(results).toEqual([{ guildId: GUILD_A, outcome: 'retry', error: 'Unavailable' }]);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    calls[1]!.reject(new InvalidResponseError('not JSON', { excerpt: '<html>' }));
    await flush();
    await vi.advanceTimersByTimeAsync(9_999);
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(3);
    calls[2]!.resolve();
    await reporter.idle();
    expect(results.map((r) => [r.outcome, r.error])).toEqual([
      ['retry', 'Unavailable'],
      ['retry', 'InvalidResponse'],
      ['sent', undefined],
    ]);
    const retries = lines.filter((l) => l.msg === 'server report failed; will retry');
    expect(retries.map((l) => [l.level, l.guildId, l.attempt, l.code, l.retryInMs])).toEqual([
      [LEVEL.warn, GUILD_A, 1, 'Unavailable', 5_000],
      [LEVEL.warn, GUILD_A, 2, 'InvalidResponse', 10_000],
    ]);
    expect(lines.find((l) => l.msg === 'server report sent')?.attempt).toBe(3);
  });

  it('lets other guilds go while one waits for its retry', async () => {
    const { calls, reporter } = setup();
    reporter.report(join(GUILD_A));
    reporter.report(join(GUILD_B));
    calls[0]!.reject(new UnavailableError('down', { reason: 'network' }));
    await flush();
    expect(calls).toHaveLength(2);
    expect(calls[1]!.update.serverId).toBe(GUILD_B);
    calls[1]!.resolve();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toHaveLength(3);
    expect(calls[2]!.update.serverId).toBe(GUILD_A);
    calls[2]!.resolve();
    await reporter.idle();
  });

  it.each([
    ['as asked', 7_000, 7_000],
    ['but 5 min (the backoff cap) at most when asked for a day', 86_400_000, 300_000],
  ])('waits retryAfterMs after RateLimited, for every guild: %s', async (_case, askedMs, waitMs) => {
    const { calls, reporter, lines } = setup();
    reporter.report(join(GUILD_A));
    reporter.report(join(GUILD_B));
    calls[0]!.reject(new RateLimitedError('Too many requests', { status: 429, retryAfterMs: askedMs }));
    await flush();
    // The route is blocked: B must not go either.
    await vi.advanceTimersByTimeAsync(waitMs - 1);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.update.serverId).toBe(GUILD_B);
    calls[1]!.resolve();
    await flush();
    expect(calls).toHaveLength(3);
    expect(calls[2]!.update.serverId).toBe(GUILD_A);
    calls[2]!.resolve();
    await reporter.idle();
    const line = lines.find((l) => l.code === 'RateLimited');
    expect(line).toMatchObject({
      level: LEVEL.warn,
      guildId: GUILD_A,
      attempt: 1,
      status: 429,
      retryInMs: waitMs,
    });
    // A wait cut short is said once, with both waits.
    const cut = lines.filter((l) => l.capMs !== undefined);
    const expected = { level: LEVEL.warn, retryAfterMs: askedMs, capMs: waitMs };
    expect(cut).toEqual(askedMs > waitMs ? [expect.objectContaining(expected)] : []);
  });

  it('backs off after RateLimited without retryAfterMs', async () => {
    const { calls, reporter } = setup();
    reporter.report(join(GUILD_A));
    calls[0]!.reject(new RateLimitedError('Too many requests', { status: 429 }));
    await vi.advanceTimersByTimeAsync(4_999);
    expect(calls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(2);
    calls[1]!.resolve();
    await reporter.idle();
  });

  it('does not retry Unauthorized and logs it at error', async () => {
    const { calls, reporter, results, lines } = setup();
    reporter.report(join(GUILD_A));
    calls[0]!.reject(new UnauthorizedError('Unauthorized', { status: 401, method: 'postServer' }));
    await reporter.idle();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(calls).toHaveLength(1);
    expect(await isIdle(reporter)).toBe(true);
    expect(results).toEqual([{ guildId: GUILD_A, outcome: 'dropped', error: 'Unauthorized' }]);
    const line = lines.find((l) => l.code === 'Unauthorized');
    expect(line).toMatchObject({ level: LEVEL.error, guildId: GUILD_A, attempt: 1, status: 401 });
    expect(line?.msg).toBe('server report rejected; not retried');
  });

  it.each([
    ['Forbidden', new ForbiddenError('Forbidden', { status: 403 })],
    ['BadRequest', new BadRequestError("body must have required property 'upUserID'", { status: 400 })],
  ])('does not retry %s', async (code, err) => {
    const { calls, reporter, lines } = setup();
    reporter.report(join(GUILD_A));
    calls[0]!.reject(err);
    await reporter.idle();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(calls).toHaveLength(1);
    expect(lines.find((l) => l.code === code)?.level).toBe(LEVEL.error);
  });

  it('does not retry NotFound, and says so at warn', async () => {
    const { calls, reporter, lines } = setup();
    reporter.report(join(GUILD_A));
    calls[0]!.reject(new NotFoundError('Server not found', { status: 404 }));
    await reporter.idle();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(calls).toHaveLength(1);
    expect(lines.find((l) => l.code === 'NotFound')?.level).toBe(LEVEL.warn);
  });

  it('reports InvalidArgument from the client at error, without retrying', async () => {
    const { lines, logger } = captureLogger();
    const directory = new DirectoryClient({
      baseUrl: 'http://127.0.0.1:9',
      version: 'v2',
      token: TOKEN,
      rateLimits: false,
    });
    const reporter = new ServerReporter({ directory, logger });
    reporter.report(join('not-a-snowflake'));
    await reporter.idle();
    await directory.close();
    const line = lines.find((l) => l.code === 'InvalidArgument');
    expect(line).toMatchObject({ level: LEVEL.error, guildId: 'not-a-snowflake', attempt: 1 });
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
  });

  it('gives up after maxAttempts and drops the report', async () => {
    const { calls, reporter, results, lines } = setup({ maxAttempts: 3 });
    reporter.report(join(GUILD_A));
    for (let i = 0; i < 3; i++) {
      await vi.advanceTimersByTimeAsync(60_000);
      expect(calls).toHaveLength(i + 1);
      calls[i]!.reject(new UnavailableError('down', { reason: 'network' }));
      await flush();
    }
    await reporter.idle();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(calls).toHaveLength(3);
    expect(results.map((r) => r.outcome)).toEqual(['retry', 'retry', 'dropped']);
    const last = lines.find((l) => l.msg === 'server report failed; giving up');
    expect(last).toMatchObject({ level: LEVEL.error, guildId: GUILD_A, attempt: 3, code: 'Unavailable' });
  });

  it('bounds the backoff at the cap', () => {
    const backoff = { baseMs: 5_000, capMs: 300_000 };
    expect(backoffDelay(1, backoff, () => 1)).toBe(5_000);
    expect(backoffDelay(1, backoff, () => 0)).toBe(2_500);
    expect(backoffDelay(4, backoff, () => 1)).toBe(40_000);
    expect(backoffDelay(50, backoff, () => 1)).toBe(300_000);
    expect(backoffDelay(50, backoff, () => 0)).toBe(150_000);
  });

  it('lets a newer state replace a pending retry and reset its attempts', async () => {
    const { calls, reporter, lines, results } = setup({ maxAttempts: 2 });
    reporter.report(join(GUILD_A));
    calls[0]!.reject(new UnavailableError('down', { reason: 'network' }));
    await flush();
    expect(results.at(-1)).toEqual({ guildId: GUILD_A, outcome: 'retry', error: 'Unavailable' });
    // The leave does not wait for the join's backoff.
    reporter.report(leave(GUILD_A));
    expect(calls).toHaveLength(2);
    expect(calls[1]!.update.botPresent).toBe(false);
    calls[1]!.reject(new UnavailableError('down', { reason: 'network' }));
    await flush();
    // attempts started again at 1 for the leave, so one more try is left under maxAttempts 2
    expect(results.at(-1)).toEqual({ guildId: GUILD_A, outcome: 'retry', error: 'Unavailable' });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toHaveLength(3);
    expect(calls[2]!.update.botPresent).toBe(false);
    calls[2]!.resolve();
    await reporter.idle();
    expect(lines.find((l) => l.msg === 'server report sent')).toMatchObject({
      botPresent: false,
      attempt: 2,
    });
  });

  it('does not retry a failed state when a newer one is already queued', async () => {
    const { calls, reporter, lines } = setup();
    reporter.report(join(GUILD_A));
    reporter.report(leave(GUILD_A));
    calls[0]!.reject(new UnavailableError('down', { reason: 'network' }));
    await flush();
    expect(calls).toHaveLength(2);
    calls[1]!.resolve();
    await reporter.idle();
    await vi.advanceTimersByTimeAsync(600_000);
    expect(calls).toHaveLength(2);
    expect(lines.find((l) => l.superseded === true)).toMatchObject({ guildId: GUILD_A, attempt: 1 });
  });

  it('stop() cancels retries, waits for the request in flight, logs how many it dropped', async () => {
    const { calls, reporter, results, lines } = setup();
    reporter.report(join(GUILD_A));
    reporter.report(join(GUILD_B));
    reporter.report(join(GUILD_C));
    calls[0]!.reject(new UnavailableError('down', { reason: 'network' })); // A waits for a retry
    await flush();
    expect(calls).toHaveLength(2); // B in flight, C waiting
    const stopped = reporter.stop();
    let done = false;
    void stopped.then(() => {
      done = true;
    });
    await flush();
    expect(done).toBe(false);
    calls[1]!.resolve();
    await stopped;
    expect(calls[1]!.options?.signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(600_000);
    expect(calls).toHaveLength(2);
    expect(await isIdle(reporter)).toBe(true);
    await reporter.idle();
    const stopLines = lines.filter((l) => String(l.msg).startsWith('server reporter stopped'));
    expect(stopLines).toHaveLength(1);
    expect(stopLines[0]).toMatchObject({ level: LEVEL.warn, dropped: 2, unanswered: 0 });
    expect(stopLines[0]!.msg).toContain('dropped 2');
    expect(stopLines[0]!.guildIds).toEqual([GUILD_C, GUILD_A]);
    expect(results.filter((r) => r.outcome === 'dropped').map((r) => r.guildId)).toEqual([GUILD_C, GUILD_A]);
  });

  it('stop() cancels a request that does not settle in time and counts it when it fails', async () => {
    const { calls, reporter, lines } = setup({ stopTimeoutMs: 2_000 });
    reporter.report(join(GUILD_A));
    const stopped = reporter.stop();
    await vi.advanceTimersByTimeAsync(1_999);
    expect(calls[0]!.options?.signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await stopped;
    expect(calls[0]!.options?.signal?.aborted).toBe(true);
    const failed = lines.find((l) => l.msg === 'server report failed while stopping');
    expect(failed).toMatchObject({ guildId: GUILD_A, attempt: 1, code: 'Unavailable' });
    expect(lines.at(-1)).toMatchObject({ dropped: 1, unanswered: 0, guildIds: [GUILD_A] });
  });

  it('stop() stays bounded when the request ignores the cancel', async () => {
    const { lines, logger } = captureLogger();
    const directory = { postServer: () => new Promise<ServerUpResult>(() => undefined) };
    const reporter = new ServerReporter({ directory, logger, stopTimeoutMs: 1_000 });
    reporter.report(join(GUILD_A));
    const stopped = reporter.stop();
    await vi.advanceTimersByTimeAsync(2_000);
    await stopped;
    expect(lines.at(-1)).toMatchObject({ level: LEVEL.warn, dropped: 0, unanswered: 1 });
  });

  it('stop() with nothing pending logs at info; a second stop() changes nothing', async () => {
    const { reporter, lines } = setup();
    await reporter.stop();
    await reporter.stop();
    const stopLines = lines.filter((l) => String(l.msg).startsWith('server reporter stopped'));
    expect(stopLines).toHaveLength(1);
    expect(stopLines[0]).toMatchObject({ level: LEVEL.info, dropped: 0 });
  });

  it('ignores report() after stop()', async () => {
    const { calls, reporter, results, lines } = setup();
    await reporter.stop();
    reporter.report(join(GUILD_A));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toHaveLength(0);
    expect(lines.find((l) => l.msg === 'server reporter is stopped; report ignored')).toMatchObject({
      guildId: GUILD_A,
    });
    expect(results).toEqual([]);
    await reporter.idle();
  });

  it('never throws or leaks a rejection, whatever the directory or the hook does', async () => {
    const { lines, logger } = captureLogger();
    const directory = {
      postServer: (): Promise<ServerUpResult> => {
        throw new TypeError('boom');
      },
    };
    const reporter = new ServerReporter({
      directory,
      logger,
      maxAttempts: 2,
      random: () => 1,
      onResult: () => {
        throw new Error('metrics down');
      },
    });
    expect(() => reporter.report(join(GUILD_A))).not.toThrow();
    expect(() => reporter.report(null as unknown as GuildReport)).not.toThrow();
    expect(() => reporter.report({ guildId: GUILD_B } as unknown as GuildReport)).not.toThrow();
    await vi.advanceTimersByTimeAsync(10_000);
    await reporter.idle();
    const failures = lines.filter((l) => l.code === 'Unexpected');
    expect(failures.map((l) => [l.attempt, l.guildId, l.level])).toEqual([
      [1, GUILD_A, LEVEL.warn],
      [2, GUILD_A, LEVEL.error],
    ]);
    expect(failures[0]!.error).toBe('TypeError: boom');
    expect(lines.filter((l) => l.msg === 'onResult hook threw')).toHaveLength(2);
    expect(
      lines.filter((l) => l.msg === 'server report without a guildId or botPresent ignored'),
    ).toHaveLength(2);
  });

  it('logs updated false at warn with the directory message, without retrying', async () => {
    const { calls, reporter, lines, results } = setup();
    reporter.report(join(GUILD_A));
    calls[0]!.resolve({ updated: false, message: 'Сервер не найден' });
    await reporter.idle();
    expect(calls).toHaveLength(1);
    expect(results).toEqual([{ guildId: GUILD_A, outcome: 'sent' }]);
    expect(lines.find((l) => l.msg === 'directory did not update the server')).toMatchObject({
      level: LEVEL.warn,
      guildId: GUILD_A,
      directoryMessage: 'Сервер не найден',
    });
  });

  it('keeps the caller from changing a queued report', async () => {
    const { calls, reporter } = setup();
    reporter.report(join(GUILD_A));
    const b = join(GUILD_B);
    reporter.report(b);
    b.membersAll = 999;
    calls[0]!.resolve();
    await flush();
    expect(calls[1]!.update.membersAll).toBe(120);
    calls[1]!.resolve();
    await reporter.idle();
  });
});
