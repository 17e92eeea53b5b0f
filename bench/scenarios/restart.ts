/**
 * Scenario 12: a restart, as Docker or Kubernetes does one. The built bot (`node
 * dist/src/app/main.js`, 4 shards, realistic guilds) gets SIGTERM once its 4 gateway sessions are
 * in its store (SQLite in a fresh DATA_DIR per round), and the next process starts on the same
 * DATA_DIR as soon as it has exited: it restores the guilds from the snapshot and RESUMEs
 * (src/gateway/gateway-sessions.ts). From the SIGTERM until every shard has resumed, an /up comes
 * every 100 ms (on guilds of every shard) and the bot is added to a guild every 250 ms.
 *
 * Per round: the IDENTIFYs of the new process (target 0); each shard's time with no connection
 * (its old connection's close to its new RESUMED; target max ≤ 2 s); the /up sent meanwhile that
 * got a first response within Discord's 3 s (target all; one refused politely with "restarting"
 * while the old process drains counts as acknowledged); each guild added meanwhile seen once as a
 * 'joined a guild' line of the old or the new process (target all, once each); the new process's
 * `discord_guilds` (target: the guild count, the snapshot restored). Then the same restart with
 * Discord having dropped the sessions meanwhile (`expireDroppedSessions()`): its IDENTIFYs and
 * time with no connection, the baseline a restart used to cost.
 */
import { GatewaySessionRepository, openStore } from '../../src/store/index.js';
import {
  type DiscordStandIn,
  type GatewayLogEntry,
  type GuildFixture,
  type InteractionResponseRecord,
  makeGuild,
  shardForGuild,
  snowflake,
  startDiscordStandIn,
} from '../../test/discord/index.js';
import { type Emulator, startEmulator } from '../../test/emulator/index.js';
import {
  BotProcess,
  discordLikeToken,
  eventually,
  httpGet,
  START_BOUND_MS,
  sample,
  startedReady,
  withTimeout,
} from '../../test/ops/helpers.js';
import { botEnv } from '../../test/ops/world.js';
import { tempDir } from '../../test/support/temp.js';
import { size } from '../lib/env.js';
import { realisticGuilds } from '../lib/guilds.js';
import { atLeast, atMost, type Row, type ScenarioResult } from '../lib/report.js';
import { median } from '../lib/stats.js';

const SCENARIO = '12. Restart';
const SHARDS = 4;
const UP_EVERY_MS = 100;
const GUILD_EVERY_MS = 250;
/** Discord's deadline for the first response to an interaction. */
const ACK_WITHIN_MS = 3_000;
const GAP_TARGET_MS = 2_000;
/** Start and ready with thousands of guilds, on two busy cores. */
const START_MS = 3 * START_BOUND_MS;
/** How long the old process may take from SIGTERM to its exit (the drain included). */
const EXIT_MS = 15_000;
/** How long the new process may take to have every shard back. */
const BACK_MS = 30_000;

interface RoundResult {
  dropped: boolean;
  /** The old process's exit after SIGTERM. */
  exit: { code: number | null; signal: string | null };
  /** IDENTIFYs after the SIGTERM: the new process's. */
  identifies: number;
  invalidSessions: number;
  /** Per shard, from its old connection's close to its new RESUMED (or READY, once dropped), ms, sorted. */
  gapsMs: number[];
  /** The SIGTERM to the last shard back, ms. */
  downMs: number;
  /** From the SIGTERM, ms: the old connections' last close, the old process's exit, the new one's ops port, its first RESUME (or IDENTIFY). */
  timeline: { closed: number; exited: number; listening: number; firstResume: number };
  ups: {
    sent: number;
    /** A first response within 3 s of the dispatch. */
    acknowledged: number;
    /** Of those: type 5 (deferred) and type 4 (the "restarting" reply of the draining process). */
    deferred: number;
    refused: number;
    /** Dispatched while the shard had no connection (replayed on resume) or dropped. */
    queued: number;
    dropped: number;
    /** First response after 3 s, or none. */
    late: number;
  };
  joins: { added: number; once: number; twice: number; missing: number };
  guilds: { expected: number; metric: number | undefined };
}

