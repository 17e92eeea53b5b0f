/**
 * The statistics poster in process, end to end: the real bot (createBot with postStats) on the
 * Discord stand-in with 4 shards and 300 guilds of varied sizes, posting to the directory emulator.
 * Every socket is on 127.0.0.1; the poster's delays are shortened through createBot's `stats`. The
 * bot is started on the rig of the end-to-end tests (test/support/rig.ts).
 */
import { Events } from 'discord.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BotApp, BotOptions } from '../../src/app/bot.js';
import type { Environment } from '../../src/config/env.js';
import { createMetrics, type Metrics } from '../../src/ops/metrics.js';
import type { DiscordStandIn } from '../discord/index.js';
import { assertNoViolations } from '../discord/spec/conformance.js';
import { type Emulator, type FaultRule, IDS, type RecordedRequest, TOKENS } from '../emulator/index.js';
import { createRigBot, HandledLines, rigEnvironment, type StandIns, startStandIns } from '../support/rig.js';
import { tempDir } from '../support/temp.js';
import {
  bodyOf,
  discordLikeToken,
  eventually,
  guildSet,
  LEVEL,
  type LogEntry,
  LogSink,
  leaksIn,
  linesOf,
  type StatsBody,
  sample,
  sleep,
  statsRequests,
  withTimeout,
} from './helpers.js';

const SHARDS = 4;
const GUILDS = 300;

let stage: StandIns;
let emu: Emulator;
let discord: DiscordStandIn;
let users: number;
let expected: StatsBody;
/** Date.now() when the emulator finished answering a request (not set for dropped or abandoned ones). */
const answeredAt = new WeakMap<RecordedRequest, number>();
const secrets = new Set<string>(Object.values(TOKENS));
/** The bots' store, one after the other. */
const data = tempDir('ops-stats-data-');

interface Running {
  bot: BotApp;
  metrics: Metrics;
  sink: LogSink;
  started: Promise<void>;
  /** The login, settled or not: what the teardown waits for after stop(). */
  login: Promise<unknown>;
}
let running: Running | undefined;

beforeAll(async () => {
  // No emulator rate limits here: the 429s of these tests are injected, one at a time.
  const set = guildSet(GUILDS);
  users = set.users;
  expected = { servers: GUILDS, shards: SHARDS, users };
  stage = await startStandIns({
    emulator: { rateLimits: false, log: (request) => answeredAt.set(request, Date.now()) },
    discord: { shards: SHARDS, guilds: set.guilds, token: discordLikeToken() },
  });
  ({ emu, discord } = stage);
  secrets.add(discord.token);
});

afterEach(async () => {
  const current = running;
  running = undefined;
  try {
    if (current) {
      // Bounded: client.destroy() hangs while a shard waits for READY (see processes.test.ts).
      await withTimeout(current.bot.stop(500), 5_000, 'the bot to stop').catch((err: unknown) => {
        console.error(String(err));
      });
      await current.login;
      const leaked = leaksIn(linesOf('log line', current.sink.lines), secrets);
      current.sink.close();
      expect(leaked, 'no token in the bot log').toEqual([]);
    }
  } finally {
    for (let shard = 0; shard < SHARDS; shard += 1) discord.setIdentifyDelay(shard, 0);
    discord.clearRestFaults();
    emu.reset();
  }
}, 15_000);

afterAll(async () => {
  await stage?.close();
  data.remove();
  assertNoViolations(discord?.specViolations() ?? []);
});

/** The bot on the stand-in, posting to the emulator; resolves once it is created (not yet ready). */
async function startBot(env: Environment, stats: BotOptions['stats']): Promise<Running> {
  const places = { directoryUrl: emu.url, discordRestUrl: discord.restUrl, discordToken: discord.token };
  const sink = new LogSink();
  const rig = await createRigBot({
    env: rigEnvironment(
      { ...places, dataDir: data.path },
      {
        SHARD_COUNT: String(SHARDS),
        // The client's own limiter allows one POST /stats per 2 s by default; these intervals are shorter.
        DIRECTORY_RATE_LIMIT: '1000/1000',
        DIRECTORY_ROUTE_RATE_LIMIT: '1000/1000',
        DIRECTORY_RATE_LIMIT_MARGIN_MS: '0',
        LOG_LEVEL: 'debug',
        ...env,
      },
    ),
    log: new HandledLines(sink),
    metrics: (logger) => createMetrics({ logger, defaultMetrics: false }),
    postStats: true,
    stats,
  });
  for (const secret of rig.secrets) secrets.add(secret);
  const metrics = rig.metrics;
  if (!metrics) throw new Error('the rig made no metrics');
  const started = rig.start();
  // A test that ends before the bot is ready leaves this rejected: the teardown waits for the login.
  started.catch(() => undefined);
  running = { bot: rig.app, metrics, sink, started, login: rig.login };
  return running;
}

