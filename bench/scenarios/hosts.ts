/**
 * Scenario 10: three and six bot hosts on one PostgreSQL, side by side with one host of the same
 * bot in the same run. Each is the built bot as `npm start` runs it (`node dist/src/app/main.js`):
 * one host with all 6 shards (its limiter in its own memory), three hosts with `SHARD_IDS` 0-1,
 * 2-3, 4-5, or six hosts with one shard each (the limiter's ledger in PostgreSQL). The directory emulator
 * enforces its limits scaled down (50 per 1 s, 20 per 1 s on POST /server and POST /stats) and
 * the bots are given the same, so that a run takes seconds.
 *
 * (a) An /up's time, from the interaction to its final answer, 40 of them one after another on
 *     servers of every shard (nothing waits for a window): what the shared ledger adds.
 * (b) The ceiling: /up offered at 1.5x the /server limit for 6 s across all shards: the rate the
 *     directory accepts, and its 429s.
 * (c) Failover of the statistics: the leader (the one host) killed with SIGKILL; the time to the
 *     next post (by another host; by the one host once restarted). Not for six hosts.
 * (d) The limiter has no owner to fail over (every host takes turns at one lock): the time a
 *     request waits when the process holding the lock is killed, or frozen, in its turn.
 */
import { SharedRateLimiter } from '../../src/directory/shared-rate-limiter.js';
import { openStore, PostgresRateLimitLedger } from '../../src/store/index.js';
import {
  DISCORD_GLOBAL_LIMIT,
  isFinalAnswer,
  shardForGuild,
  snowflake,
  startDiscordStandIn,
} from '../../test/discord/index.js';
import { type Emulator, startEmulator, TOKENS } from '../../test/emulator/index.js';
import {
  BotProcess,
  discordLikeToken,
  eventually,
  guildSet,
  hostEnv,
  httpGet,
  sleep,
  startedReady,
  startRestProxy,
  statsRequests,
} from '../../test/ops/helpers.js';
import { holdTurnFrozen } from '../../test/store/frozen-turn.js';
import { freshPlace, type Place } from '../../test/store/places.js';
import { atLeast, atMost, discordTooManyRow, type Row, type ScenarioResult } from '../lib/report.js';
import { type Summary, summarize } from '../lib/stats.js';

const SCENARIO = '10. Three hosts';
const SHARD_COUNT = 6;
const GUILDS = 120;
const GLOBAL = { max: 50, windowMs: 1_000 };
const ROUTE = { max: 20, windowMs: 1_000 };
const INTERVAL_MS = 3_000;
const SEQUENTIAL_UPS = 40;
const OVERLOAD = 1.5;
const OFFER_MS = 6_000;

interface World {
  emu: Emulator;
  hosts: BotProcess[];
  /** Starts (again) host `i`, ready when its /readyz says so. */
  start(i: number): Promise<BotProcess>;
  up(guildId: string): Promise<{ ms: number; answered: boolean }>;
  guildIds: string[];
  /** 429s Discord's stand-in answered so far, every host's requests together. */
  discordTooMany(): number;
  close(): Promise<void>;
}

async function world(ranges: string[] | undefined): Promise<World> {
  const place = await freshPlace('postgres');
  const emu = await startEmulator({ rateLimits: { global: GLOBAL, routes: ROUTE }, cooldownMs: 1 });
  const set = guildSet(GUILDS);
  const discord = await startDiscordStandIn({
    shards: SHARD_COUNT,
    guilds: set.guilds,
    token: discordLikeToken(),
    maxConcurrency: 16,
    // Discord's limit is per bot token: the hosts share it, as they share the token.
    globalRateLimit: DISCORD_GLOBAL_LIMIT,
  });
  // Several hosts send their requests with the token through one REST proxy, as deployed
  // (deploy/compose.yaml): each host alone paces itself at 50 a second, together they would not.
  const rest = ranges ? await startRestProxy(discord.restUrl) : undefined;
  const hosts: BotProcess[] = [];
  const envFor = (i: number): Record<string, string> =>
    hostEnv({
      discord,
      directoryUrl: emu.url,
      directoryToken: TOKENS.serviceBot,
      store: place.env,
      shardCount: SHARD_COUNT,
      shardIds: ranges?.[i],
      hostId: ranges ? `host-${i}` : 'single',
      statsIntervalMs: INTERVAL_MS,
      extra: {
        DIRECTORY_RATE_LIMIT: `${GLOBAL.max}/${GLOBAL.windowMs}`,
        DIRECTORY_ROUTE_RATE_LIMIT: `${ROUTE.max}/${ROUTE.windowMs}`,
        ...rest?.env,
      },
    });
  return {
    emu,
    hosts,
    guildIds: set.guilds.map((g) => g.id),
    discordTooMany: () => discord.globalRateLimited(),
    async start(i) {
      const bot = new BotProcess('main.js', envFor(i), ranges ? `host-${i}` : 'single');
      hosts.push(bot);
      await startedReady(bot);
      return bot;
    },
    async up(guildId) {
      const handle = discord.sendCommand({
        guildId,
        name: 'up',
        user: { id: snowflake(), username: `b_${Math.random().toString(36).slice(2, 8)}` },
      });
      try {
        const final = await handle.waitFor(isFinalAnswer, 30_000);
        return { ms: final.at - handle.sentAt, answered: true };
      } catch {
        return { ms: Number.NaN, answered: false };
      }
    },
    async close() {
      await Promise.all(hosts.map((h) => h.destroy().catch(() => undefined)));
      await rest?.proxy.destroy().catch(() => undefined);
      await discord.close();
      await emu.close();
      await place.remove();
    },
  };
}

