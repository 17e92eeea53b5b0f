/**
 * Discord's gateway having a bad hour, as an operator reads it (issue 39, item 3), scaled from
 * minutes to seconds: sessions invalidated one after another, a reconnect asked for, heartbeats
 * left unacknowledged. The bot comes back each time (resuming where it can, identifying only where
 * the session is gone, never more), a command sent while its shard was away is answered, and the
 * log tells the trouble in one warning when it begins and one line when every shard has been
 * connected again for 10 s, saying how many sessions were lost: not a line per close and resume.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STEADY_MS } from '../../src/gateway/gateway-health.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { makeGuild } from '../discord/index.js';
import { eventually } from '../support/wait.js';
import { type Harness, LEVEL, type LogEntry, startHarness } from './harness.js';

const guild = makeGuild({ name: 'Gateway weather', channels: ['general'] });

describe("Discord's gateway having a bad hour: one line per state change", () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({
      guilds: [guild],
      // Short, so that a heartbeat left unacknowledged is noticed within a second or two.
      heartbeatIntervalMs: 1_000,
      metrics: (logger) => createMetrics({ logger, defaultMetrics: false }),
    });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  const lines = (from: number, msg: RegExp): LogEntry[] =>
    h
      .entries()
      .slice(from)
      .filter((e) => msg.test(String(e.msg)));
  const warnings = (from: number): LogEntry[] =>
    h
      .entries()
      .slice(from)
      .filter((e) => e.level >= LEVEL.warn);
  /** Gateway log entries of a kind since index `from` of the stand-in's log. */
  const kinds = (from: number, kind: string): number =>
    h.discord.gatewayLog.slice(from).filter((e) => e.kind === kind).length;

  async function metric(name: string): Promise<Record<string, number>> {
    const text = await h.metrics!.registry.getSingleMetricAsString(name);
    const out: Record<string, number> = {};
    for (const [, value, n] of text.matchAll(/^\w+\{\w+="(\w+)"\} (\d+)$/gm)) out[value!] = Number(n);
    return out;
  }

  /** The steady line, once every shard has been connected for STEADY_MS. */
  const steadyAfter = (from: number): Promise<LogEntry> =>
    eventually(() => lines(from, /^Discord gateway steady again/)[0], STEADY_MS + 15_000, 'the steady line');

  it('three sessions invalidated in a row: three identifies, one warning, one line saying three sessions were lost', async () => {
    const from = h.entries().length;
    const logFrom = h.discord.gatewayLog.length;
    for (let i = 1; i <= 3; i++) {
      h.discord.invalidateSession(0);
      await eventually(() => kinds(logFrom, 'ready') >= i || undefined, 20_000, `session ${i} begun anew`);
    }
    const troubled = lines(from, /^Discord gateway trouble/);
    expect(troubled).toHaveLength(1);
    expect(troubled[0]).toMatchObject({
      level: LEVEL.warn,
      discordGateway: 'troubled',
      shardId: 0,
      cause: 'session_invalidated',
    });
    expect(String(troubled[0]!.msg)).toContain('invalidated its session');
    expect(await metric('discord_gateway_state')).toMatchObject({ steady: 0, troubled: 1 });

    // The bot answers on its new session.
    const answer = await h.run({ guildId: guild.id, name: 'help', locale: 'en-US' });
    expect(answer.outcome).toBe('shown');

    const steady = await steadyAfter(from);
    expect(steady).toMatchObject({
      level: LEVEL.info,
      discordGateway: 'steady',
      was: 'troubled',
      disconnections: 3,
      causes: { session_invalidated: 3 },
      shards: [0],
      resumed: 0,
      sessionsLost: 3,
    });
    expect(String(steady.msg)).toContain('3 session(s) lost');
    // One identify per session lost, none more; nothing but the one warning at warn or above.
    expect(kinds(logFrom, 'identify')).toBe(3);
    expect(warnings(from)).toEqual(troubled);
    // The per-shard lines are debug now: no "shard reconnecting" at info.
    expect(lines(from, /^shard (reconnecting|resumed)$/).filter((e) => e.level >= LEVEL.info)).toEqual([]);
    expect(await metric('discord_gateway_state')).toMatchObject({ steady: 1, troubled: 0 });
    expect(await metric('discord_gateway_disconnections_total')).toMatchObject({ session_invalidated: 3 });
    expect(await metric('discord_gateway_state_changes_total')).toMatchObject({ troubled: 1, steady: 1 });
  }, 90_000);

  it('a reconnect asked for, then heartbeats unanswered for 3 s: resumed each time, no identify, the command sent meanwhile answered, one warning, one line', async () => {
    const from = h.entries().length;
    const logFrom = h.discord.gatewayLog.length;
    h.discord.requestReconnect(0);
    // Sent while the shard is away: Discord keeps it for the session, and replays it on RESUME.
    await eventually(
      () => (h.discord.connectedShards().includes(0) ? undefined : true),
      5_000,
      'shard 0 away',
    );
    const pending = h.send({ guildId: guild.id, name: 'help', locale: 'en-US' }, 20_000);
    await eventually(() => kinds(logFrom, 'resumed') >= 1 || undefined, 10_000, 'the resume');
    expect((await pending.done).outcome).toBe('shown');

    h.discord.dropHeartbeatAcks(0, true);
    const droppedFrom = h.discord.gatewayLog.length;
    // A heartbeat unanswered is noticed at the next one (1 s apart): at least one close by then.
    await eventually(() => kinds(droppedFrom, 'resumed') >= 1 || undefined, 10_000, 'a zombie resumed');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    h.discord.dropHeartbeatAcks(0, false);

    const steady = await steadyAfter(from);
    const troubled = lines(from, /^Discord gateway trouble/);
    expect(troubled).toHaveLength(1);
    expect(troubled[0]).toMatchObject({ level: LEVEL.warn, cause: 'reconnect_requested', shardId: 0 });
    expect(steady).toMatchObject({ level: LEVEL.info, was: 'troubled', sessionsLost: 0 });
    const causes = steady.causes as Record<string, number>;
    expect(causes.reconnect_requested).toBe(1);
    expect(causes.heartbeat_unacknowledged).toBeGreaterThanOrEqual(1);
    expect(steady.resumed).toBe(steady.disconnections);
    expect(String(steady.msg)).toContain('no session lost');
    expect(kinds(logFrom, 'identify')).toBe(0);
    expect(warnings(from)).toEqual(troubled);
    const disconnections = await metric('discord_gateway_disconnections_total');
    expect(disconnections.heartbeat_unacknowledged).toBe(causes.heartbeat_unacknowledged);
  }, 90_000);
});

