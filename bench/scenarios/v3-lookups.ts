/**
 * Scenario 15: v3 look-ups from three hosts sharing one key (only when named: BENCH_ONLY=15).
 *
 * 10,000 look-ups (/bot and /server by ID) arriving over 10 minutes, spread uniformly at random
 * (a Poisson process given its count), on 500 references drawn by Zipf (s = 1.1), each sent to
 * one of three "hosts" at random: three DirectoryClients (version v3, one key, V3_KEYS.owner),
 * each with a store connection of its own to one PostgreSQL ledger (sharedRateLimits). Each
 * look-up is 'interactive' with the bot's deadline for a look-up, LOOKUP_WAIT_MS (10 s,
 * commands/cards.ts): past it the client answers at once RateLimited with the wait, which the bot
 * shows as "busy, try again at …" (counted apart: answered busy). The first published run gave each
 * look-up the interaction's 14 minutes instead (bench/results/2026-11-28-v3-lookups.md). The emulator enforces v3's 25 requests per 10 s per key.
 *
 * Run twice, same draws: BEFORE (cache: false) and AFTER (the look-ups' cache with its defaults:
 * fresh 5 minutes, 5,000 entries). Each run stops taking arrivals after the 10 minutes and waits
 * at most BENCH_V3_DRAIN_S (120 s) more; look-ups still waiting then are failed by closing the
 * clients and counted as unanswered at the cap (with the cache off they would wait up to 14 minutes).
 *
 * The emulator seeds a few v3 bots and servers: its state is mutable, so 250 bots and 250
 * servers are added to `emu.state` (copies of a seeded bot and server under new IDs) first.
 *
 * Overrides for a quick check (never a published result): BENCH_V3_MINUTES, BENCH_V3_LOOKUPS,
 * BENCH_V3_REFS, BENCH_V3_DRAIN_S, BENCH_V3_RUNS (before,after). BENCH_QUICK: 1 minute, 1,000.
 */
import { LOOKUP_WAIT_MS } from '../../commands/cards.js';
import { DirectoryClient } from '../../src/directory/index.js';
import { openStore, PostgresRateLimitLedger, type Store } from '../../src/store/index.js';
import { type Emulator, IDS, startEmulator, V3_KEYS } from '../../test/emulator/index.js';
import { freshPlace } from '../../test/store/places.js';
import { seededRandom } from '../../test/support/random.js';
import { isQuick } from '../lib/env.js';
import { settle } from '../lib/gc.js';
import { atMost, type Row, type ScenarioResult } from '../lib/report.js';
import { MB, type Summary, sleep, summarize } from '../lib/stats.js';

const SCENARIO = '15. v3 look-ups, three hosts';
const HOSTS = 3;
const ZIPF_S = 1.1;
const V3_LIMIT = { max: 25, windowMs: 10_000 };
const DEADLINE_MS = LOOKUP_WAIT_MS;
const SEED = 0x15_2026;