function waitForStats(pred: (r: RecordedRequest) => boolean, timeoutMs: number, what: string) {
  return eventually(() => statsRequests(emu).find(pred), timeoutMs, what, 20);
}

/** Waits until `count` POST /stats were answered 200 after `from` (an index into statsRequests). */
function waitForPosts(from: number, count: number, timeoutMs: number): Promise<RecordedRequest[]> {
  return eventually(
    () => {
      const ok = statsRequests(emu)
        .slice(from)
        .filter((r) => r.status === 200 && answeredAt.has(r));
      return ok.length >= count ? ok.slice(0, count) : undefined;
    },
    timeoutMs,
    `${count} successful POST /stats`,
    20,
  );
}

async function outcomes(metrics: Metrics): Promise<Record<string, number>> {
  const text = await metrics.registry.metrics();
  const out: Record<string, number> = {};
  for (const outcome of ['posted', 'skipped-not-ready', 'unauthorized', 'rate-limited', 'failed']) {
    out[outcome] = sample(text, 'directory_stats_posts_total', { outcome }) ?? 0;
  }
  return out;
}

const wallClock = (performanceAt: number): number => performance.timeOrigin + performanceAt;
const answerOf = (r: RecordedRequest): string => (answeredAt.has(r) ? String(r.status) : 'no answer');

