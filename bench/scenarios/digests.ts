/**
 * Scenario 14: the digests at a period boundary. 10,000 servers (BENCH_QUICK: 1,000), each with a
 * weekly digest in a text channel of its own and a few members' ups in the week that ends (1 to 5
 * members, 1 to 20 ups each), all their weeks ending at one boundary, T0. The bot's digest
 * scheduler and sender (in a process of their own, `workers/digests-worker.ts`: a fresh SQLite
 * store, the classes `postEngines` builds, a real chart renderer, @discordjs/rest paced as the bot
 * paces it) post them to the Discord stand-in in this process, Discord's global limit on (50
 * requests a second, a 429 beyond it). Each digest is due at T0 plus its server's share of the
 * spread (`spreadOf`, features/digests/plan.ts): DIGEST_SPREAD_MS, five minutes, in the full run;
 * 30 s for the quick run's 1,000 (the same 33 posts a second). A digest's chart names nobody (one
 * series of every up), so each digest is one request to Discord: its post.
 *
 * Per digest, its post's arrival at the stand-in after its due time (lateness p50/p99, info); the
 * time from T0 to the last post (target ≤ 10 min; quick: twice its spread); every digest posted
 * exactly once (the stand-in's messages per channel); the most posts in any second (info); the
 * stand-in's 429s (target 0); the charts drawn.
 *
 * It takes the spread and more (about 5.5 minutes in all), which the full run's 9 minutes cannot
 * hold after the other scenarios: it runs only when named (BENCH_ONLY=14), and skips itself when
 * what is left of the run's budget cannot hold it.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIGEST_SPREAD_MS, spreadOf } from '../../src/features/digests/plan.js';
import {
  DISCORD_GLOBAL_LIMIT,
  type DiscordStandIn,
  discordLikeToken,
  type GuildFixture,
  makeGuilds,
  type PostedMessage,
  startDiscordStandIn,
} from '../../test/discord/index.js';
import { type Budget, compiled, size } from '../lib/env.js';
import { atMost, discordTooManyRow, type Row, type ScenarioResult } from '../lib/report.js';
import { summarize } from '../lib/stats.js';
import type { DigestsJob, DigestsSent } from '../workers/digests-worker.js';

const SCENARIO = '14. Digests at a boundary';
/** The issue's target: every digest of a boundary sent within 10 minutes of it (quick: 2 × its spread). */
const LAST_TARGET_MS = size(10 * 60_000, 60_000);
/** How long the store takes to fill before T0 (10,000 servers: about 15 s on 2 cores), with room. */
const SEED_MS = size(60_000, 12_000);
/** Kept after the worker's bound: its exit, the count at the stand-in. */
const MARGIN_MS = 10_000;

const channelOf = (g: GuildFixture): string => (g.channels[0] as { id: string }).id;

function runWorker(jobFile: string, timeoutMs: number): Promise<DigestsSent> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [compiled('bench/workers/digests-worker.js'), jobFile],
      { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${err.message.split('\n')[0]}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as DigestsSent);
      },
    );
  });
}

/** The most of `times` (ms) in any 1,000 ms (a sliding window). */
function busiestSecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let from = 0;
  for (let to = 0; to < sorted.length; to++) {
    while ((sorted[to] as number) - (sorted[from] as number) >= 1_000) from++;
    most = Math.max(most, to - from + 1);
  }
  return most;
}

interface Answered {
  /** Answers of POST /channels/{id}/messages, by status. */
  byStatus: Record<string, number>;
  /** Requests other than message posts, `METHOD /route`. */
  others: Record<string, number>;
}

/**
 * Lets go of the stand-in's record of each request as it comes (each post carries its chart's
 * bytes: 10,000 of them would hold 250 MB in this process), keeping the counts.
 */
