/**
 * Scenario 2: /up end to end. 500 interactions dispatched by the Discord stand-in, 200 in flight
 * at any time, through the real bot to the directory emulator with its /server limit (and the
 * client's) raised out of the way. Time to the deferral (what Discord's 3 s rule is about) and to
 * the final answer, and the event loop's delay meanwhile. The stand-ins run in child processes:
 * this process holds the bot alone, as in production, and both times are taken on the Discord
 * stand-in's clock. First a warm-up burst of 200 (reported apart), then the 500 three times over.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { DEFERRAL_CONNECTIONS, DEFERRAL_PIPELINING } from '../../src/gateway/acknowledge.js';
import { DISCORD_REST_CONNECTIONS } from '../../src/gateway/rest-agent.js';
import { makeGuilds } from '../../test/discord/index.js';
import { pooled, startIsolatedBotRig, type UpRecord } from '../lib/bot.js';
import { size } from '../lib/env.js';
import { atMost, discordTooManyRow, type Row, type ScenarioResult } from '../lib/report.js';
import { median, type Summary, sleep, summarize } from '../lib/stats.js';
import { benchTracing } from '../lib/tracing.js';

const SCENARIO = '2. /up end to end';
const RAISED = { max: 10_000, windowMs: 1_000 };
/**
 * The measured run, this many times: one pass's p99 is decided by the few slowest deferrals of its
 * first burst, so by a few milliseconds of scheduling on a shared machine; the verdict is on the
 * median of the passes' p99 (as scenarios 1 and 5 take medians), and every pass is reported.
 */
const PASSES = size(3, 1);
/** Between bursts: discord.js's 1 s global window resets, so that every pass starts alike. */
const SETTLE_MS = 1_500;

interface Pass {
  records: UpRecord[];
  wallMs: number;
  first: Summary;
  /** The same deferrals, as the stand-in's event loop read them. */
  read: Summary;
}