interface HostsRun {
  latency: Summary;
  /** The directory requests of (a): mean time each waited for the limiter (its turns at the ledger). */
  limiterWaitMs: number;
  ceiling: Awaited<ReturnType<typeof ceiling>>;
  /** Not measured for six hosts (the same lease as three; the run stays within its budget). */
  failoverMs: number | undefined;
  /** 429s from Discord's stand-in over the whole run. */
  discordTooMany: number;
}

/** The runs side by side: one host with every shard, then three and six hosts sharing them. */
const RUNS = [
  ['one', undefined],
  ['three', ['0-1', '2-3', '4-5']],
  ['six', ['0', '1', '2', '3', '4', '5']],
] as const;

/** (a): one /up after another, on servers of every shard in turn. */
async function sequential(w: World): Promise<Summary> {
  const times: number[] = [];
  for (let i = 0; i < SEQUENTIAL_UPS; i++) {
    const shard = i % SHARD_COUNT;
    const guilds = w.guildIds.filter((id) => shardForGuild(id, SHARD_COUNT) === shard);
    const { ms } = await w.up(guilds[Math.floor(i / SHARD_COUNT) % guilds.length] as string);
    if (Number.isFinite(ms)) times.push(ms);
    // Well under the /server limit: no /up waits for a window.
    await sleep(120);
  }
  return summarize(times);
}

