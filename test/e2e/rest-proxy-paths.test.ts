/**
 * With DISCORD_REST_PROXY_URL the real bot sends its bot-token requests through the REST proxy
 * (src/gateway/rest-proxy.ts, in this process), and its interactions' own requests straight to
 * Discord: the deferral (acknowledge.ts), the answers (answers-rest.ts) and a first response
 * discord.js sends itself. What the proxy forwarded is read from its REST's `response` events.
 */
import { RESTEvents, Routes } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isInteractionAnswer } from '../../src/gateway/answers-rest.js';
import { type RestProxy, startRestProxy } from '../../src/gateway/rest-proxy.js';
import { createLogger } from '../../src/log/logger.js';
import { makeGuild, snowflake } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { LOCALHOST } from '../support/local.js';
import { type Harness, startHarness } from './harness.js';

const INTERACTION_PATH = /^\/(?:interactions|webhooks)\//;

let h: Harness;
let proxy: RestProxy;
/** Paths the proxy sent upstream, as @discordjs/rest names them (below /api/v10). */
const forwarded: string[] = [];

beforeAll(async () => {
  h = await startHarness({ guilds: [makeGuild({ id: IDS.serverFresh, name: 'Fresh' })] });
  proxy = await startRestProxy({
    upstream: h.discord.restUrl,
    port: 0,
    host: LOCALHOST,
    logger: createLogger({ level: 'silent' }),
  });
  proxy.rest.on(RESTEvents.Response, (request) => forwarded.push(String(request.path)));
  // The proxy's address without /api: the bot adds it.
  await h.restartBot({ DISCORD_REST_PROXY_URL: `http://${LOCALHOST}:${proxy.port}` });
});
afterAll(async () => {
  await h?.close();
  await proxy?.close();
});

describe('the REST proxy and the direct path', () => {
  it('the bot-token requests go through the proxy: GET /gateway/bot at login, a look-up', async () => {
    expect(h.bot.client.rest.options.api).toBe(`http://${LOCALHOST}:${proxy.port}/api`);
    expect(forwarded).toContain('/gateway/bot');
    const channelId = snowflake();
    await h.bot.client.rest.get(Routes.channel(channelId)).catch(() => undefined);
    expect(forwarded).toContain(`/channels/${channelId}`);
  });

  it("an /up's deferral and answers go straight to Discord, none through the proxy", async () => {
    const before = forwarded.length;
    const answer = await h.run({ guildId: IDS.serverFresh, name: 'up' }, 10_000);
    expect(answer.outcome).toBe('success');
    const own = answer.requests.map((r) => `${r.method} ${r.path}`);
    // The deferral, then the answer on the interaction's webhook, all at the stand-in...
    expect(
      own.some((r) => /^POST \/interactions\/\d+\/[^/]+\/callback$/.test(r)),
      own.join('\n'),
    ).toBe(true);
    expect(
      own.some((r) => / \/webhooks\//.test(r)),
      own.join('\n'),
    ).toBe(true);
    // ...and none of them through the proxy.
    expect(forwarded.slice(before).filter((path) => INTERACTION_PATH.test(path))).toEqual([]);
    expect(forwarded.filter((path) => INTERACTION_PATH.test(path))).toEqual([]);
  });

  it('a first response discord.js sends itself takes the direct REST too', () => {
    const app = '111111111111111111';
    const callback = { auth: false, fullRoute: `/interactions/${app}/tok/callback` as const };
    expect(isInteractionAnswer(callback, app)).toBe(true);
    expect(isInteractionAnswer(callback, undefined)).toBe(true);
    expect(isInteractionAnswer({ ...callback, auth: true }, app)).toBe(false);
    expect(isInteractionAnswer({ auth: false, fullRoute: `/interactions/${app}/tok` }, app)).toBe(false);
  });
});
