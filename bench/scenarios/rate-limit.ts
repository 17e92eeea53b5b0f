/**
 * Scenario 3: the rate-limit ceiling. The emulator enforces a scaled-up /server limit and the
 * bot's client is configured with the same limits (and its production margin). /up is fired
 * from many guilds (one up each, so no cooldown refuses) faster than the ceiling for ~20 s:
 * how close the ups come to the ceiling once a backlog has formed, whether the directory ever
 * answers 429, and whether every interaction got its final answer (raised, or told how long
 * to wait) inside its 15-minute window.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { makeGuilds } from '../../test/discord/index.js';
import { startBotRig, type UpRecord } from '../lib/bot.js';
import { size } from '../lib/env.js';
import { serverPosts } from '../lib/records.js';
import { atLeast, atMost, discordTooManyRow, type Row, type ScenarioResult } from '../lib/report.js';
import { sleep, summarize } from '../lib/stats.js';

const SCENARIO = '3. Rate-limit ceiling';
/** The directory's /server limit, scaled up from 1 per 2 s. */
const ROUTE_LIMIT = { max: 20, windowMs: 1_000 };
/** The global limit, raised so that /server is the one that binds. */
const GLOBAL_LIMIT = { max: 50, windowMs: 1_000 };
/** The client's margin as deployed (DIRECTORY_RATE_LIMIT_MARGIN_MS default). */
const MARGIN_MS = 25;
const FIFTEEN_MINUTES = 15 * 60_000;
/** Offered load against the ceiling: enough to keep a backlog in the client's limiter. */
const OVERLOAD = 1.5;
/** A shorter backlog says too little about a rate over 1 s windows. */
const MIN_BACKLOG_MS = 2_000;