function drainRequests(d: DiscordStandIn, into: Answered): void {
  for (const r of d.requests.splice(0)) {
    if (r.method === 'POST' && /^\/channels\/\d+\/messages$/.test(r.path)) {
      into.byStatus[r.status] = (into.byStatus[r.status] ?? 0) + 1;
    } else {
      const key = `${r.method} ${r.path.replace(/\d{5,}/g, ':id')} ${r.status}`;
      into.others[key] = (into.others[key] ?? 0) + 1;
    }
  }
}

const n = (v: number): string => v.toLocaleString('en-US');
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function skipped(reason: string): ScenarioResult {
  return {
    rows: [
      { scenario: SCENARIO, metric: 'scenario', unit: '', ours: undefined, verdict: 'skipped', note: reason },
    ],
    data: { skipped: reason },
  };
}

export async function digestsScenario(budget: Budget): Promise<ScenarioResult> {
  const count = size(10_000, 1_000);
  const spreadMs = size(DIGEST_SPREAD_MS, 30_000);
  // Never past the run's budget: the worker's bound is what is left of it, up to the target.
  const boundMs = Math.floor(Math.min(LAST_TARGET_MS, budget.remainingMs() - SEED_MS - MARGIN_MS));
  if (boundMs < spreadMs + 5_000) {
    return skipped(
      `needs ${seconds(SEED_MS + spreadMs + 5_000 + MARGIN_MS)} of the run's budget, ` +
        `${seconds(Math.max(0, budget.remainingMs()))} left`,
    );
  }
  const guilds = makeGuilds(count, { channels: ['digests'] });
  const dir = mkdtempSync(join(tmpdir(), 'bench-digests-'));
  let discord: DiscordStandIn | undefined;
  let drain: NodeJS.Timeout | undefined;
  try {
    discord = await startDiscordStandIn({
      guilds,
      token: discordLikeToken(),
      globalRateLimit: DISCORD_GLOBAL_LIMIT,
    });
    const d = discord;
    const answered: Answered = { byStatus: {}, others: {} };
    drain = setInterval(() => drainRequests(d, answered), 1_000);
    const job: DigestsJob = {
      discordApi: d.restUrl,
      token: d.token,
      dataDir: join(dir, 'data'),
      servers: guilds.map((g) => ({ guildId: g.id, channelId: channelOf(g) })),
      spreadMs,
      boundMs,
    };
    const jobFile = join(dir, 'job.json');
    writeFileSync(jobFile, JSON.stringify(job));
    const started = performance.now();
    const sent = await runWorker(jobFile, SEED_MS + boundMs + MARGIN_MS);
    const wallMs = performance.now() - started;
    clearInterval(drain);
    drainRequests(d, answered);

    // ---- what reached the stand-in, per server ----
    const lateness: number[] = [];
    /** Lateness by the tenth of the spread its due time falls in: whether a backlog builds. */
    const byTenth: number[][] = Array.from({ length: 10 }, () => []);
    const arrivals: number[] = [];
    let once = 0;
    let twice = 0;
    let never = 0;
    let withChart = 0;
    let last = Number.NEGATIVE_INFINITY;
    for (const g of guilds) {
      const posts: PostedMessage[] = d.channelMessages(channelOf(g));
      if (posts.length === 0) never++;
      else if (posts.length === 1) once++;
      else twice++;
      const [post] = posts;
      if (!post) continue;
      const dueAt = sent.t0 + spreadOf(g.id, spreadMs);
      lateness.push(post.receivedAt - dueAt);
      byTenth[Math.min(9, Math.floor((10 * (dueAt - sent.t0)) / spreadMs))]?.push(post.receivedAt - dueAt);
      arrivals.push(post.at);
      last = Math.max(last, post.receivedAt);
      const attachments = (post.message as { attachments?: unknown[] }).attachments;
      if (attachments && attachments.length > 0) withChart++;
    }
    const late = summarize(lateness);
    const tenths = byTenth.map((values) => Math.round(summarize(values).p50));
    const lastMs = last - sent.t0;
    const peak = busiestSecond(arrivals);
    const tooMany = d.globalRateLimited();
    const repeats = d.postedMessages().reduce((sum, m) => sum + m.repeats, 0);
    const servers = `${n(count)} servers`;
    const others = Object.entries(answered.others)
      .map(([request, times]) => `${request} × ${n(times)}`)
      .join(', ');
    const rows: Row[] = [
      {
        scenario: SCENARIO,
        metric: `digests posted exactly once (${servers})`,
        unit: '',
        ours: once,
        target: `${n(count)} (all)`,
        verdict: once === count ? 'pass' : 'FAIL',
        note:
          `the stand-in's messages per channel: never ${n(never)}, more than once ${n(twice)}` +
          `${repeats > 0 ? ` (and ${repeats} repeated nonce(s) answered with the first)` : ''}; ` +
          `${n(withChart)} with their chart; in the store ${JSON.stringify(sent.states)}, ` +
          `${n(sent.nextScheduled)} next weeks' written; ${sent.retried} retried, ${sent.failed} failed` +
          (sent.timedOut ? `; the worker stopped waiting ${seconds(boundMs)} after T0` : ''),
      },
      {
        scenario: SCENARIO,
        metric: 'boundary → last digest at the stand-in',
        unit: 's',
        ours: Number.isFinite(lastMs) ? lastMs / 1000 : undefined,
        target: `≤ ${LAST_TARGET_MS / 60_000} min`,
        verdict: once === count ? atMost(lastMs, LAST_TARGET_MS) : 'FAIL',
        note:
          `every digest due at T0 plus its server's share of ${seconds(spreadMs)} (spreadOf); ` +
          `the last share is ${seconds(Math.max(...guilds.map((g) => spreadOf(g.id, spreadMs))))}`,
      },
      {
        scenario: SCENARIO,
        metric: 'lateness p50 (post at the stand-in − due)',
        unit: 'ms',
        ours: late.p50,
        verdict: 'info',
      },
      {
        scenario: SCENARIO,
        metric: 'lateness p99',
        unit: 'ms',
        ours: late.p99,
        verdict: 'info',
        note:
          `${n(late.count)} posts, both on Date.now() (one machine); max ${Math.round(late.max)} ms; ` +
          `p50 by tenth of the spread (due time) ${tenths.join(', ')} ms; ` +
          `the outbox's own (done after due): p50 ${Math.round(sent.lateness.p50)} ms, ` +
          `p99 ${Math.round(sent.lateness.p99)} ms`,
      },
      {
        scenario: SCENARIO,
        metric: 'posts in the busiest second',
        unit: '',
        ours: peak,
        verdict: 'info',
        note:
          `a sliding 1,000 ms over the posts' arrivals; ${n(count)} over ${seconds(spreadMs)} is ` +
          `${(count / (spreadMs / 1000)).toFixed(1)} a second on average`,
      },
      {
        ...discordTooManyRow(SCENARIO, tooMany),
        note:
          `${discordTooManyRow(SCENARIO, tooMany).note}; posts answered ${JSON.stringify(answered.byStatus)}` +
          `${others ? `; other requests ${others}` : ''}; ${n(d.globalCounted())} requests counted`,
      },
      {
        scenario: SCENARIO,
        metric: 'charts drawn',
        unit: '',
        ours: sent.charts.rendered,
        verdict: 'info',
        note:
          `one ChartRenderer thread: ${sent.charts.failed} failed; a render p50 ` +
          `${Math.round(sent.charts.ms.p50)} ms, p99 ${Math.round(sent.charts.ms.p99)} ms (queue included); ` +
          `store filled in ${seconds(sent.seedMs)} (${n(sent.upRows)} ups)`,
      },
    ];
    return {
      rows,
      data: {
        servers: count,
        spreadMs,
        boundMs,
        worker: sent,
        latenessMs: late,
        latenessP50ByTenthMs: tenths,
        lastMs,
        busiestSecond: peak,
        once,
        twice,
        never,
        withChart,
        repeats,
        discordTooMany: tooMany,
        discordCounted: d.globalCounted(),
        answered,
        wallMs: Math.round(wallMs),
      },
    };
  } finally {
    if (drain) clearInterval(drain);
    await discord?.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