const entriesOf = (discord: DiscordStandIn, kind: GatewayLogEntry['kind'], after: number) =>
  discord.gatewayLog.filter((e) => e.kind === kind && e.at >= after);

/** The first entry of `kind` per shard after `after`, once every shard has one. */
function everyShard(
  discord: DiscordStandIn,
  kind: GatewayLogEntry['kind'],
  after: number,
): Map<number, GatewayLogEntry> | undefined {
  const found = new Map<number, GatewayLogEntry>();
  for (const e of entriesOf(discord, kind, after)) {
    if (e.shardId !== null && !found.has(e.shardId)) found.set(e.shardId, e);
  }
  return found.size === SHARDS ? found : undefined;
}

/** Waits until the store holds the 4 sessions with every guild of the snapshot. */
async function sessionsSaved(dataDir: string, guildCount: number): Promise<void> {
  const store = await openStore({ dataDir });
  try {
    const sessions = new GatewaySessionRepository(store);
    const ids = [...Array(SHARDS).keys()];
    await eventually(
      async () => {
        const saved = await sessions.load(ids, SHARDS, 60_000, Date.now());
        const guilds = [...saved.values()].reduce((sum, s) => sum + s.guilds.length, 0);
        return saved.size === SHARDS && guilds >= guildCount ? true : undefined;
      },
      30_000,
      'the four sessions and their guilds to be saved',
      500,
    );
  } finally {
    await store.close();
  }
}

async function guildsMetric(bot: BotProcess): Promise<number | undefined> {
  return sample((await httpGet(await bot.opsPort(), '/metrics')).body, 'discord_guilds');
}