export async function rateLimitScenario(): Promise<ScenarioResult> {
  const durationMs = size(20_000, 5_000);
  const ceiling = (ROUTE_LIMIT.max * 1_000) / ROUTE_LIMIT.windowMs;
  const offeredPerSecond = ceiling * OVERLOAD;
  const total = Math.round((offeredPerSecond * durationMs) / 1_000);
  const guilds = makeGuilds(total);
  // When the client let each up go (its rate-limit hook), to set against its arrival.
  const grantedAt: number[] = [];
  const rig = await startBotRig({
    guilds,
    emulator: { rateLimits: { global: GLOBAL_LIMIT, routes: ROUTE_LIMIT } },
    env: {
      DIRECTORY_RATE_LIMIT: `${GLOBAL_LIMIT.max}/${GLOBAL_LIMIT.windowMs}`,
      DIRECTORY_ROUTE_RATE_LIMIT: `${ROUTE_LIMIT.max}/${ROUTE_LIMIT.windowMs}`,
      DIRECTORY_RATE_LIMIT_MARGIN_MS: String(MARGIN_MS),
    },
    onRateLimitGrant: (info) => {
      if (info.buckets.includes('server')) grantedAt.push(Date.now());
    },
  });
  const directory = rig.bot.directory;
  // The client's queue over time (Date.now, the emulator's clock): where the backlog starts and ends.
  const queue: Array<{ at: number; pending: number }> = [];
  const sampler = setInterval(() => queue.push({ at: Date.now(), pending: directory.waiting }), 50);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const pending: Array<Promise<UpRecord>> = [];
  const started = performance.now();
  let wallMs = 0;
  let discordTooMany = Number.NaN;
  try {
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1_000) / offeredPerSecond;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const guild = guilds[i];
      if (guild) pending.push(rig.up(guild.id, 300_000).done);
    }
    await Promise.all(pending);
    wallMs = performance.now() - started;
    discordTooMany = rig.discord.globalRateLimited();
  } finally {
    loop.disable();
    clearInterval(sampler);
    await rig.close();
  }
  const records = await Promise.all(pending);

  const tooMany = rig.emu.requests.filter((r) => r.status === 429).length;
  const accepted = rig.emu.requests.filter(
    (r) => r.method === 'POST' && /^\/v[12]\/server$/.test(r.path) && r.status === 200,
  );
  const firstAt = accepted[0]?.at ?? 0;
  const lastAt = accepted.at(-1)?.at ?? 0;
  const overall = accepted.length > 1 ? ((accepted.length - 1) * 1_000) / (lastAt - firstAt) : Number.NaN;
  // Sustained: from the first time a full window's worth of ups waits in the client to the last
  // moment anything waits; the directory's limit is what binds over that stretch.
  const backlogFrom = queue.find((q) => q.pending >= ROUTE_LIMIT.max)?.at;
  const backlogTo = [...queue].reverse().find((q) => q.pending > 0)?.at;
  const backlogMs = backlogFrom !== undefined && backlogTo !== undefined ? backlogTo - backlogFrom : 0;
  const inBacklog = accepted.filter(
    (r) => backlogFrom !== undefined && r.at >= backlogFrom && r.at <= (backlogTo ?? 0),
  );
  const sustained = backlogMs >= MIN_BACKLOG_MS ? (inBacklog.length * 1_000) / backlogMs : Number.NaN;

  const maxQueued = Math.max(0, ...queue.map((q) => q.pending));
  // Paired in order (grants and arrivals keep roughly the same order): how long an up took from
  // the client's grant to the directory's count. Past window + margin, the client's log may
  // already have let it go.
  const serverPostsAt = rig.emu.requests
    .filter((r) => r.method === 'POST' && /^\/v[12]\/server$/.test(r.path))
    .map((r) => r.at);
  const lag = summarize(
    grantedAt.flatMap((at, i) => (serverPostsAt[i] === undefined ? [] : [(serverPostsAt[i] as number) - at])),
  );
  const refused = rig.emu.requests
    .filter((r) => r.status === 429)
    .map((r) => ({
      at: r.at - (serverPostsAt[0] ?? 0),
      path: r.path,
      inPrecedingWindow: serverPostsAt.filter((t) => t > r.at - ROUTE_LIMIT.windowMs && t <= r.at).length,
    }));
  const outcomes: Record<string, number> = {};
  for (const r of records) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
  const answered = records.filter((r) => r.finalMs !== undefined && r.finalMs < FIFTEEN_MINUTES);
  const rateLimited = records.filter((r) => r.outcome === 'error:RateLimited').length;
  const succeeded = records.filter((r) => r.outcome === 'success').length;
  const final = summarize(answered.map((r) => r.finalMs as number));
  const first = summarize(records.flatMap((r) => (r.firstMs === undefined ? [] : [r.firstMs])));
  const posts = serverPosts(rig.emu.requests);
  const bestWithMargin = (ROUTE_LIMIT.max * 1_000) / (ROUTE_LIMIT.windowMs + MARGIN_MS);
  const limitText = `${ROUTE_LIMIT.max} per ${ROUTE_LIMIT.windowMs} ms`;
  const rows: Row[] = [
    {
      scenario: SCENARIO,
      metric: `ups/s while backlogged (${offeredPerSecond}/s offered for ${durationMs / 1_000} s)`,
      unit: '/s',
      ours: sustained,
      baseline: ceiling,
      ratio: sustained / ceiling,
      target: '≥ 0.95x ceiling',
      verdict: atLeast(sustained / ceiling, 0.95),
      note:
        `ceiling ${limitText} on /server (server and client); the client counts each window from ` +
        `the directory's answer plus its ${MARGIN_MS} ms margin, so ${bestWithMargin.toFixed(1)}/s ` +
        `(${(bestWithMargin / ceiling).toFixed(2)}x) is its best; ` +
        `backlog lasted ${(backlogMs / 1_000).toFixed(1)} s`,
    },
    {
      scenario: SCENARIO,
      metric: 'ups/s over the whole run',
      unit: '/s',
      ours: overall,
      baseline: ceiling,
      ratio: overall / ceiling,
      verdict: 'info',
    },
    {
      scenario: SCENARIO,
      metric: '429 answers from the directory',
      unit: '',
      ours: tooMany,
      target: '0',
      verdict: atMost(tooMany, 0),
      note: `grant to arrival at the directory: p99 ${lag.p99.toFixed(0)} ms, max ${lag.max.toFixed(0)} ms`,
    },
    {
      scenario: SCENARIO,
      metric: `interactions with a final answer (of ${total})`,
      unit: '',
      ours: answered.length,
      target: `all, < 15 min`,
      verdict: answered.length === total ? 'pass' : 'FAIL',
      note: `outcomes: ${JSON.stringify(outcomes)}`,
    },
    { scenario: SCENARIO, metric: '… raised (success)', unit: '', ours: succeeded, verdict: 'info' },
    {
      scenario: SCENARIO,
      metric: '… told how long to wait (rate limited)',
      unit: '',
      ours: rateLimited,
      verdict: 'info',
    },
    {
      scenario: SCENARIO,
      metric: `ups sent without guild statistics (of ${posts.posts})`,
      unit: '',
      ours: posts.withoutStats,
      verdict: 'info',
    },
    { scenario: SCENARIO, metric: 'first response p99', unit: 'ms', ours: first.p99, verdict: 'info' },
    {
      scenario: SCENARIO,
      metric: 'event-loop delay p99',
      unit: 'ms',
      ours: loop.percentile(99) / 1e6,
      verdict: 'info',
      note: `max ${(loop.max / 1e6).toFixed(0)} ms; up to ${maxQueued} ups waited in the client's limiter`,
    },
    { scenario: SCENARIO, metric: 'final answer p50', unit: 'ms', ours: final.p50, verdict: 'info' },
    {
      scenario: SCENARIO,
      metric: 'final answer p99',
      unit: 'ms',
      ours: final.p99,
      verdict: 'info',
      note: 'the wait in the queue behind the ceiling',
    },
    discordTooManyRow(SCENARIO, discordTooMany),
  ];
  return {
    rows,
    data: {
      routeLimit: ROUTE_LIMIT,
      globalLimit: GLOBAL_LIMIT,
      marginMs: MARGIN_MS,
      offeredPerSecond,
      durationMs,
      total,
      wallMs: Math.round(wallMs),
      acceptedUps: accepted.length,
      sustainedPerSecond: sustained,
      overallPerSecond: overall,
      backlogMs,
      maxQueued,
      ceilingPerSecond: ceiling,
      tooManyRequests: tooMany,
      refused,
      grantToArrivalMs: lag,
      outcomes,
      serverPosts: posts,
      firstResponseMs: first,
      finalAnswerMs: final,
      eventLoopDelayMs: {
        p50: loop.percentile(50) / 1e6,
        p99: loop.percentile(99) / 1e6,
        max: loop.max / 1e6,
      },
    },
  };
}
