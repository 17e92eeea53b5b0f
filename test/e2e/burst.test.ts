/**
 * A burst of /up interactions dispatched all at once, as Discord does when many people type at
 * the same moment: the deferrals travel over the bot's bounded pool of keep-alive connections for
 * them (not a new connection each), they leave from the gateway's thread even while the bot's
 * main thread is held, and each interaction's deferral is the first request the bot makes for
 * it, before any look-up of the guild and before the directory hears of the up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFERRAL_CONNECTIONS } from '../../src/gateway/acknowledge.js';
import { makeGuilds } from '../discord/index.js';
import { startCallbackRelay } from '../discord/relay.js';
import { itLeavesNoTrace } from './expectations.js';
import { type Harness, type Pending, startHarness } from './harness.js';

/** Without the pool's bound, about one connection per interaction. */
const BURST = 96;
const CALLBACK = /^\/interactions\/\d+\/[^/]+\/callback$/;
/** Time to answer them all: discord.js paces the guild look-ups and edits at 50 requests/s. */
const ANSWER_WITHIN_MS = 15_000;
/** How long the main thread is held while a burst arrives. */
const HELD_MS = 1_000;
/**
 * The burst sent while it is held: small enough that the stand-in's writes all fit in the socket's
 * buffer (a stand-in on this same thread cannot write the rest until it is let go).
 */
const HELD_BURST = 16;
const guilds = makeGuilds(BURST + 16 + 32);

let h: Harness;

beforeAll(async () => {
  // Look-ups get time enough never to be cut short: a request aborted in flight costs undici its
  // connection, which would blur the count of connections the deferrals took.
  h = await startHarness({ guilds, gatherTimeoutMs: ANSWER_WITHIN_MS });
});
afterAll(async () => {
  await h?.close();
});

/** One /up from each of `count` guilds, all dispatched at once. */
function burstOfUps(from: number, count: number): Pending[] {
  return guilds
    .slice(from, from + count)
    .map((guild) => h.send({ guildId: guild.id, name: 'up' }, ANSWER_WITHIN_MS));
}

/** Holds this thread (the bot's main thread) for `ms`, as a long synchronous task would. */
function holdMainThread(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy
  }
}

describe('a burst of /up', () => {
  it(`${BURST} interactions at once are deferred over at most ${DEFERRAL_CONNECTIONS} connections`, async () => {
    const burst = burstOfUps(0, BURST);
    const deferrals = await Promise.all(burst.map(({ handle }) => handle.firstResponse(ANSWER_WITHIN_MS)));
    expect(deferrals.map((d) => d.type)).toEqual(burst.map(() => 5));
    const callbacks = h.discord.requests.filter((r) => r.method === 'POST' && CALLBACK.test(r.path));
    expect(callbacks).toHaveLength(BURST);
    const connections = new Set(callbacks.map((r) => r.connection));
    console.log(`${BURST} deferrals at once: over ${connections.size} connections`);
    expect(connections.size).toBeGreaterThan(1);
    expect(connections.size).toBeLessThanOrEqual(DEFERRAL_CONNECTIONS);
    const answers = await Promise.all(burst.map(({ done }) => done));
    expect(answers.map((a) => a.outcome)).toEqual(burst.map(() => 'success'));
  }, 30_000);

  it("a burst's deferrals go out while the bot's main thread is held", async () => {
    const relay = await startCallbackRelay(h.discord.restUrl);
    try {
      await h.restartBot({ DISCORD_API_URL: relay.url });
      const burst = burstOfUps(BURST + 16, HELD_BURST);
      // Every dispatch is with the network already: none waits for this thread to be let go.
      expect(h.discord.gatewayBacklog()).toBe(0);
      holdMainThread(HELD_MS);
      const answers = await Promise.all(burst.map(({ done }) => done));
      expect(answers.map((a) => a.outcome)).toEqual(burst.map(() => 'success'));
      const seen = await relay.callbacks(burst.map(({ handle }) => handle.id));
      const late = burst.map(
        ({ handle }) =>
          (seen[handle.id] ?? Number.POSITIVE_INFINITY) - (performance.timeOrigin + handle.sentAt),
      );
      console.log(
        `deferrals through the relay, ms after dispatch: max ${Math.max(...late).toFixed(1)} (main thread held ${HELD_MS} ms)`,
      );
      // The gateway's thread read each packet and sent its deferral meanwhile.
      for (const ms of late) expect(ms).toBeLessThan(HELD_MS / 2);
    } finally {
      await h.restartBot();
      await relay.close();
    }
  }, 30_000);

  it('each deferral is the first request of its interaction: the look-ups and the up come after it', async () => {
    const burst = burstOfUps(BURST, 16);
    const answers = await Promise.all(burst.map(({ done }) => done));
    expect(answers.map((a) => a.outcome)).toEqual(burst.map(() => 'success'));
    for (const [i, answer] of answers.entries()) {
      const guildId = guilds[BURST + i]?.id ?? '';
      const [first, ...rest] = answer.requests;
      expect(first?.method).toBe('POST');
      expect(first?.path).toMatch(CALLBACK);
      const deferredAt = first?.at ?? Number.POSITIVE_INFINITY;
      for (const request of rest) expect(request.at).toBeGreaterThan(deferredAt);
      // The guild's own look-ups (what the gateway does not give of its statistics, mostly in the
      // background) only once the deferral was in.
      const lookUps = h.discord.requests.filter((r) => r.method === 'GET' && r.path === `/guilds/${guildId}`);
      for (const request of lookUps) expect(request.at).toBeGreaterThan(deferredAt);
      // And the directory (its clock is Date.now, the stand-in's performance.now).
      const ups = h.emu.requests.filter(
        (r) => r.method === 'POST' && r.path === '/v2/server' && r.body.includes(`"${guildId}"`),
      );
      expect(ups).toHaveLength(1);
      expect(ups[0]?.at ?? 0).toBeGreaterThanOrEqual(Math.floor(performance.timeOrigin + deferredAt));
      // With the guild's statistics, however busy Discord's queue: the gateway gave them.
      expect(JSON.parse(ups[0]?.body ?? '{}')).toMatchObject({ serverName: guilds[BURST + i]?.name });
    }
  }, 30_000);
});

itLeavesNoTrace(() => h);
