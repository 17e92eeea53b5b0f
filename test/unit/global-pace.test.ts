/**
 * Discord's global limit as a setting (DISCORD_GLOBAL_RATE_LIMIT, src/gateway/global-pace.ts):
 * the pace lets through as many requests in any second as the limit says, no more, whatever it is
 * set to; the bot's REST (client.ts) and the proxy (rest-proxy.ts) take the same number.
 */
import { REST, type RESTOptions } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/env.js';
import { DISCORD_GLOBAL_REQUESTS_PER_SECOND, paceGlobally } from '../../src/gateway/global-pace.js';

/** When (ms from the first) each of `n` requests reached "Discord", through a pace of `perSecond`. */
async function arrivals(perSecond: number, n: number): Promise<number[]> {
  const at: number[] = [];
  const makeRequest: RESTOptions['makeRequest'] = async () => {
    at.push(performance.now());
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } }) as never;
  };
  const rest = new REST({
    api: 'http://127.0.0.1:9/api',
    makeRequest,
    globalRequestsPerSecond: perSecond,
  }).setToken('not-a-real-token');
  paceGlobally(rest, perSecond);
  // Each to a route of its own: only the global limit holds them.
  await Promise.all(Array.from({ length: n }, (_, i) => rest.get(`/channels/${1000 + i}`)));
  const first = Math.min(...at);
  return at.map((t) => t - first).sort((a, b) => a - b);
}

/** The most requests that arrived within any 1,000 ms. */
function mostInASecond(at: number[]): number {
  let most = 0;
  for (let i = 0, j = 0; j < at.length; j++) {
    while (at[j]! - at[i]! >= 1_000) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

describe('the global limit, a setting', () => {
  it("defaults to Discord's 50 a second", () => {
    expect(loadConfig({}).discord.globalPerSecond).toBe(DISCORD_GLOBAL_REQUESTS_PER_SECOND);
    expect(loadConfig({ DISCORD_GLOBAL_RATE_LIMIT: '120' }).discord.globalPerSecond).toBe(120);
  });

  it.each([50, 120])(
    'at %i a second: never more in any second, and 2.5 × that many done in about 2 s',
    async (perSecond) => {
      const at = await arrivals(perSecond, Math.round(perSecond * 2.5));
      expect(mostInASecond(at)).toBe(perSecond);
      expect(at.at(-1)).toBeGreaterThanOrEqual(2_000);
      expect(at.at(-1)).toBeLessThan(3_000);
    },
    10_000,
  );
});
