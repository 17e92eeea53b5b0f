import type { REST } from '@discordjs/rest';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { gatherGuildStats } from '../../src/discord/lookups.js';

const GUILD = '722424773233213460';

/** discord.js's REST as the bot sees it under a burst: a GET held back (its global limit) past any signal. */
function heldRest(): { rest: REST; signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  const get = (_route: string, options: { signal: AbortSignal }): Promise<unknown> => {
    signals.push(options.signal);
    return new Promise(() => undefined);
  };
  return { rest: { get } as unknown as REST, signals };
}

describe('gatherGuildStats', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives up at its bound even when the request does not heed the abort, and says why', async () => {
    const { rest, signals } = heldRest();
    const errors: unknown[] = [];
    let stats: unknown;
    void gatherGuildStats(rest, GUILD, 2_000, (err) => errors.push(err)).then((s) => {
      stats = s;
    });
    await vi.advanceTimersByTimeAsync(1_999);
    expect(stats).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(stats).toEqual({});
    expect(errors).toHaveLength(1);
    // The request is still told to stop, for discord.js to drop it when it can.
    expect(signals[0]?.aborted).toBe(true);
  });
});
