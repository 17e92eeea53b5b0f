/**
 * An interaction's answer never waits behind the bot's global limit. Discord does not count
 * interaction endpoints against it; @discordjs/rest counts every request but the first callback.
 * With 150 look-ups waiting in discord.js's global queue (three seconds of it at 50 a second), an
 * /up is answered as soon as the directory has spoken, and the look-ups still go at their pace.
 */
import { Routes } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInteractionAnswer } from '../../src/gateway/answers-rest.js';
import { makeGuild, snowflake } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { type Harness, startHarness } from './harness.js';

const QUEUED = 150;
const WEBHOOK = /^\/webhooks\/\d+\/[^/]+/;

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    guilds: [makeGuild({ id: IDS.serverFresh, name: 'Fresh' })],
    gatherTimeoutMs: 2_000,
  });
});
afterAll(async () => {
  await h?.close();
});

describe('interaction answers on a path of their own', () => {
  it(`an /up is answered at once while ${QUEUED} look-ups wait for the global limit`, async () => {
    const rest = h.bot.client.rest;
    // Each a route of its own (a channel that does not exist): all of them wait for global slots.
    const lookups = Array.from({ length: QUEUED }, () =>
      rest.get(Routes.channel(snowflake())).then(
        () => performance.now(),
        () => performance.now(),
      ),
    );
    const started = performance.now();
    const answer = await h.run(
      { guildId: h.discord.guilds.keys().next().value as string, name: 'up' },
      10_000,
    );
    // The answer: the original edited, or deleted and followed up (a public success after a deferral).
    const final = answer.requests.filter((r) => WEBHOOK.test(r.path)).at(-1);
    expect(final, JSON.stringify(answer.requests.map((r) => `${r.method} ${r.path}`))).toBeDefined();
    const answeredMs = Math.round((final?.at ?? 0) - started);
    const done = await Promise.all(lookups);
    const lookupsMs = Math.round(Math.max(...done) - started);
    console.log(`answered ${answeredMs} ms after the start; the ${QUEUED} look-ups took ${lookupsMs} ms`);
    expect(answer.outcome).toBe('success');
    // The look-ups went at discord.js's 50 a second (about 3 s); the answer did not wait for them.
    expect(lookupsMs).toBeGreaterThanOrEqual(2_000);
    expect(answeredMs).toBeLessThan(lookupsMs - 1_000);
  });

  it("takes only the bot's own application's webhooks without the token", () => {
    const app = '111111111111111111';
    expect(
      isInteractionAnswer({ auth: false, fullRoute: `/webhooks/${app}/tok/messages/@original` }, app),
    ).toBe(true);
    expect(isInteractionAnswer({ auth: false, fullRoute: `/webhooks/${app}/tok` }, app)).toBe(true);
    // A channel webhook of another application, a request with the token, before the id is known.
    expect(isInteractionAnswer({ auth: false, fullRoute: '/webhooks/222222222222222222/tok' }, app)).toBe(
      false,
    );
    expect(isInteractionAnswer({ auth: true, fullRoute: `/webhooks/${app}/tok` }, app)).toBe(false);
    expect(isInteractionAnswer({ auth: false, fullRoute: `/webhooks/${app}/tok` }, undefined)).toBe(false);
    expect(isInteractionAnswer({ fullRoute: `/channels/${app}/messages` }, app)).toBe(false);
  });
});