async function round(guilds: GuildFixture[], dropped: boolean): Promise<RoundResult> {
  const data = tempDir('bench-restart-');
  const children: BotProcess[] = [];
  let emu: Emulator | undefined;
  let discord: DiscordStandIn | undefined;
  let load: ReturnType<typeof setInterval>[] = [];
  try {
    emu = await startEmulator({ rateLimits: false });
    discord = await startDiscordStandIn({ shards: SHARDS, guilds, token: discordLikeToken() });
    const d = discord;
    const env: Record<string, string> = {
      ...botEnv(d, emu),
      SHARD_COUNT: String(SHARDS),
      STATS_INTERVAL: '15m',
      DATA_DIR: data.path,
    };
    const spawn = (name: string): BotProcess => {
      const child = new BotProcess('main.js', env, name);
      children.push(child);
      return child;
    };
    // Guilds of every shard for the /up, in turn.
    const upGuilds = [...Array(SHARDS).keys()].map((shard) =>
      guilds.filter((g) => shardForGuild(g.id, SHARDS) === shard).slice(0, 8),
    );

    const first = spawn('old');
    await startedReady(first, START_MS);
    await sessionsSaved(data.path, guilds.length);

    // The load, from the SIGTERM until every shard is back.
    const ups: Array<{ delivery: string; response: Promise<InteractionResponseRecord | undefined> }> = [];
    const sentAt: number[] = [];
    const added: string[] = [];
    let n = 0;
    const stoppedAt = performance.now();
    const stoppedAtWall = Date.now();
    first.kill('SIGTERM');
    load = [
      setInterval(() => {
        const shard = n % SHARDS;
        const list = upGuilds[shard] ?? [];
        const guild = list[Math.floor(n / SHARDS) % list.length] as GuildFixture;
        n++;
        const user = { id: snowflake(), username: `r_${Math.random().toString(36).slice(2, 8)}` };
        const handle = d.sendCommand({ guildId: guild.id, name: 'up', user });
        sentAt.push(handle.sentAt);
        ups.push({
          delivery: handle.delivery,
          response: handle.firstResponse(ACK_WITHIN_MS + 2_000).then(
            (r) => r,
            () => undefined,
          ),
        });
      }, UP_EVERY_MS),
      setInterval(() => {
        const guild = makeGuild({ id: snowflake(), name: `Joined during restart ${added.length}` });
        added.push(guild.id);
        d.addGuild(guild);
      }, GUILD_EVERY_MS),
    ];

    const exit = await withTimeout(first.exited, EXIT_MS, 'the old process to exit after SIGTERM');
    if (dropped) {
      await eventually(
        () => (d.connectedShards().length === 0 ? true : undefined),
        10_000,
        'the stand-in to see the connections close',
        10,
      );
      d.expireDroppedSessions();
    }
    const second = spawn('new');
    const listening = second.opsPort(BACK_MS).then(
      () =>
        (second.lines.find((l) => l.entry?.msg === 'ops server listening')?.at ?? Number.NaN) - stoppedAtWall,
      () => Number.NaN,
    );
    const back = await eventually(
      () => everyShard(d, dropped ? 'ready' : 'resumed', stoppedAt),
      BACK_MS,
      dropped ? 'every shard to be ready' : 'every shard to resume',
      10,
    );
    for (const timer of load) clearInterval(timer);
    load = [];
    const closes = everyShard(d, 'close', stoppedAt);
    const gapsMs = [...back.entries()]
      .map(([shard, e]) => e.at - (closes?.get(shard)?.at ?? Number.NaN))
      .sort((a, b) => a - b);
    const downMs = Math.max(...[...back.values()].map((e) => e.at)) - stoppedAt;
    const timeline = {
      closed: Math.max(...[...(closes?.values() ?? [])].map((e) => e.at)) - stoppedAt,
      exited: exit.at - stoppedAt,
      listening: await listening,
      firstResume: (entriesOf(d, 'resume', stoppedAt)[0]?.at ?? Number.NaN) - stoppedAt,
    };

    const responses = await Promise.all(ups.map((u) => u.response));
    const inTime = responses.filter(
      (r, i): r is InteractionResponseRecord => r !== undefined && r.at - (sentAt[i] ?? 0) <= ACK_WITHIN_MS,
    );

    // Each guild added meanwhile: one 'joined a guild' line, the old process's or the new one's.
    const joinsOf = () => {
      const counts = new Map<string, number>();
      for (const e of [...first.entries(), ...second.entries()]) {
        if (e.msg !== 'joined a guild' || typeof e.guildId !== 'string') continue;
        counts.set(e.guildId, (counts.get(e.guildId) ?? 0) + 1);
      }
      return counts;
    };
    await eventually(
      () => (added.every((id) => joinsOf().has(id)) ? true : undefined),
      10_000,
      'every guild added to be seen',
      100,
    ).catch(() => undefined);
    const expected = guilds.length + added.length;
    let metric: number | undefined;
    await eventually(
      async () => {
        metric = await guildsMetric(second);
        return metric === expected ? true : undefined;
      },
      10_000,
      'discord_guilds to be the guild count',
      200,
    ).catch(() => undefined);
    const joins = joinsOf();

    return {
      dropped,
      exit: { code: exit.code, signal: exit.signal },
      identifies: entriesOf(d, 'identify', stoppedAt).length,
      invalidSessions: entriesOf(d, 'invalid_session', stoppedAt).length,
      gapsMs,
      downMs,
      timeline,
      ups: {
        sent: ups.length,
        acknowledged: inTime.length,
        deferred: inTime.filter((r) => r.type === 5).length,
        refused: inTime.filter((r) => r.type === 4).length,
        queued: ups.filter((u) => u.delivery === 'queued').length,
        dropped: ups.filter((u) => u.delivery === 'dropped').length,
        late: ups.length - inTime.length,
      },
      joins: {
        added: added.length,
        once: added.filter((id) => joins.get(id) === 1).length,
        twice: added.filter((id) => (joins.get(id) ?? 0) > 1).length,
        missing: added.filter((id) => !joins.has(id)).length,
      },
      guilds: { expected, metric },
    };
  } finally {
    for (const timer of load) clearInterval(timer);
    for (const child of children) await child.destroy().catch(() => undefined);
    await discord?.close().catch(() => undefined);
    await emu?.close().catch(() => undefined);
    data.remove();
  }
}