export async function upEndToEndScenario(): Promise<ScenarioResult> {
  const total = size(500, 100);
  const inFlight = size(200, 50);
  const guildCount = 100;
  const guilds = makeGuilds(guildCount);
  const tracing = await benchTracing();
  const rig = await startIsolatedBotRig({
    guilds,
    emulator: { rateLimits: { global: RAISED, routes: RAISED }, cooldownMs: 1 },
    env: {
      DIRECTORY_RATE_LIMIT: `${RAISED.max}/${RAISED.windowMs}`,
      DIRECTORY_ROUTE_RATE_LIMIT: `${RAISED.max}/${RAISED.windowMs}`,
      ...tracing?.env,
    },
  });
  await tracing?.start(rig.discordRestUrl);
  let exported = { requests: 0, bytes: 0 };
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const upFrom = (i: number) => rig.up(guilds[i % guildCount]?.id ?? '', 120_000);
  /** `count` ups, `inFlight` at a time (the first `inFlight` at once), and their times. */
  const run = async (count: number): Promise<{ records: UpRecord[]; wallMs: number }> => {
    const ups: Array<{ userId: string; outcome: string }> = [];
    const started = performance.now();
    await pooled(count, inFlight, async (i) => {
      ups.push(await upFrom(i));
    });
    const wallMs = performance.now() - started;
    return { records: await rig.records(ups), wallMs };
  };
  let warmUp: UpRecord[] = [];
  const passes: Pass[] = [];
  let connections = 0;
  let discordTooMany = Number.NaN;
  let posts = { posts: 0, withoutStats: 0 };
  let cpu = { user: 0, system: 0 };
  try {
    // Warm-up: one burst of the measured shape, right after start (JIT, connections); its first
    // responses are reported apart, as what the first burst after a restart gets.
    const connectionsBefore = await rig.restConnections();
    warmUp = (await run(inFlight)).records;
    await sleep(SETTLE_MS);
    const measuredFrom = await rig.directoryRequests();
    const cpuFrom = process.cpuUsage();
    for (let pass = 0; pass < PASSES; pass++) {
      if (pass > 0) await sleep(SETTLE_MS);
      loop.enable();
      const { records, wallMs } = await run(total);
      loop.disable();
      passes.push({
        records,
        wallMs,
        first: summarize(timesOf(records, 'firstMs')),
        read: summarize(timesOf(records, 'firstReadMs')),
      });
    }
    cpu = process.cpuUsage(cpuFrom);
    connections = (await rig.restConnections()) - connectionsBefore;
    discordTooMany = await rig.discordTooMany();
    posts = await rig.serverPosts(measuredFrom);
  } finally {
    loop.disable();
    await rig.close();
    if (tracing) exported = await tracing.stop();
  }
  const records = passes.flatMap((p) => p.records);
  const measuredUps = records.length;
  const passP99 = passes.map((p) => p.first.p99);
  const firstP99 = median(passP99);
  const readP99 = median(passes.map((p) => p.read.p99));
  const warmFirst = summarize(timesOf(warmUp, 'firstMs'));
  const wallMs = passes.reduce((sum, p) => sum + p.wallMs, 0);
  const first = summarize(timesOf(records, 'firstMs'));
  const final = summarize(timesOf(records, 'finalMs'));
  const outcomes: Record<string, number> = {};
  for (const r of records) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
  const noDeferral = records.filter((r) => r.firstMs === undefined).length;
  const noFinal = records.filter((r) => r.finalMs === undefined).length;
  const loopP99 = loop.percentile(99) / 1e6;
  const traced = tracing
    ? `; traces on, ${tracing.ratio * 100} % sampled (${exported.requests} OTLP exports, ${Math.round(exported.bytes / 1024)} kB)`
    : '';
  const label = `${total} ups, ${inFlight} in flight; ${PASSES} ${PASSES === 1 ? 'pass' : 'passes'} after a warm-up burst${traced}`;
  const ms = (n: number): string => `${n.toFixed(1)} ms`;
  const rows: Row[] = [
    {
      scenario: SCENARIO,
      metric: `first response p50 (${label})`,
      unit: 'ms',
      ours: first.p50,
      verdict: 'info',
      note: `over the ${measuredUps.toLocaleString('en-US')} measured ups`,
    },
    {
      scenario: SCENARIO,
      metric: PASSES === 1 ? 'first response p99' : `first response p99 (median of ${PASSES} passes)`,
      unit: 'ms',
      ours: firstP99,
      target: '≤ 50 ms',
      verdict: noDeferral > 0 ? 'FAIL' : atMost(firstP99, 50),
      note:
        "deferral callback as it reached the stand-in's relay (on a thread of its own), after dispatch; " +
        `passes ${passP99.map(ms).join(', ')}; over all ${measuredUps.toLocaleString('en-US')}: ` +
        `p99 ${ms(first.p99)}, max ${ms(first.max)}` +
        (noDeferral > 0
          ? `; ${noDeferral} of ${measuredUps} got no accepted deferral (Discord's 3 s window)`
          : ''),
    },
    {
      scenario: SCENARIO,
      metric:
        PASSES === 1
          ? 'first response p99 as the stand-in read it'
          : `first response p99 as the stand-in read it (median of ${PASSES} passes)`,
      unit: 'ms',
      ours: readP99,
      verdict: 'info',
      note:
        "the same callbacks, timed when the stand-in's own event loop took them up (the measure before " +
        'the relay): its writing of the burst and its answers to the requests before it count in; ' +
        `passes ${passes.map((p) => ms(p.read.p99)).join(', ')}`,
    },
    {
      scenario: SCENARIO,
      metric: `first response p99 of the warm-up burst (${inFlight} at once)`,
      unit: 'ms',
      ours: warmFirst.p99,
      verdict: 'info',
      note:
        `the first burst after start, before any JIT warm-up: p50 ${ms(warmFirst.p50)}, ` +
        `max ${ms(warmFirst.max)}; not measured against the target`,
    },
    { scenario: SCENARIO, metric: 'final answer p50', unit: 'ms', ours: final.p50, verdict: 'info' },
    {
      scenario: SCENARIO,
      metric: 'final answer p99',
      unit: 'ms',
      ours: final.p99,
      verdict: 'info',
      note: `edit of @original or follow-up; outcomes: ${JSON.stringify(outcomes)}; ${noFinal} without one`,
    },
    {
      scenario: SCENARIO,
      metric: `ups sent without guild statistics (of ${posts.posts})`,
      unit: '',
      ours: posts.withoutStats,
      verdict: 'info',
      note:
        "gathered from Discord's REST (GET guild, GET owner) within 2 s; discord.js's global limit " +
        '(50 requests/s by default) paces those GETs and the final edits and follow-ups, not the deferrals',
    },
    {
      scenario: SCENARIO,
      metric: 'connections opened to Discord REST',
      unit: '',
      ours: connections,
      verdict: 'info',
      note:
        'accepted by the Discord stand-in from the warm-up burst to the end of the last pass, used or not; ' +
        'the bot keeps at most ' +
        `${DEFERRAL_CONNECTIONS} for deferrals (${DEFERRAL_PIPELINING} callbacks in flight on each) and ` +
        `${DISCORD_REST_CONNECTIONS} for discord.js's requests, alive between requests`,
    },
    {
      scenario: SCENARIO,
      metric: 'event-loop delay p99',
      unit: 'ms',
      ours: loopP99,
      verdict: 'info',
      note: "the bot's process; the Discord stand-in and the emulator run in child processes",
    },
    {
      scenario: SCENARIO,
      metric: "CPU of the bot's process per up",
      unit: 'µs',
      ours: (cpu.user + cpu.system) / measuredUps,
      verdict: 'info',
      note: 'user + system over the measured ups, with the bench bookkeeping in the same process',
    },
    {
      scenario: SCENARIO,
      metric: 'throughput',
      unit: 'ups/s',
      ours: (measuredUps / wallMs) * 1_000,
      verdict: 'info',
    },
    discordTooManyRow(SCENARIO, discordTooMany),
  ];
  return {
    rows,
    data: {
      total,
      inFlight,
      passes: passes.map((p) => ({ wallMs: Math.round(p.wallMs), firstResponseMs: p.first })),
      guilds: guildCount,
      wallMs: Math.round(wallMs),
      cpuMicros: cpu,
      firstResponseMs: first,
      firstResponseP99MedianOfPassesMs: firstP99,
      warmUpFirstResponseMs: warmFirst,
      finalAnswerMs: final,
      eventLoopDelayMs: {
        p50: loop.percentile(50) / 1e6,
        p99: loopP99,
        max: loop.max / 1e6,
      },
      outcomes,
      serverPosts: posts,
      connectionsToDiscordRest: connections,
      discordTooMany,
      withoutDeferral: noDeferral,
      withoutFinalAnswer: noFinal,
    },
  };
}

/** The times the records have (an up without a deferral or a final answer has none). */
function timesOf(records: readonly UpRecord[], key: 'firstMs' | 'firstReadMs' | 'finalMs'): number[] {
  return records.flatMap((r) => (r[key] === undefined ? [] : [r[key]]));
}
