/**
 * The operations endpoint in process: startOpsServer on 127.0.0.1 with isReady: bot.readiness()
 * (as main.ts wires it), the bot on the Discord stand-in with 4 shards, posting stats to the
 * directory emulator, on the rig of the end-to-end tests (test/support/rig.ts). /readyz follows
 * the shards through disconnects; /metrics shows the traffic.
 */
import { Events } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BotApp } from '../../src/app/bot.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { type OpsServer, startOpsServer } from '../../src/ops/server.js';
import { type DiscordStandIn, snowflake } from '../discord/index.js';
import { assertNoViolations } from '../discord/spec/conformance.js';
import { type Emulator, IDS, TOKENS } from '../emulator/index.js';
import {
  createRigBot,
  HandledLines,
  type RigBot,
  rigEnvironment,
  type StandIns,
  startStandIns,
} from '../support/rig.js';
import { tempDir } from '../support/temp.js';
import {
  discordLikeToken,
  eventually,
  guildSet,
  httpGet,
  LEVEL,
  LOCALHOST,
  LogSink,
  leaksIn,
  linesOf,
  readyz,
  readyzBecomes,
  sample,
  statsRequests,
  withTimeout,
} from './helpers.js';
import {
  alertRules,
  dashboardExpressions,
  exposedSeries,
  PROMETHEUS_OWN,
  selectedMetrics,
} from './monitoring.js';

const SHARDS = 4;
const GUILDS = 300;

let stage: StandIns;
let emu: Emulator;
let discord: DiscordStandIn;
let rig: RigBot;
let bot: BotApp;
let ops: OpsServer;
let sink: LogSink;
const data = tempDir('ops-endpoint-data-');
let users: number;
const secrets = new Set<string>(Object.values(TOKENS));

beforeAll(async () => {
  // A server the directory knows (for /up), among 299 generated ones.
  const set = guildSet(GUILDS, [{ id: IDS.serverFresh, memberCount: 1_234 }]);
  users = set.users;
  stage = await startStandIns({
    emulator: { rateLimits: false },
    discord: { shards: SHARDS, guilds: set.guilds, token: discordLikeToken() },
  });
  ({ emu, discord } = stage);
  secrets.add(discord.token);
  const places = { directoryUrl: emu.url, discordRestUrl: discord.restUrl, discordToken: discord.token };
  sink = new LogSink();
  rig = await createRigBot({
    env: rigEnvironment(
      { ...places, dataDir: data.path },
      {
        SHARD_COUNT: String(SHARDS),
        DIRECTORY_RATE_LIMIT: '1000/1000',
        DIRECTORY_ROUTE_RATE_LIMIT: '1000/1000',
        LOG_LEVEL: 'debug',
      },
    ),
    log: new HandledLines(sink),
    metrics: (logger) => createMetrics({ logger }),
    postStats: true,
    stats: { intervalMs: 1_000, firstDelayMs: 0, startDelayMs: 0, notReadyRetryMs: 200 },
  });
  bot = rig.app;
  const metrics = rig.metrics;
  if (!metrics) throw new Error('the rig made no metrics');
  ops = await startOpsServer({
    port: 0,
    host: LOCALHOST,
    metrics,
    isReady: () => bot.readiness(),
    logger: rig.logger,
  });
  await rig.start();
  // Its own 30 s plus START_BOUND_MS for the start-up on a busy machine.
}, 90_000);

afterAll(async () => {
  // Bounded: discord.js's destroy() can hang (see shutdown.test.ts); the report must still be written.
  await withTimeout(bot?.stop(500) ?? Promise.resolve(), 5_000, 'the bot to stop').catch((err: unknown) => {
    console.error(String(err));
  });
  await ops?.close();
  await stage?.close();
  data.remove();
  const leaked = leaksIn(linesOf('log line', sink?.lines ?? []), secrets);
  sink?.close();
  expect(leaked, 'no token in the bot log').toEqual([]);
  assertNoViolations(discord?.specViolations() ?? []);
}, 15_000);