const fmtMs = (v: number): string => (Number.isFinite(v) ? `${Math.round(v)}` : '—');
const timelineOf = (r: RoundResult): string =>
  `old connections closed ${fmtMs(r.timeline.closed)}, old process exited ${fmtMs(r.timeline.exited)}, ` +
  `new one listening ${fmtMs(r.timeline.listening)}, first RESUME ${fmtMs(r.timeline.firstResume)}, ` +
  `last shard back ${fmtMs(r.downMs)}`;

export async function restartScenario(): Promise<ScenarioResult> {
  const guildCount = size(10_000, 1_000);
  const rounds = size(3, 1);
  const guilds = realisticGuilds(guildCount, 12);
  const results: RoundResult[] = [];
  const errors: string[] = [];
  for (let i = 0; i <= rounds; i++) {
    const dropped = i === rounds;
    try {
      results.push(await round(guilds, dropped));
    } catch (err) {
      errors.push(
        `${dropped ? 'sessions dropped' : `round ${i + 1}`}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  const resumed = results.filter((r) => !r.dropped);
  const baseline = results.find((r) => r.dropped);
  const rows: Row[] = [];
  const perRound = (f: (r: RoundResult) => string): string => resumed.map(f).join('; ');
  const count = `${guildCount.toLocaleString('en-US')} guilds, ${SHARDS} shards`;
  if (resumed.length > 0) {
    const identifies = Math.max(...resumed.map((r) => r.identifies));
    const maxGaps = resumed.map((r) => Math.max(...r.gapsMs));
    const worst = Math.max(...maxGaps);
    const baseGap = baseline ? Math.max(...baseline.gapsMs) : undefined;
    const allGaps = resumed.flatMap((r) => r.gapsMs);
    const ups = resumed.reduce(
      (sum, r) => ({
        sent: sum.sent + r.ups.sent,
        acknowledged: sum.acknowledged + r.ups.acknowledged,
        deferred: sum.deferred + r.ups.deferred,
        refused: sum.refused + r.ups.refused,
        queued: sum.queued + r.ups.queued,
        dropped: sum.dropped + r.ups.dropped,
      }),
      { sent: 0, acknowledged: 0, deferred: 0, refused: 0, queued: 0, dropped: 0 },
    );
    const joins = resumed.reduce(
      (sum, r) => ({
        added: sum.added + r.joins.added,
        once: sum.once + r.joins.once,
        twice: sum.twice + r.joins.twice,
        missing: sum.missing + r.joins.missing,
      }),
      { added: 0, once: 0, twice: 0, missing: 0 },
    );
    const restored = resumed.filter((r) => r.guilds.metric === r.guilds.expected).length;
    const exits = resumed.filter((r) => r.exit.code !== 0).map((r) => `${r.exit.code ?? r.exit.signal}`);
    rows.push(
      {
        scenario: SCENARIO,
        metric: `IDENTIFY by the new process (${count})`,
        unit: '',
        ours: identifies,
        ...(baseline ? { baseline: baseline.identifies } : {}),
        target: '0',
        verdict: atMost(identifies, 0),
        note:
          `${resumed.length} round(s), the most in one; per round ${resumed.map((r) => r.identifies).join(', ')}; ` +
          `INVALID_SESSION ${resumed.map((r) => r.invalidSessions).join(', ')}` +
          (exits.length > 0
            ? `; the old process exited with ${exits.join(', ')}`
            : '; the old process exited 0'),
      },
      {
        scenario: SCENARIO,
        metric: 'no connection per shard, max (close → RESUMED)',
        unit: 'ms',
        ours: worst,
        ...(baseGap === undefined ? {} : { baseline: baseGap, ratio: worst / baseGap }),
        target: `≤ ${GAP_TARGET_MS} ms`,
        verdict: atMost(worst, GAP_TARGET_MS),
        note:
          `the worst round's slowest shard; per round, shards ${perRound((r) => r.gapsMs.map(fmtMs).join(' / '))} ms; ` +
          `from the SIGTERM, ms: ${perRound(timelineOf)}; the baseline is the restart with the sessions dropped`,
      },
      {
        scenario: SCENARIO,
        metric: 'no connection per shard, median',
        unit: 'ms',
        ours: median(allGaps),
        ...(baseline ? { baseline: median(baseline.gapsMs) } : {}),
        verdict: 'info',
      },
      {
        scenario: SCENARIO,
        metric: '/up during the restart, first response ≤ 3 s',
        unit: '',
        ours: ups.acknowledged,
        baseline: ups.sent,
        ratio: ups.sent > 0 ? ups.acknowledged / ups.sent : Number.NaN,
        target: `all (${ups.sent})`,
        verdict: ups.sent > 0 ? atLeast(ups.acknowledged, ups.sent) : 'FAIL',
        note:
          `one every ${UP_EVERY_MS} ms from the SIGTERM until every shard resumed, on guilds of all ${SHARDS} shards; ` +
          `baseline = sent; ${ups.deferred} deferred (type 5), ${ups.refused} answered "restarting" (type 4) by the ` +
          `draining old process, counted as acknowledged; ${ups.queued} dispatched while their shard had no ` +
          `connection (replayed on resume), ${ups.dropped} dropped`,
      },
      {
        scenario: SCENARIO,
        metric: 'guilds added during the restart, seen once',
        unit: '',
        ours: joins.once,
        baseline: joins.added,
        target: `all (${joins.added}), once each`,
        verdict: joins.added > 0 && joins.once === joins.added ? 'pass' : 'FAIL',
        note:
          `one every ${GUILD_EVERY_MS} ms; a 'joined a guild' line of the old or the new process; ` +
          `baseline = added; twice: ${joins.twice}, never: ${joins.missing}`,
      },
      {
        scenario: SCENARIO,
        metric: 'discord_guilds of the new process = the guild count',
        unit: 'rounds',
        ours: restored,
        baseline: resumed.length,
        target: 'every round',
        verdict: restored === resumed.length ? 'pass' : 'FAIL',
        note: `per round ${perRound((r) => `${r.guilds.metric ?? '—'} of ${r.guilds.expected}`)} (the snapshot restored, plus the guilds added)`,
      },
    );
  }
  if (baseline) {
    rows.push(
      {
        scenario: SCENARIO,
        metric: 'IDENTIFY, sessions dropped meanwhile',
        unit: '',
        ours: baseline.identifies,
        verdict: 'info',
        note:
          `expireDroppedSessions() once the old process had exited: RESUME refused (${baseline.invalidSessions} ` +
          'INVALID_SESSION), then IDENTIFY, as every restart did before the sessions were kept',
      },
      {
        scenario: SCENARIO,
        metric: 'no connection per shard, max, sessions dropped (close → READY)',
        unit: 'ms',
        ours: Math.max(...baseline.gapsMs),
        verdict: 'info',
        note:
          `shards ${baseline.gapsMs.map(fmtMs).join(' / ')} ms; from the SIGTERM, ms: ${timelineOf(baseline)}; ` +
          `/up first response ≤ 3 s: ${baseline.ups.acknowledged} of ${baseline.ups.sent} (${baseline.ups.dropped} dropped); ` +
          `guilds added seen once: ${baseline.joins.once} of ${baseline.joins.added}`,
      },
    );
  }
  for (const error of errors) {
    rows.push({
      scenario: SCENARIO,
      metric: 'run failed',
      unit: '',
      ours: undefined,
      verdict: 'error',
      note: error,
    });
  }
  return { rows, data: { guilds: guildCount, shards: SHARDS, rounds, results, errors } };
}