describe('stats poster in process (4 shards, 300 guilds)', () => {
  it('posts the true totals, and nothing while a shard is still connecting', async () => {
    // Shard 3's READY comes 1.5 s after its IDENTIFY: the bot is not ready, nothing may be posted.
    discord.setIdentifyDelay(3, 1_500);
    const startedAt = Date.now();
    const { bot, metrics, sink, started } = await startBot(
      {},
      { intervalMs: 700, firstDelayMs: 100, startDelayMs: 0, notReadyRetryMs: 100 },
    );
    await discord.waitForShards(3, 5_000);
    expect(discord.connectedShards()).toEqual([0, 1, 2]);
    await sleep(700);
    expect(statsRequests(emu), 'no POST /stats while shard 3 connects').toEqual([]);
    await started;
    const shard3Ready = discord.gatewayLog.find((e) => e.kind === 'ready' && e.shardId === 3);
    expect(shard3Ready).toBeDefined();
    const readyAt = wallClock(shard3Ready?.at ?? 0);
    expect(readyAt - startedAt).toBeGreaterThanOrEqual(1_400);

    const [first] = await waitForPosts(0, 1, 5_000);
    expect(first).toBeDefined();
    expect(bodyOf(first as RecordedRequest)).toEqual(expected);
    expect(statsRequests(emu).every((r) => r.at >= readyAt)).toBe(true);
    expect(emu.state.bots.get(IDS.serviceBot)?.information.stats).toEqual(expected);
    // The emulator has answered; the poster takes the answer in a moment later.
    const posted = await sink.waitFor(
      (e) => e.msg === 'stats posted',
      2_000,
      'the poster to take the answer',
    );
    expect(posted.body).toEqual(expected);

    // Shard 2's session ends (4007, invalid seq): discord.js identifies anew, after its identify
    // throttle (5 s per bucket since its last identify), and the stand-in holds the READY 0.5 s more.
    discord.setIdentifyDelay(2, 500);
    const noticed = new Promise<number>((resolve) =>
      bot.client.once(Events.ShardReconnecting, () => resolve(Date.now())),
    );
    const disconnectedAt = Date.now();
    discord.disconnectShard(2, 4007);
    const noticedAt = await withTimeout(noticed, 2_000, 'the bot to see shard 2 go');
    const back = await eventually(
      () =>
        discord.gatewayLog.find(
          (e) => e.kind === 'ready' && e.shardId === 2 && wallClock(e.at) > disconnectedAt,
        ),
      // discord.js's identify throttle (up to 5 s) and the 0.5 s hold.
      10_000,
      'shard 2 to be ready again',
    );
    const backAt = wallClock(back.at);
    expect(backAt - disconnectedAt).toBeGreaterThanOrEqual(450);
    // A tick whose snapshot was taken just before the bot noticed may still land: 200 ms of slack.
    const during = statsRequests(emu).filter((r) => r.at > noticedAt + 200 && r.at < backAt);
    expect(during, 'no POST /stats while shard 2 re-identifies').toEqual([]);
    expect((await outcomes(metrics))['skipped-not-ready']).toBeGreaterThanOrEqual(1);
    const skipped = running?.sink.count((e) => e.msg === 'not every shard is ready; stats post skipped') ?? 0;
    expect(skipped).toBeGreaterThanOrEqual(1);

    const after = await waitForStats(
      (r) => r.at > backAt && r.status === 200,
      5_000,
      'a post after shard 2 is back',
    );
    expect(bodyOf(after)).toEqual(expected);
  }, 30_000);

  it('posts once per interval and never two at a time, even when the directory is slower', async () => {
    const intervalMs = 500;
    const { started } = await startBot({}, { intervalMs, firstDelayMs: 0, startDelayMs: 0 });
    await started;
    const steady = await waitForPosts(0, 3, 8_000);
    const starts = steady.map((r) => r.at);
    const gaps = starts.slice(1).map((at, i) => at - (starts[i] as number));
    console.log(`stats post gaps at a ${intervalMs} ms interval: ${gaps.join(', ')} ms`);
    for (const gap of gaps) {
      // Measured where the posts arrive: one held up 35 ms on its way by a loaded machine makes
      // the next gap that much shorter, though the ticks kept the interval.
      expect(gap).toBeGreaterThanOrEqual(intervalMs - 60);
      expect(gap).toBeLessThan(intervalMs + 600);
    }

    // The next POST /stats take 1.2 s each, longer than the interval.
    const from = statsRequests(emu).length;
    emu.faults.add({ kind: 'latency', ms: 1_200, method: 'POST', path: /^\/stats$/, times: 2 });
    const slow = await waitForPosts(from, 3, 12_000);
    const all = statsRequests(emu);
    for (let i = 1; i < all.length; i += 1) {
      const previous = all[i - 1] as RecordedRequest;
      const previousEnd = answeredAt.get(previous);
      expect(previousEnd, `request ${i - 1} was answered`).toBeDefined();
      // Never concurrent: each request starts only after the previous one was answered.
      expect((all[i] as RecordedRequest).at).toBeGreaterThanOrEqual(previousEnd as number);
    }
    const slowGaps = slow.slice(1).map((r, i) => r.at - (slow[i] as RecordedRequest).at);
    console.log(`stats post gaps while each post takes 1.2 s: ${slowGaps.join(', ')} ms`);
    for (const gap of slowGaps) expect(gap).toBeGreaterThanOrEqual(1_180);
    for (const r of slow) expect(bodyOf(r)).toEqual(expected);
  }, 30_000);

  it('survives 500, 503, 429, timeouts, dropped connections and 401s, posting again after each', async () => {
    const intervalMs = 500;
    const { metrics, sink, started } = await startBot(
      { DIRECTORY_TIMEOUT_MS: '300' },
      {
        intervalMs,
        firstDelayMs: 0,
        startDelayMs: 0,
        retry: { attempts: 2, baseMs: 100, capMs: 400 },
      },
    );
    await started;
    await waitForPosts(0, 1, 5_000);

    // `logged`: the poster itself sees the failure (a 503 is retried inside the directory client).
    const cases: Array<{ name: string; rule: FaultRule; logged: boolean }> = [
      { name: '500', rule: { kind: 'status', status: 500 }, logged: true },
      { name: '503', rule: { kind: 'status', status: 503 }, logged: false },
      { name: '429 (Retry-After 1 s)', rule: { kind: 'rate-limit', retryAfterMs: 1_000 }, logged: true },
      { name: 'timeout (stall 2 s > 300 ms)', rule: { kind: 'stall', ms: 2_000 }, logged: true },
      { name: 'dropped connection', rule: { kind: 'drop' }, logged: true },
      { name: '401 twice', rule: { kind: 'status', status: 401, times: 2 }, logged: true },
    ];
    const table: string[] = [];
    for (const { name, rule, logged } of cases) {
      // Start right after a successful post, so the fault meets the next tick.
      const before = statsRequests(emu).length;
      await waitForPosts(before, 1, 3_000);
      const from = statsRequests(emu).length;
      const logFrom = sink.entries.length;
      const outcomesBefore = await outcomes(metrics);
      emu.faults.add({ times: 1, ...rule, method: 'POST', path: /^\/stats$/ });
      const [recovered] = await waitForPosts(from, 1, 8_000);
      const seen = statsRequests(emu).slice(from);
      const upTo = seen.indexOf(recovered as RecordedRequest);
      const faulted = seen.slice(0, upTo);
      expect(faulted.length, `${name}: the fault was met`).toBeGreaterThanOrEqual(1);
      expect(bodyOf(recovered as RecordedRequest)).toEqual(expected);
      // The emulator answers before the poster reports the tick: wait for the outcome to be counted.
      const outcomesAfter = await eventually(
        async () => {
          const now = await outcomes(metrics);
          return (now.posted ?? 0) > (outcomesBefore.posted ?? 0) ? now : undefined;
        },
        2_000,
        `${name}: the successful post to be counted`,
      );
      const delta = Object.entries(outcomesAfter)
        .map(([k, v]) => [k, v - (outcomesBefore[k] ?? 0)] as const)
        .filter(([, v]) => v > 0)
        .map(([k, v]) => `${k}+${v}`)
        .join(' ');
      const logs = sink.entries
        .slice(logFrom)
        .filter((e: LogEntry) => e.task === 'stats-poster' && (e.level ?? 0) >= LEVEL.warn)
        .map((e) => {
          const retry = typeof e.retryInMs === 'number' ? `, retry in ${e.retryInMs} ms` : '';
          return `${e.level === LEVEL.error ? 'error' : 'warn'} "${e.msg}" (${String(e.code)}${retry})`;
        });
      const timeline = [...faulted, recovered as RecordedRequest]
        .map(
          (r, i, list) =>
            `${i === 0 ? '' : `+${r.at - (list[i - 1] as RecordedRequest).at}ms `}${answerOf(r)}`,
        )
        .join(' → ');
      table.push(`| ${name} | ${timeline} | ${delta} | ${[...new Set(logs)].join('; ')} |`);
      if (logged) expect(logs.length, `${name}: the poster logged the failure`).toBeGreaterThanOrEqual(1);
      if (rule.kind === 'rate-limit') {
        // The Retry-After (1 s) is longer than the retry cap: the poster waits it out, then posts.
        expect(
          (recovered as RecordedRequest).at - (faulted.at(-1) as RecordedRequest).at,
        ).toBeGreaterThanOrEqual(950);
        expect(outcomesAfter['rate-limited']).toBeGreaterThan(outcomesBefore['rate-limited'] ?? 0);
      }
      if (rule.kind === 'status' && rule.status === 401) {
        // Not retried within the tick: one refused request per interval.
        expect(faulted).toHaveLength(2);
        const gap = (faulted[1] as RecordedRequest).at - (faulted[0] as RecordedRequest).at;
        expect(gap).toBeGreaterThanOrEqual(intervalMs - 20);
        expect(outcomesAfter.unauthorized).toBe((outcomesBefore.unauthorized ?? 0) + 2);
        expect(logs.some((l) => l.startsWith('error') && l.includes('Unauthorized'))).toBe(true);
      }
    }
    console.log(['| fault | POST /stats seen | outcomes | poster log |', ...table].join('\n'));
    // Still ticking after all of that.
    await waitForPosts(statsRequests(emu).length, 2, 3_000);
  }, 45_000);

  it('keeps ticking with a token the directory refuses, and recovers once it accepts it', async () => {
    const wrong = `ops-wrong-token-${discordLikeToken().slice(0, 12)}`;
    secrets.add(wrong);
    const { metrics, sink, started } = await startBot(
      { DIRECTORY_TOKEN: wrong },
      { intervalMs: 500, firstDelayMs: 0, startDelayMs: 0 },
    );
    await started;
    const refused = await eventually(
      () => {
        const seen = statsRequests(emu).filter((r) => r.status === 401);
        return seen.length >= 3 ? seen : undefined;
      },
      6_000,
      'three refused posts',
    );
    expect(refused.map((r) => r.status)).toEqual([401, 401, 401]);
    // The emulator records the third 401 as it answers; the bot logs it once it has read the answer.
    const refusedLines = (): LogEntry[] =>
      sink.entries.filter(
        (e) => e.level === LEVEL.error && e.msg === 'stats post refused; trying again at the next interval',
      );
    const errors = await eventually(
      () => (refusedLines().length >= 3 ? refusedLines() : undefined),
      2_000,
      'three "stats post refused" lines',
    ).catch(() => refusedLines());
    expect(errors.length).toBeGreaterThanOrEqual(3);
    expect(String(errors[0]?.hint)).toContain('DIRECTORY_TOKEN');
    const unauthorized = async (): Promise<number> => (await outcomes(metrics)).unauthorized ?? 0;
    await eventually(async () => ((await unauthorized()) >= 3 ? true : undefined), 2_000, 'the metric').catch(
      () => undefined,
    );
    expect(await unauthorized()).toBeGreaterThanOrEqual(3);

    // The operator fixes the token on the directory's side: no restart.
    const valid = emu.state.tokens.get(TOKENS.serviceBot);
    expect(valid).toBeDefined();
    if (valid) emu.state.tokens.set(wrong, valid);
    const ok = await waitForStats((r) => r.status === 200, 3_000, 'a post once the token is accepted');
    expect(bodyOf(ok)).toEqual(expected);
    const recovered = await sink.waitFor(
      (e) => typeof e.msg === 'string' && e.msg.startsWith('stats posted; recovered after'),
      2_000,
      'the recovery line',
    );
    expect(recovered.recoveredFrom).toBe('Unauthorized');
    expect((await outcomes(metrics)).posted).toBeGreaterThanOrEqual(1);
  }, 30_000);
});