/** Every host's `directory_ratelimit_wait_seconds` (sum and count over all its labels), from /metrics. */
async function limiterWaits(hosts: BotProcess[]): Promise<{ sum: number; count: number }> {
  let sum = 0;
  let count = 0;
  for (const host of hosts.filter((h) => h.exit === undefined)) {
    const text = (await httpGet(await host.opsPort(), '/metrics')).body;
    for (const line of text.split('\n')) {
      const [name, value] = [
        line.slice(0, line.search(/[{ ]/)),
        Number(line.slice(line.lastIndexOf(' ') + 1)),
      ];
      if (name === 'directory_ratelimit_wait_seconds_sum') sum += value;
      if (name === 'directory_ratelimit_wait_seconds_count') count += value;
    }
  }
  return { sum, count };
}

/** (b): /up offered at 1.5x the /server limit for OFFER_MS. */
async function ceiling(w: World): Promise<{ rate: number; tooMany: number; unanswered: number }> {
  const since = w.emu.requests.length;
  const perSecond = ((ROUTE.max * 1_000) / ROUTE.windowMs) * OVERLOAD;
  const total = Math.round((perSecond * OFFER_MS) / 1_000);
  const started = performance.now();
  const ups: Array<Promise<{ answered: boolean }>> = [];
  for (let i = 0; i < total; i++) {
    const wait = started + (i * 1_000) / perSecond - performance.now();
    if (wait > 1) await sleep(wait);
    ups.push(w.up(w.guildIds[i % w.guildIds.length] as string));
  }
  const answers = await Promise.all(ups);
  const requests = w.emu.requests.slice(since);
  const accepted = requests
    .filter((r) => r.method === 'POST' && r.path === '/v2/server' && r.status === 200)
    .map((r) => r.at);
  const first = accepted[0] ?? 0;
  const last = accepted.at(-1) ?? 0;
  return {
    rate: accepted.length > 1 ? ((accepted.length - 1) * 1_000) / (last - first) : Number.NaN,
    tooMany: requests.filter((r) => r.status === 429).length,
    unanswered: answers.filter((a) => !a.answered).length,
  };
}

/** Which host's log says it posted, for each post, in order. */
function posters(hosts: BotProcess[]): Array<{ at: number; host: string }> {
  return hosts
    .flatMap((bot) =>
      bot.lines
        .filter((l) => l.entry?.msg === 'stats posted' || l.entry?.msg?.startsWith('stats posted;'))
        .map((l) => ({ at: l.at, host: bot.name })),
    )
    .sort((a, b) => a.at - b.at);
}

/** (c): the leader killed; ms to the next post, by another host or by the one host restarted. */
async function failover(w: World, three: boolean): Promise<number> {
  await eventually(() => (posters(w.hosts).length >= 1 ? true : undefined), 30_000, 'a first post', 100);
  const leaderName = posters(w.hosts).at(-1)?.host as string;
  const leader = w.hosts.find((h) => h.name === leaderName && h.exit === undefined) as BotProcess;
  // Right after a post: the worst moment, a whole interval before the next.
  const seen = statsRequests(w.emu).length;
  await eventually(() => (statsRequests(w.emu).length > seen ? true : undefined), 10_000, 'a post', 20);
  // The emulator records times on Date.now().
  const killedAt = Date.now();
  leader.kill('SIGKILL');
  if (!three) {
    await leader.exited;
    await w.start(0);
  }
  const next = await eventually(
    () => statsRequests(w.emu).find((r, i) => i >= seen + 1 && r.at > killedAt),
    60_000,
    'a post after the kill',
    50,
  );
  return next.at - killedAt;
}

/** (d): a process holding the limiter's lock, killed or frozen in its turn; how long another waits. */
async function lockHolder(how: 'kill' | 'freeze'): Promise<number> {
  const place: Place = await freshPlace('postgres');
  const child = await holdTurnFrozen(place.options);
  const store = await openStore(place.options);
  const limiter = new SharedRateLimiter({
    ledger: new PostgresRateLimitLedger(store),
    global: GLOBAL,
    routes: ROUTE,
    marginMs: 25,
  });
  try {
    const started = performance.now();
    const acquired = limiter.acquire({});
    await sleep(200);
    if (how === 'kill') child.kill('SIGKILL');
    const grant = await acquired;
    grant.settle();
    return performance.now() - started - (how === 'kill' ? 200 : 0);
  } finally {
    child.kill('SIGKILL');
    limiter.close();
    await store.close();
    await place.remove();
  }
}

export async function hostsScenario(): Promise<ScenarioResult> {
  const results: Partial<Record<(typeof RUNS)[number][0], HostsRun>> = {};
  for (const [name, ranges] of RUNS) {
    const w = await world(ranges ? [...ranges] : undefined);
    try {
      await Promise.all((ranges ?? ['all']).map((_, i) => w.start(i)));
      // Warm-up: every host's first /up pays for its connections.
      for (let shard = 0; shard < SHARD_COUNT; shard++) {
        await w.up(w.guildIds.find((id) => shardForGuild(id, SHARD_COUNT) === shard) as string);
      }
      const waitedBefore = await limiterWaits(w.hosts);
      const latency = await sequential(w);
      const waited = await limiterWaits(w.hosts);
      await sleep(1_500);
      const ceil = await ceiling(w);
      const failoverMs = name === 'six' ? undefined : await failover(w, ranges !== undefined);
      const requests = waited.count - waitedBefore.count;
      const limiterWaitMs = requests > 0 ? ((waited.sum - waitedBefore.sum) * 1_000) / requests : Number.NaN;
      results[name] = {
        latency,
        limiterWaitMs,
        ceiling: ceil,
        failoverMs,
        discordTooMany: w.discordTooMany(),
      };
    } finally {
      await w.close();
    }
  }
  const killed = await lockHolder('kill');
  const frozen = await lockHolder('freeze');
  const one = results.one as HostsRun;
  const three = results.three as HostsRun;
  const six = results.six as HostsRun;
  const added = three.latency.p99 - one.latency.p99;
  const addedBySix = six.latency.p99 - one.latency.p99;
  const rows: Row[] = [
    {
      scenario: SCENARIO,
      metric: '/up to its final answer, p50 (one host → three)',
      unit: 'ms',
      ours: three.latency.p50,
      baseline: one.latency.p50,
      ratio: three.latency.p50 / one.latency.p50,
      verdict: 'info',
      note: `${three.latency.count} and ${one.latency.count} ups one after another, on servers of every shard`,
    },
    {
      scenario: SCENARIO,
      metric: 'added to an /up by three hosts, p99',
      unit: 'ms',
      ours: added,
      target: '≤ 50 ms',
      verdict: atMost(added, 50),
      note:
        `p99 ${one.latency.p99.toFixed(1)} ms one host, ${three.latency.p99.toFixed(1)} ms three hosts; ` +
        `the limiter's wait per directory request, mean: ${one.limiterWaitMs.toFixed(2)} ms one host, ` +
        `${three.limiterWaitMs.toFixed(2)} ms three`,
    },
    {
      scenario: SCENARIO,
      metric: 'added to an /up by six hosts, p99',
      unit: 'ms',
      ours: addedBySix,
      target: '≤ 50 ms',
      verdict: atMost(addedBySix, 50),
      note:
        `p99 ${one.latency.p99.toFixed(1)} ms one host, ${six.latency.p99.toFixed(1)} ms six hosts (one shard each); ` +
        `p50 ${six.latency.p50.toFixed(1)} ms; the limiter's wait per directory request, mean: ${six.limiterWaitMs.toFixed(2)} ms`,
    },
    {
      scenario: SCENARIO,
      metric: 'ups/s at the /server ceiling, three hosts',
      unit: '/s',
      ours: three.ceiling.rate,
      baseline: one.ceiling.rate,
      ratio: three.ceiling.rate / one.ceiling.rate,
      target: '≥ 0.90x one host',
      verdict: atLeast(three.ceiling.rate / one.ceiling.rate, 0.9),
      note: `ceiling ${ROUTE.max} per ${ROUTE.windowMs} ms, ${OVERLOAD}x offered for ${OFFER_MS / 1000} s; unanswered: ${three.ceiling.unanswered} (three), ${one.ceiling.unanswered} (one)`,
    },
    {
      scenario: SCENARIO,
      metric: '429 from the directory, three hosts',
      unit: '',
      ours: three.ceiling.tooMany,
      baseline: one.ceiling.tooMany,
      target: '0',
      verdict: atMost(three.ceiling.tooMany, 0),
    },
    {
      scenario: SCENARIO,
      metric: 'ups/s at the /server ceiling, six hosts',
      unit: '/s',
      ours: six.ceiling.rate,
      baseline: one.ceiling.rate,
      ratio: six.ceiling.rate / one.ceiling.rate,
      target: '≥ 0.90x one host',
      verdict: atLeast(six.ceiling.rate / one.ceiling.rate, 0.9),
      note: `unanswered: ${six.ceiling.unanswered}`,
    },
    {
      scenario: SCENARIO,
      metric: '429 from the directory, six hosts',
      unit: '',
      ours: six.ceiling.tooMany,
      baseline: one.ceiling.tooMany,
      target: '0',
      verdict: atMost(six.ceiling.tooMany, 0),
    },
    discordTooManyRow(SCENARIO, three.discordTooMany + six.discordTooMany, {
      which: ', three and six hosts',
      baseline: one.discordTooMany,
    }),
    {
      scenario: SCENARIO,
      metric: 'stats leader killed → next post (three hosts; one host: restarted)',
      unit: 'ms',
      ours: three.failoverMs ?? Number.NaN,
      baseline: one.failoverMs ?? Number.NaN,
      target: '≤ interval + lease (18 s)',
      verdict: atMost(three.failoverMs ?? Number.POSITIVE_INFINITY, INTERVAL_MS + 15_000),
      note: `interval ${INTERVAL_MS / 1000} s, lease 15 s renewed every 5 s; killed right after a post`,
    },
    {
      scenario: SCENARIO,
      metric: 'limiter lock holder killed / frozen in its turn → another goes on',
      unit: 'ms',
      ours: frozen,
      baseline: killed,
      target: '≤ 6 s frozen',
      verdict: atMost(frozen, 6_000),
      note: `killed: ${killed.toFixed(0)} ms (its connection closes); frozen: PostgreSQL ends a turn idle for 5 s`,
    },
  ];
  return { rows, data: { one, three, six, lockHolderKilledMs: killed, lockHolderFrozenMs: frozen } };
}
