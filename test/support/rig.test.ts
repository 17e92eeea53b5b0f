/** The rig's one wait for a handled interaction: the router's line, for the right user, bounded. */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { LogSink } from './logs.js';
import { HandledLines, isHandled } from './rig.js';

function loggerInto(lines: HandledLines) {
  return pino({ level: 'info', base: null }, lines);
}

describe('HandledLines', () => {
  it("resolves with the handled line of the user's interaction, not another's, and passes every line on", async () => {
    const sink = new LogSink();
    const lines = new HandledLines(sink);
    const logger = loggerInto(lines);
    const mine = lines.waitFor('1001', 1_000);
    logger.info({ userId: '1001' }, 'command started');
    logger.info({ userId: '2002', outcome: 'cooldown' }, 'interaction handled');
    logger.info({ userId: '1001', outcome: 'success', name: 'up' }, 'interaction handled');
    const line = await mine;
    expect(line).toMatchObject({ msg: 'interaction handled', userId: '1001', outcome: 'success' });
    expect(isHandled(line, '1001')).toBe(true);
    expect(isHandled(line, '2002')).toBe(false);
    expect(sink.entries.map((e) => e.msg)).toEqual([
      'command started',
      'interaction handled',
      'interaction handled',
    ]);
  });

  it('waits only for lines written after it began', async () => {
    const lines = new HandledLines();
    const logger = loggerInto(lines);
    logger.info({ userId: '1001', outcome: 'first' }, 'interaction handled');
    const next = lines.waitFor('1001', 1_000);
    logger.info({ userId: '1001', outcome: 'second' }, 'interaction handled');
    expect((await next).outcome).toBe('second');
  });

  it('rejects after its bound, naming what it waited for', async () => {
    const lines = new HandledLines();
    await expect(lines.waitFor('1001', 50, { what: "the bot's answer" })).rejects.toThrow(
      "timed out after 50 ms waiting for the bot's answer",
    );
  });

  it('rejects with the reason of an abort, and on close', async () => {
    const lines = new HandledLines();
    const controller = new AbortController();
    const aborted = lines.waitFor('1001', 5_000, { signal: controller.signal });
    controller.abort(new Error('interrupted'));
    await expect(aborted).rejects.toThrow('interrupted');
    const open = lines.waitFor('1001', 5_000);
    lines.close();
    await expect(open).rejects.toThrow('closed');
  });
});

describe('HandledLines, a wait never awaited', () => {
  it('leaves no unhandled rejection when its bound passes', async () => {
    const seen: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      seen.push(reason);
    };
    process.on('unhandledRejection', onUnhandled);
    try {
      new HandledLines().waitFor('1001', 10);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(seen).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
