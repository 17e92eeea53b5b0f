import type { REST } from '@discordjs/rest';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { gatherGuildStats } from '../../src/discord/lookups.js';

const GUILD = '722424773233213460';

/** discord.js's REST as the bot sees it under a burst: a GET held back (its global limit). */
function heldRest(): { rest: REST; signals: Array<AbortSignal | undefined> } {
  const signals: Array<AbortSignal | undefined> = [];
  const get = (_route: string, options?: { signal?: AbortSignal }): Promise<unknown> => {
    signals.push(options?.signal);
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

  it('gives up at its bound while the request waits, and says why', async () => {
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
    // The request is left to run, not aborted: @discordjs/rest takes an abort noticed after the
    // global limit's wait for a failure to try again, up to three more of its 50 slots a second.
    expect(signals).toEqual([undefined]);
  });
});