describe("sessions lost with the day's identify budget at its floor", () => {
  let h: Harness;

  beforeAll(async () => {
    // 22 left: the start spends one (21), the first session lost one more (20, the floor).
    h = await startHarness({ guilds: [guild], sessionStartLimit: 22 });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  it('identifies down to the floor, then waits for the reset, told in one error line', async () => {
    const from = h.entries().length;
    const logFrom = h.discord.gatewayLog.length;
    h.discord.invalidateSession(0);
    await eventually(
      () => (h.discord.gatewayLog.slice(logFrom).some((e) => e.kind === 'ready') ? true : undefined),
      20_000,
      'the first session begun anew',
    );
    h.discord.invalidateSession(0);
    const floor = await eventually(
      () =>
        h
          .entries()
          .slice(from)
          .find((e) => /identify budget is down to/.test(String(e.msg))),
      10_000,
      'the floor line',
    );
    expect(floor).toMatchObject({ level: LEVEL.error, shardId: 0, remaining: 20, floor: 20 });
    expect(String(floor.msg)).toContain('IDENTIFY_BUDGET_FLOOR=20');
    // Past discord.js's own 5 s between identifies: still no second one.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    const identifies = h.discord.gatewayLog.slice(logFrom).filter((e) => e.kind === 'identify');
    expect(identifies).toHaveLength(1);
    expect(h.discord.connectedShards()).toEqual([]);
    expect(h.entries().filter((e) => /identify budget is down to/.test(String(e.msg)))).toHaveLength(1);
  }, 60_000);
});