function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a number above 0`);
  return n;
}

interface Params {
  durationMs: number;
  lookups: number;
  refs: number;
  drainMs: number;
}

function params(): Params {
  const quick = isQuick();
  return {
    durationMs: Math.round(envNumber('BENCH_V3_MINUTES', quick ? 1 : 10) * 60_000),
    lookups: Math.round(envNumber('BENCH_V3_LOOKUPS', quick ? 1_000 : 10_000)),
    refs: Math.round(envNumber('BENCH_V3_REFS', 500)),
    drainMs: Math.round(envNumber('BENCH_V3_DRAIN_S', 120) * 1_000),
  };
}

interface Ref {
  kind: 'bot' | 'server';
  id: string;
}

interface Arrival {
  atMs: number;
  ref: number;
  host: number;
}

/** The references (half bots, half servers, shuffled into Zipf ranks) and the arrivals. */
function draw(p: Params): { refs: Ref[]; arrivals: Arrival[] } {
  const random = seededRandom(SEED);
  const refs: Ref[] = [];
  for (let i = 0; i < p.refs; i++) {
    const kind = i % 2 === 0 ? 'bot' : 'server';
    const n = Math.floor(i / 2);
    refs.push({ kind, id: `${kind === 'bot' ? '93' : '94'}${String(n).padStart(16, '0')}` });
  }
  for (let i = refs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [refs[i], refs[j]] = [refs[j] as Ref, refs[i] as Ref];
  }
  const cdf: number[] = [];
  let total = 0;
  for (let k = 1; k <= p.refs; k++) {
    total += 1 / k ** ZIPF_S;
    cdf.push(total);
  }
  const rank = (): number => {
    const u = random() * total;
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cdf[mid] as number) < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const times = Array.from({ length: p.lookups }, () => random() * p.durationMs).sort((a, b) => a - b);
  const arrivals = times.map((atMs) => ({ atMs, ref: rank(), host: Math.floor(random() * HOSTS) }));
  return { refs, arrivals };
}

/** Adds the references to the emulator's state: copies of a seeded bot and server under new IDs. */
function seed(emu: Emulator, refs: readonly Ref[]): void {
  const bot = emu.state.bots.get(IDS.serviceBot);
  const server = [...emu.state.servers.values()][0];
  if (!bot || !server) throw new Error('the emulator has no seeded bot or server to copy');
  for (const ref of refs) {
    if (ref.kind === 'bot') {
      const copy = structuredClone(bot);
      copy.id = ref.id;
      copy.shortCode = null;
      emu.state.bots.set(ref.id, copy);
    } else {
      const copy = structuredClone(server);
      copy.id = ref.id;
      copy.shortCode = null;
      emu.state.servers.set(ref.id, copy);
    }
  }
}

type Mode = 'before' | 'after';

interface RunResult {
  mode: Mode;
  lookups: number;
  answered: number;
  failed: Record<string, number>;
  /** Look-ups still waiting when the run was capped (arrivals over + drain). */
  unansweredAtCap: number;
  all: Summary;
  /** Look-ups of a reference their host had answered before they started (cache: fresh or stale). */
  cached: Summary;
  uncached: Summary;
  /** By minute of arrival: answered, p50 and p99 of their latency (how the tail moves as caches fill). */
  byMinute: Array<{ minute: number; answered: number; p50: number; p99: number }>;
  requests: number;
  tooMany: number;
  maxInWindow: number;
  /** Directory requests per second over the arrivals. */
  requestRate: number;
  arrivalsTookMs: number;
  drainMs: number;
  heapBeforeMb: number;
  heapAfterMb: number;
  /** Heap freed by forgetting every cached record (the caches' own memory). */
  cacheHeapMb: number;
  perHost: Array<{
    lookups: number;
    entries: number;
    fresh: number;
    stale: number;
    misses: number;
    shared: number;
    refreshes: number;
  }>;
  ledgerErrors: number;
  /** The ledger's errors by operation and message. */
  ledgerErrorKinds: Record<string, number>;
}

function maxInSlidingWindow(times: readonly number[], windowMs: number): number {
  let best = 0;
  let i = 0;
  for (let j = 0; j < times.length; j++) {
    while ((times[j] as number) - (times[i] as number) >= windowMs) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

async function run(mode: Mode, p: Params): Promise<RunResult> {
  const { refs, arrivals } = draw(p);
  // A schema of its own per run: nothing the other run left in the ledger counts here.
  const place = await freshPlace('postgres');
  const emu = await startEmulator();
  seed(emu, refs);
  const stores: Store[] = [];
  let ledgerErrors = 0;
  const ledgerErrorKinds: Record<string, number> = {};
  for (let i = 0; i < HOSTS; i++) stores.push(await openStore(place.options));
  const hosts = stores.map(
    (store) =>
      new DirectoryClient({
        baseUrl: emu.url,
        version: 'v3',
        token: V3_KEYS.owner,
        cache: mode === 'after' ? { ttlMs: 5 * 60_000, maxEntries: 5_000 } : false,
        sharedRateLimits: {
          ledger: new PostgresRateLimitLedger(store),
          onLedgerError: (err, what) => {
            ledgerErrors += 1;
            const kind = `${what}: ${err instanceof Error ? err.message.slice(0, 80) : String(err)}`;
            ledgerErrorKinds[kind] = (ledgerErrorKinds[kind] ?? 0) + 1;
          },
        },
      }),
  );
  // Each host's references answered so far, and when: a later look-up of one is a cached one.
  const answeredAt = hosts.map(() => new Map<number, number>());
  const latency: { all: number[]; cached: number[]; uncached: number[] } = {
    all: [],
    cached: [],
    uncached: [],
  };
  const byMinute: number[][] = [];
  const failed: Record<string, number> = {};
  const perHostLookups = hosts.map(() => 0);
  let answered = 0;
  let settled = 0;
  let closedAtCap = false;
  let unansweredAtCap = 0;
  try {
    emu.requests.length = 0;
    const heapBefore = (await settle()).heapUsed;
    const pending: Array<Promise<void>> = [];
    const started = performance.now();
    for (const a of arrivals) {
      const wait = started + a.atMs - performance.now();
      if (wait > 1) await sleep(wait);
      const host = hosts[a.host] as DirectoryClient;
      const ref = refs[a.ref] as Ref;
      const seen = answeredAt[a.host] as Map<number, number>;
      const cached = seen.has(a.ref);
      perHostLookups[a.host] = (perHostLookups[a.host] ?? 0) + 1;
      const t0 = performance.now();
      const options = { priority: 'interactive' as const, deadline: new Date(Date.now() + DEADLINE_MS) };
      const call = ref.kind === 'bot' ? host.getBot(ref.id, options) : host.getServer(ref.id, options);
      pending.push(
        call
          .then(
            () => {
              const ms = performance.now() - t0;
              answered += 1;
              latency.all.push(ms);
              (cached ? latency.cached : latency.uncached).push(ms);
              const minute = Math.floor(a.atMs / 60_000);
              byMinute[minute] ??= [];
              byMinute[minute].push(ms);
              if (!seen.has(a.ref)) seen.set(a.ref, performance.now());
            },
            (err: unknown) => {
              const name = closedAtCap
                ? 'unanswered at the cap'
                : err instanceof Error
                  ? `${err.name}${'reason' in err ? ` (${String((err as { reason: unknown }).reason)})` : ''}`
                  : 'unknown';
              failed[name] = (failed[name] ?? 0) + 1;
            },
          )
          .finally(() => {
            settled += 1;
          }),
      );
    }
    const arrivalsTookMs = performance.now() - started;
    const drainStarted = performance.now();
    while (settled < pending.length && performance.now() - drainStarted < p.drainMs) await sleep(200);
    const drainMs = performance.now() - drainStarted;
    if (settled < pending.length) {
      unansweredAtCap = pending.length - settled;
      closedAtCap = true;
      // Fails what still waits for the limiter; an attempt under way ends on its own.
      await Promise.all(hosts.map((h) => h.close()));
    }
    await Promise.all(pending);
    await sleep(500);
    const v3 = emu.requests.filter((r) => r.path.startsWith('/v3'));
    const times = v3.map((r) => r.at).sort((x, y) => x - y);
    const tooMany = v3.filter((r) => r.status === 429).length;
    emu.requests.length = 0;
    const stats = hosts.map((h) => h.cacheStats());
    const heapAfter = (await settle()).heapUsed;
    for (const h of hosts) for (const ref of refs) h.forget(ref.kind, ref.id);
    const heapCleared = (await settle()).heapUsed;
    const first = times[0] ?? 0;
    const last = times.at(-1) ?? 0;
    return {
      mode,
      lookups: arrivals.length,
      answered,
      failed,
      unansweredAtCap,
      all: summarize(latency.all),
      cached: summarize(latency.cached),
      uncached: summarize(latency.uncached),
      byMinute: Array.from(byMinute, (list, minute) => {
        const sum = summarize(list ?? []);
        return { minute, answered: sum.count, p50: sum.p50, p99: sum.p99 };
      }),
      requests: times.length,
      tooMany,
      maxInWindow: maxInSlidingWindow(times, V3_LIMIT.windowMs),
      requestRate: times.length > 1 ? ((times.length - 1) * 1_000) / (last - first) : Number.NaN,
      arrivalsTookMs,
      drainMs,
      heapBeforeMb: heapBefore / MB,
      heapAfterMb: heapAfter / MB,
      cacheHeapMb: (heapAfter - heapCleared) / MB,
      perHost: stats.map((s, i) => ({
        lookups: perHostLookups[i] ?? 0,
        entries: s.entries,
        fresh: s.fresh,
        stale: s.stale,
        misses: s.misses,
        shared: s.shared,
        refreshes: s.refreshes,
      })),
      ledgerErrors,
      ledgerErrorKinds,
    };
  } finally {
    if (!closedAtCap) await Promise.all(hosts.map((h) => h.close()));
    await Promise.all(stores.map((s) => s.close()));
    await emu.close();
    await place.remove();
  }
}

function ms(s: Summary): string {
  return `p50 ${s.p50.toFixed(0)} / p99 ${s.p99.toFixed(0)} / max ${s.max.toFixed(0)} ms (${s.count})`;
}

function failures(r: RunResult): number {
  return Object.values(r.failed).reduce((a, b) => a + b, 0);
}

function rowsOf(r: RunResult, p: Params): Row[] {
  const label = r.mode === 'before' ? 'BEFORE (cache off)' : 'AFTER (cache on)';
  const judged = r.mode === 'after';
  const failedCount = failures(r);
  const failedNote = Object.entries(r.failed)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
  const hosts = r.perHost
    .map(
      (h, i) =>
        `host ${i + 1}: ${h.lookups} look-ups, ${h.entries} entries, fresh ${h.fresh}, stale ${h.stale}, misses ${h.misses}, shared ${h.shared}, refreshes ${h.refreshes}`,
    )
    .join('; ');
  return [
    {
      scenario: SCENARIO,
      metric: `${label}: 429 from the emulator`,
      unit: '',
      ours: r.tooMany,
      target: '0',
      verdict: atMost(r.tooMany, 0),
      note: `${label}: ${r.requests} /v3 requests (${r.requestRate.toFixed(2)}/s), ledger errors ${r.ledgerErrors}`,
    },
    {
      scenario: SCENARIO,
      metric: `${label}: most /v3 requests in any 10 s`,
      unit: '',
      ours: r.maxInWindow,
      target: `≤ ${V3_LIMIT.max}`,
      verdict: atMost(r.maxInWindow, V3_LIMIT.max),
    },
    {
      scenario: SCENARIO,
      metric: `${label}: look-ups failed or unanswered`,
      unit: '',
      ours: failedCount,
      baseline: r.lookups,
      target: judged ? '0' : '— (shows the queue)',
      verdict: judged ? atMost(failedCount, 0) : 'info',
      note: `${label}: ${r.answered} of ${r.lookups} answered${failedNote ? `; ${failedNote}` : ''}; arrivals ${(r.arrivalsTookMs / 1000).toFixed(0)} s, then ${(r.drainMs / 1000).toFixed(1)} s (cap ${p.drainMs / 1000} s)`,
    },
    {
      scenario: SCENARIO,
      metric: `${label}: latency p50, all answered`,
      unit: 'ms',
      ours: r.all.p50,
      verdict: 'info',
    },
    {
      scenario: SCENARIO,
      metric: `${label}: latency p99, all answered`,
      unit: 'ms',
      ours: r.all.p99,
      verdict: 'info',
      note: `${label}: all ${ms(r.all)}; ref already answered by its host ${ms(r.cached)}; not ${ms(r.uncached)}`,
    },
    {
      scenario: SCENARIO,
      metric: `${label}: latency p99, ${judged ? 'ref cached at the time' : 'ref its host answered before'}`,
      unit: 'ms',
      ours: r.cached.p99,
      baseline: r.cached.p50,
      verdict: 'info',
    },
    {
      scenario: SCENARIO,
      metric: `${label}: heap used before → after (3 hosts)`,
      unit: 'MB',
      ours: r.heapAfterMb,
      baseline: r.heapBeforeMb,
      verdict: 'info',
      note: `${label}: caches' own heap (freed by forgetting every entry) ${r.cacheHeapMb.toFixed(2)} MB; ${hosts}`,
    },
  ];
}

export async function v3LookupsScenario(): Promise<ScenarioResult> {
  const p = params();
  const modes = (process.env.BENCH_V3_RUNS ?? 'before,after')
    .split(',')
    .map((s) => s.trim())
    .filter((s): s is Mode => s === 'before' || s === 'after');
  const results: RunResult[] = [];
  for (const mode of modes) {
    process.stderr.write(`[bench 15] ${mode}: ${p.lookups} look-ups over ${p.durationMs / 1000} s ...\n`);
    const r = await run(mode, p);
    process.stderr.write(`[bench 15] ${mode}: ${JSON.stringify(r)}\n`);
    results.push(r);
  }
  return { rows: results.flatMap((r) => rowsOf(r, p)), data: { params: p, results } };
}