describe('operations endpoint in process', () => {
  it('/readyz is 503 while a shard re-identifies after 4007 and 200 once it is back', async () => {
    const ok = await readyz(ops.port);
    expect(ok).toEqual({
      status: 200,
      body: { ready: true, detail: { shards: 4, expected: 4, notReady: [] } },
    });

    // 4007 (invalid seq) ends the session: discord.js identifies again, after its identify throttle
    // (5 s per bucket since the last identify), and the stand-in holds the READY 0.5 s more.
    discord.setIdentifyDelay(1, 500);
    const disconnectedAt = Date.now();
    discord.disconnectShard(1, 4007);
    try {
      const down = await readyzBecomes(ops.port, 503, 1_000, 20);
      expect(down.body).toEqual({ ready: false, detail: { shards: 4, expected: 4, notReady: [1] } });
      const up = await readyzBecomes(ops.port, 200, 10_000, 50);
      expect(up.body.detail?.notReady).toEqual([]);
      console.log(
        `/readyz: 503 after ${down.at - disconnectedAt} ms, 200 again after ${up.at - disconnectedAt} ms`,
      );
      expect(up.at - disconnectedAt).toBeGreaterThanOrEqual(450);
    } finally {
      discord.setIdentifyDelay(1, 0);
    }
  }, 20_000);

  for (const code of [4000, 1006]) {
    it(`/readyz is not ready while a shard resumes after ${code}, and 200 once it has resumed`, async () => {
      // A resume is quick (no identify to hold): read readiness as the bot learns of the disconnect.
      const seen = new Promise<ReturnType<BotApp['readiness']>>((resolve) =>
        bot.client.once(Events.ShardReconnecting, () => resolve(bot.readiness())),
      );
      const resumed = new Promise<number>((resolve) =>
        bot.client.once(Events.ShardResume, (id) => resolve(id)),
      );
      discord.disconnectShard(2, code);
      const during = await withTimeout(seen, 2_000, 'the bot to see the disconnect');
      expect(during).toEqual({ ready: false, detail: { shards: 4, expected: 4, notReady: [2] } });
      expect(await withTimeout(resumed, 5_000, 'shard 2 to resume')).toBe(2);
      const up = await readyzBecomes(ops.port, 200, 2_000);
      expect(up.body.detail?.notReady).toEqual([]);
      expect(sink.count((e) => e.msg === 'shard resumed' && e.shardId === 2)).toBeGreaterThanOrEqual(1);
    }, 10_000);
  }

  it('/metrics shows interactions, directory requests, stats posts, guilds and shards', async () => {
    const user = { id: snowflake(), username: 'ops_metrics' };
    const handled = rig.handled.waitFor(user.id, 5_000);
    const handle = discord.sendCommand({ guildId: IDS.serverFresh, name: 'up', user });
    expect((await handle.firstResponse(3_000)).type).toBe(5);
    expect((await handled).outcome).toBe('success');
    expect(
      handle.requests().some((r) => r.method === 'PATCH' && r.path.endsWith('/messages/@original')),
    ).toBe(true);
    await eventually(() => statsRequests(emu).find((r) => r.status === 200), 5_000, 'a stats post');

    const text: string = await eventually(
      async () => {
        const answer = await httpGet(ops.port, '/metrics');
        expect(answer.status).toBe(200);
        const posted = sample(answer.body, 'directory_stats_posts_total', { outcome: 'posted' }) ?? 0;
        const handled = sample(answer.body, 'bot_interactions_total', { kind: 'command', name: 'up' }) ?? 0;
        return posted >= 1 && handled >= 1 ? answer.body : undefined;
      },
      3_000,
      'the metrics to show the post and the interaction',
    );
    expect(sample(text, 'bot_interactions_total', { kind: 'command', name: 'up', outcome: 'success' })).toBe(
      1,
    );
    expect(sample(text, 'directory_requests_total', { route: 'POST /server', status: '200' })).toBe(1);
    expect(
      sample(text, 'directory_requests_total', { route: 'POST /stats', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'directory_stats_posts_total', { outcome: 'posted' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'directory_stats_last_success_timestamp_seconds')).toBeGreaterThan(0);
    expect(sample(text, 'discord_guilds')).toBe(GUILDS);
    expect(sample(text, 'discord_shards', { status: 'ready' })).toBe(SHARDS);
    expect(sample(text, 'discord_shards', { status: 'not_ready' })).toBe(0);
    // What the poster sent is the same total.
    const last = statsRequests(emu)
      .filter((r) => r.status === 200)
      .at(-1);
    expect(JSON.parse(last?.body ?? '{}')).toEqual({ servers: GUILDS, shards: SHARDS, users });
    expect(sink.count((e) => (e.level ?? 0) >= LEVEL.error)).toBe(0);
  }, 15_000);

  it('/metrics has every metric the dashboard and the alert rules use; sessions, identify budget and store filled', async () => {
    const text = (await httpGet(ops.port, '/metrics')).body;
    const { expressions, variableMetrics } = dashboardExpressions();
    const used = new Set([
      ...variableMetrics,
      ...[...expressions, ...alertRules()].flatMap(({ expr }) => selectedMetrics(expr).metrics),
    ]);
    const exposed = exposedSeries(text);
    expect([...used].filter((name) => !exposed.has(name) && !PROMETHEUS_OWN.has(name))).toEqual([]);

    // Each shard identified at the start, shard 1 again after 4007; shard 2 resumed after 4000 and
    // 1006 (the tests above). The stand-in counts the identifies against its budget of 1,000.
    const sessions = (shard: number, kind: string) =>
      sample(text, 'discord_gateway_sessions_total', { shard: String(shard), kind }) ?? 0;
    expect([0, 1, 2, 3].map((shard) => sessions(shard, 'identified'))).toEqual([1, 2, 1, 1]);
    expect([0, 1, 2, 3].map((shard) => sessions(shard, 'resumed'))).toEqual([0, 0, 2, 0]);
    expect(sample(text, 'discord_identify_budget_total')).toBe(1_000);
    expect(sample(text, 'discord_identify_budget_remaining')).toBe(1_000 - SHARDS - 1);
    // The store's statements, by kind: the settings read at the least.
    expect(
      sample(text, 'store_query_duration_seconds_count', {
        engine: 'sqlite',
        statement: 'select',
        outcome: 'ok',
      }),
    ).toBeGreaterThan(0);
    expect(text).not.toMatch(/store_query_duration_seconds_count\{[^}]*outcome="error"/);
  }, 15_000);
});
