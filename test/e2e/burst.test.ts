/**
 * A burst of /up interactions dispatched all at once, as Discord does when many people type at
 * the same moment: the deferrals travel over the bot's bounded pool of keep-alive connections for
 * them (not a new connection each), all of them leave before discord.js has built any of the
 * burst's interactions, and each interaction's deferral is the first request the bot makes for
 * it, before any look-up of the guild and before the directory hears of the up.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Events } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFERRAL_CONNECTIONS } from '../../src/discord/acknowledge.js';
import { makeGuilds } from '../discord/index.js';
import { itLeavesNoTrace } from './expectations.js';
import { type Harness, type Pending, startHarness } from './harness.js';

/** Without the pool's bound, about one connection per interaction. */
const BURST = 96;
const CALLBACK = /^\/interactions\/\d+\/[^/]+\/callback$/;
/** Time to answer them all: discord.js paces the guild look-ups and edits at 50 requests/s. */
const ANSWER_WITHIN_MS = 15_000;
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

/** The order, in this process, of the deferrals' writes and of discord.js's interactionCreate events. */
function watchOrder(): { order: string[]; stop(): void } {
  const order: string[] = [];
  const onHeaders = (message: unknown): void => {
    const path = (message as { request?: { path?: string } }).request?.path ?? '';
    const id = /\/interactions\/(\d+)\/[^/]+\/callback$/.exec(path)?.[1];
    if (id) order.push(`deferral ${id}`);
  };
  const onInteraction = (interaction: { id: string }): void => {
    order.push(`built ${interaction.id}`);
  };
  subscribe('undici:client:sendHeaders', onHeaders);
  h.bot.client.on(Events.InteractionCreate, onInteraction);
  return {
    order,
    stop() {
      unsubscribe('undici:client:sendHeaders', onHeaders);
      h.bot.client.off(Events.InteractionCreate, onInteraction);
    },
  };
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

  it("every deferral of a burst leaves before discord.js builds any of the burst's interactions", async () => {
    const watch = watchOrder();
    try {
      const burst = burstOfUps(BURST + 16, 32);
      const answers = await Promise.all(burst.map(({ done }) => done));
      expect(answers.map((a) => a.outcome)).toEqual(burst.map(() => 'success'));
      const ids = new Set(burst.map(({ handle }) => handle.id));
      const ours = watch.order.filter((line) => ids.has(line.split(' ')[1] ?? ''));
      expect(ours).toHaveLength(64);
      const firstBuilt = ours.findIndex((line) => line.startsWith('built'));
      expect(ours.slice(0, firstBuilt).every((line) => line.startsWith('deferral'))).toBe(true);
      expect(firstBuilt).toBe(32);
    } finally {
      watch.stop();
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
