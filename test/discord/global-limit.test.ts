/**
 * The stand-in's opt-in global limit (global-limit.ts): the bot token's requests per window,
 * interaction endpoints and requests without the token not counted, Discord's 429 past it; off by
 * default.
 */
import { describe, expect, it } from 'vitest';
import { sleep } from '../support/wait.js';
import { snowflake } from './index.js';
import { standInSession } from './test-session.js';

const session = standInSession();

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

async function call(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
}

describe("the stand-in's global limit", () => {
  it('answers past max requests a window with 429, global, as Discord does, and counts them', async () => {
    const si = await session.start({ globalRateLimit: { max: 5, windowMs: 600 } });
    const bot = { authorization: `Bot ${si.token}` };
    const first = await Promise.all(
      Array.from({ length: 8 }, () => call(`${si.restUrl}/v10/channels/${snowflake()}`, { headers: bot })),
    );
    // Five counted and answered (an unknown channel), three refused.
    expect(first.filter((a) => a.status === 404)).toHaveLength(5);
    const refused = first.filter((a) => a.status === 429);
    expect(refused).toHaveLength(3);
    for (const answer of refused) {
      const body = answer.body as { message: string; retry_after: number; global: boolean };
      expect(body.message).toBe('You are being rate limited.');
      expect(body.global).toBe(true);
      expect(body.retry_after).toBeGreaterThan(0);
      expect(body.retry_after).toBeLessThanOrEqual(0.6);
      expect(Number(answer.headers.get('retry-after'))).toBe(body.retry_after);
      expect(answer.headers.get('x-ratelimit-global')).toBe('true');
      expect(answer.headers.get('x-ratelimit-scope')).toBe('global');
    }
    expect(si.globalRateLimited()).toBe(3);
    expect(si.globalCounted()).toBe(8);

    // Not counted: interaction callbacks and webhooks (no bot token, or even with it), and a
    // request without the bot's token.
    const app = si.applicationId;
    const exempt = await Promise.all([
      call(`${si.restUrl}/v10/interactions/${snowflake()}/tok/callback`, {
        method: 'POST',
        headers: { ...bot, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 5 }),
      }),
      call(`${si.restUrl}/v10/webhooks/${app}/tok/messages/@original`, { headers: bot }),
      call(`${si.restUrl}/v10/webhooks/${app}/tok`, { method: 'POST', body: '{}' }),
      call(`${si.restUrl}/v10/channels/${snowflake()}`),
    ]);
    expect(exempt.map((a) => a.status)).not.toContain(429);
    expect(si.globalRateLimited()).toBe(3);
    expect(si.globalCounted()).toBe(8);

    // The next window takes five again.
    const retryAfter = (refused[0]!.body as { retry_after: number }).retry_after;
    await sleep(retryAfter * 1000 + 50);
    const next = await Promise.all(
      Array.from({ length: 5 }, () => call(`${si.restUrl}/v10/channels/${snowflake()}`, { headers: bot })),
    );
    expect(next.map((a) => a.status)).toEqual([404, 404, 404, 404, 404]);
    expect(si.globalRateLimited()).toBe(3);
  });

  it('is off by default', async () => {
    const si = await session.start();
    const answers = await Promise.all(
      Array.from({ length: 120 }, () =>
        call(`${si.restUrl}/v10/channels/${snowflake()}`, { headers: { authorization: `Bot ${si.token}` } }),
      ),
    );
    expect(answers.filter((a) => a.status === 429)).toEqual([]);
    expect(si.globalRateLimited()).toBe(0);
    expect(si.globalCounted()).toBe(0);
  });
});
