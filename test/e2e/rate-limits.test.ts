/**
 * Rate limits with the emulator's published limits switched on and the bot's own limiter at its
 * defaults: the client keeps within them, a 429 is answered privately with the time to wait, and
 * a wait past the interaction's deadline is refused by the client without sending anything.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeGuild } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { expectPrivate, expectPublic, itLeavesNoTrace } from './expectations.js';
import { type Answer, type Harness, LEVEL, optionString, startHarness } from './harness.js';

const freshGuild = makeGuild({ id: IDS.serverFresh, name: 'BotiCord Community' });
const boostedGuild = makeGuild({ id: IDS.serverBoosted, name: 'Аниме Уголок' });

/** The bot's own limiter as deployed (the harness otherwise opens it up). */
const PUBLISHED_LIMITS = {
  DIRECTORY_RATE_LIMIT: '5/5000',
  DIRECTORY_ROUTE_RATE_LIMIT: '1/2000',
  DIRECTORY_RATE_LIMIT_MARGIN_MS: '100',
};

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    guilds: [freshGuild, boostedGuild],
    env: PUBLISHED_LIMITS,
    emulator: { rateLimits: {} },
  });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => h.reset());

function up(guildId: string): Promise<Answer> {
  return h.run({ guildId, name: 'up' });
}

/** The Unix time in "Try again <t:…:R>." */
function retryTime(description: string | undefined): number {
  const match = /^The directory is busy\. Try again <t:(\d+):R>\.$/.exec(description ?? '');
  if (!match) throw new Error(`not a "busy" message: ${description}`);
  return Number(match[1]);
}

describe('rate limits', () => {
  it('within the published limits the second up waits: the directory never answers 429', async () => {
    const first = h.send({ guildId: freshGuild.id, name: 'up' });
    const second = h.send({ guildId: boostedGuild.id, name: 'up' });
    const answers = await Promise.all([first.done, second.done]);
    for (const answer of answers) {
      expect(answer.outcome).toBe('success');
      expectPublic(answer);
      const deferral = await answer.handle.firstResponse();
      expect(deferral.at - answer.handle.sentAt).toBeLessThan(3_000);
    }
    const posts = h.emu.requests.filter((r) => r.method === 'POST');
    expect(posts.map((r) => r.status)).toEqual([200, 200]);
    expect((posts[1]?.at ?? 0) - (posts[0]?.at ?? 0)).toBeGreaterThanOrEqual(2_000);
  });

  it('a 429 whose retry-after passes the deadline, then the client refuses by itself', async () => {
    await h.restartBot(PUBLISHED_LIMITS);
    h.emu.faults.add({ kind: 'rate-limit', retryAfterMs: 1_000_000, method: 'POST', path: /^\/server$/ });
    const before = Date.now();
    const limited = await up(freshGuild.id);
    expect(limited.outcome).toBe('error:RateLimited');
    const { embed } = expectPrivate(limited);
    expect(embed.title).toBe('❌ Could not raise the server');
    const at = retryTime(embed.description);
    expect(at).toBeGreaterThanOrEqual(Math.floor(before / 1000) + 999);
    expect(at).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1001);
    // The retry would come after the interaction has expired: not attempted.
    expect(h.emu.requests.map((r) => `${r.method} ${r.status}`)).toEqual(['POST 429']);

    const refused = await up(boostedGuild.id);
    expect(refused.outcome).toBe('error:RateLimited');
    expect(retryTime(expectPrivate(refused).embed.description)).toBeGreaterThanOrEqual(at - 1);
    expect(h.emu.requests).toHaveLength(1);
    const line = h.entries().find((e) => e.msg === 'command failed' && e.userId === refused.line.userId);
    expect(line).toMatchObject({ level: LEVEL.info, code: 'RateLimited', err: { local: true } });
  });

  it('a 429 on a look-up: retried after retry-after, then answered privately', async () => {
    await h.restartBot(PUBLISHED_LIMITS);
    h.emu.faults.add({ kind: 'rate-limit', retryAfterMs: 1_000, path: /^\/bot\// });
    const answer = await h.run({
      guildId: freshGuild.id,
      name: 'bot',
      options: [optionString('ref', 'kerdoku')],
    });
    expect(answer.outcome).toBe('error:RateLimited');
    const { embed } = expectPrivate(answer);
    expect(retryTime((embed.description ?? '').replace(/^❌ /, ''))).toBeGreaterThan(Date.now() / 1000 - 5);
    const tries = h.emu.requests.filter((r) => r.path === '/v2/bot/kerdoku');
    expect(tries.map((r) => r.status)).toEqual([429, 429, 429]);
    expect((tries[1]?.at ?? 0) - (tries[0]?.at ?? 0)).toBeGreaterThanOrEqual(1_000);
  });
});

itLeavesNoTrace(() => h);
