/**
 * Discord's gateway health (src/gateway/gateway-health.ts) as the operator reads it: one warning
 * when a connected shard loses its connection, one line once every shard has been connected again
 * for the steady time, whatever the number of closes in between; the reasons read from
 * @discordjs/ws's own debug lines (as it words them); closes at start-up and while stopping are
 * not trouble. The end-to-end run through the real bot is test/e2e/gateway-outage.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { causeOf, GatewayHealth, type GatewayState } from '../../src/gateway/gateway-health.js';
import { createMetrics } from '../../src/ops/metrics.js';
import { captureLogger, LEVEL } from '../support/logs.js';

const STEADY = 1_000;

function rig() {
  const { logger, lines } = captureLogger();
  const metrics = createMetrics({ defaultMetrics: false });
  const changes: GatewayState[] = [];
  const health = new GatewayHealth({
    logger,
    steadyMs: STEADY,
    onChange: (state) => {
      changes.push(state);
      metrics.discordGateway(state);
    },
    onDisconnection: (cause) => metrics.gatewayDisconnection(cause),
  });
  const told = () => lines.filter((l) => l.level >= LEVEL.info);
  const metric = async (name: string) => {
    const text = await metrics.registry.getSingleMetricAsString(name);
    return Object.fromEntries([...text.matchAll(/="(\w+)"\} (\d+)/g)].map(([, k, v]) => [k, Number(v)]));
  };
  return { health, told, changes, metric };
}

describe('the reasons, as @discordjs/ws words them in its debug lines', () => {
  it.each([
    [
      'Destroying shard\n\tReason: Told to reconnect by Discord\n\tCode: 4200\n\tRecover: Resume',
      'reconnect_requested',
    ],
    [
      'Destroying shard\n\tReason: Zombie connection\n\tCode: 4200\n\tRecover: Resume',
      'heartbeat_unacknowledged',
    ],
    ['Invalid session; will attempt to resume: false', 'session_invalidated'],
  ])('%j', (message, cause) => {
    expect(causeOf(message)).toBe(cause);
  });
  it('names nothing for other lines, an invalid session that resumes among them', () => {
    expect(causeOf('Invalid session; will attempt to resume: true')).toBeUndefined();
    expect(causeOf('Heartbeat acknowledged, latency of 12ms.')).toBeUndefined();
  });
});

describe('GatewayHealth', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('two shards flapping for a while: one warning, one line when both have been connected for the steady time', async () => {
    const r = rig();
    r.health.began(0, 'identified');
    r.health.began(1, 'identified');
    expect(r.told()).toEqual([]);
    for (let i = 0; i < 5; i++) {
      r.health.debug(0, 'Destroying shard\n\tReason: Told to reconnect by Discord');
      r.health.closed(0, 4200);
      r.health.closed(1, 1006);
      r.health.began(0, 'resumed');
      vi.advanceTimersByTime(STEADY / 2);
      r.health.began(1, 'resumed');
      vi.advanceTimersByTime(STEADY / 2);
    }
    expect(r.told()).toHaveLength(1);
    expect(r.told()[0]).toMatchObject({ level: LEVEL.warn, cause: 'reconnect_requested', shardId: 0 });
    expect(await r.metric('discord_gateway_state')).toMatchObject({ steady: 0, troubled: 1 });
    vi.advanceTimersByTime(STEADY);
    expect(r.told()).toHaveLength(2);
    expect(r.told()[1]).toMatchObject({
      level: LEVEL.info,
      was: 'troubled',
      disconnections: 10,
      causes: { reconnect_requested: 5, connection_lost: 5 },
      shards: [0, 1],
      resumed: 10,
      sessionsLost: 0,
    });
    expect(r.changes).toEqual(['troubled', 'steady']);
    expect(await r.metric('discord_gateway_disconnections_total')).toEqual({
      reconnect_requested: 5,
      connection_lost: 5,
    });
  });

  it('a shard still away holds the trouble open; a second close while coming back is the same disconnection', () => {
    const r = rig();
    r.health.began(0, 'identified');
    r.health.began(1, 'identified');
    r.health.closed(1, 4009);
    // Its RESUME refused: INVALID_SESSION, then a close with 1000, then a new session.
    r.health.debug(1, 'Invalid session; will attempt to resume: false');
    r.health.closed(1, 1000);
    vi.advanceTimersByTime(STEADY * 5);
    expect(r.told()).toHaveLength(1);
    r.health.began(1, 'identified');
    vi.advanceTimersByTime(STEADY);
    expect(r.told()[1]).toMatchObject({
      disconnections: 1,
      causes: { closed: 1 },
      sessionsLost: 1,
      resumed: 0,
    });
  });

  it('closes before a shard was ever connected, and while stopping, are not trouble', () => {
    const r = rig();
    r.health.closed(0, 1006);
    r.health.began(0, 'identified');
    r.health.stopping();
    r.health.closed(0, 1000);
    vi.advanceTimersByTime(STEADY * 2);
    expect(r.told()).toEqual([]);
    expect(r.health.state()).toBe('steady');
  });
});
