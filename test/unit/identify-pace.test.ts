/**
 * Identifies while the bot runs (src/gateway/identify-pace.ts): a shard that keeps losing its
 * session identifies at a slowing pace, and never below the day's budget floor, waiting for the
 * reset instead (one error line). The end-to-end floor is in test/e2e/gateway-outage.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { FIRST_WAIT_MS, IdentifyPace, MAX_WAIT_MS, QUIET_MS } from '../../src/gateway/identify-pace.js';
import { captureLogger, LEVEL } from '../support/logs.js';

/** An IdentifyPace on a clock of the test's own: a wait moves the clock by its length. */
function rig(floor = 20) {
  const { logger, lines } = captureLogger();
  let clock = 1_000_000;
  const pace = new IdentifyPace({
    floor,
    logger,
    now: () => clock,
    sleep: async (ms, signal) => {
      signal.throwIfAborted();
      clock += ms;
    },
  });
  const signal = new AbortController().signal;
  /** How long (on the clock) the identify of `shardId` waited. */
  const identify = async (shardId: number): Promise<number> => {
    const started = clock;
    await pace.before(shardId, signal);
    return clock - started;
  };
  const pass = (ms: number) => {
    clock += ms;
  };
  const now = () => clock;
  return { pace, identify, lines, pass, now };
}

describe('IdentifyPace', () => {
  it('three identifies of a shard in a row never wait; then 5 s, 10 s, 20 s … up to 10 minutes; a session that lasts 10 minutes ends the row', async () => {
    const r = rig();
    r.pace.told({ total: 1000, remaining: 1000, reset_after: 86_400_000 });
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) waits.push(await r.identify(0));
    expect(waits.slice(0, 3)).toEqual([0, 0, 0]);
    expect(waits[3]).toBeGreaterThanOrEqual(FIRST_WAIT_MS);
    expect(waits[3]).toBe(FIRST_WAIT_MS);
    expect(waits[4]).toBe(2 * FIRST_WAIT_MS);
    expect(Math.max(...waits)).toBe(MAX_WAIT_MS);
    // Another shard is not held by this one's.
    expect(await r.identify(1)).toBe(0);
    // A session that lasted 10 minutes ends the row.
    r.pass(QUIET_MS);
    expect(await r.identify(0)).toBe(0);
    expect(r.pace.remaining()).toBe(1000 - 14);
  });

  it('an hour of sessions lost every few seconds spends about fifteen identifies, not 720', async () => {
    const r = rig();
    r.pace.told({ total: 1000, remaining: 1000, reset_after: 86_400_000 });
    const start = r.now();
    let identifies = 0;
    while (r.now() - start < 60 * 60_000) {
      await r.identify(0);
      identifies += 1;
      r.pass(5_000);
    }
    expect(identifies).toBeLessThanOrEqual(16);
  });

  it('at the floor: waits for the reset, one error line, then identifies with the budget back', async () => {
    const r = rig(20);
    r.pace.told({ total: 1000, remaining: 21, reset_after: 30 * 60_000 });
    expect(await r.identify(0)).toBe(0);
    expect(r.pace.remaining()).toBe(20);
    const waited = await r.identify(1);
    expect(waited).toBe(30 * 60_000);
    const told = r.lines.filter((l) => l.level >= LEVEL.warn);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: LEVEL.error, remaining: 20, floor: 20, shardId: 1 });
    expect(r.pace.remaining()).toBe(999);
  });

  it('aborted (the shard destroyed) while waiting: rejects at once', async () => {
    const { logger } = captureLogger();
    const pace = new IdentifyPace({ floor: 20, logger });
    pace.told({ total: 1000, remaining: 20, reset_after: 60 * 60_000 });
    const controller = new AbortController();
    const waiting = pace.before(0, controller.signal);
    waiting.catch(() => undefined);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('before Discord told the budget: only the pace', async () => {
    const r = rig();
    expect(await r.identify(0)).toBe(0);
    expect(r.pace.remaining()).toBeUndefined();
  });
});
