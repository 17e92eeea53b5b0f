/**
 * The REST agent against the Discord stand-in over real sockets: a request whose signal fired
 * before it was dispatched fails at once, with the signal's reason, and costs no connection.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDiscordRestAgent } from '../../src/gateway/rest-agent.js';
import { type DiscordStandIn, startDiscordStandIn } from '../discord/index.js';

let discord: DiscordStandIn;

beforeAll(async () => {
  discord = await startDiscordStandIn();
});
afterAll(async () => {
  await discord?.close();
});

describe('createDiscordRestAgent', () => {
  it('fails a request aborted before it is dispatched without taking, or losing, a connection', async () => {
    const agent = createDiscordRestAgent();
    const url = `${discord.restUrl}/v10/gateway`;
    // Connections undici opens to the stand-in, whether or not a request is ever written on them.
    let connects = 0;
    const onConnected = (message: unknown): void => {
      const params = (message as { connectParams?: { port?: string | number } }).connectParams;
      if (String(params?.port) === new URL(url).port) connects++;
    };
    diagnosticsChannel.subscribe('undici:client:connected', onConnected);
    try {
      const first = await request(url, { dispatcher: agent });
      expect(first.statusCode).toBe(200);
      await first.body.dump();
      // undici frees a connection a turn after its response: from here on it is idle.
      await nextTurn();

      const reason = new Error('the caller gave up');
      await expect(request(url, { dispatcher: agent, signal: AbortSignal.abort(reason) })).rejects.toBe(
        reason,
      );
      await nextTurn();

      const second = await request(url, { dispatcher: agent });
      expect(second.statusCode).toBe(200);
      await second.body.dump();
      // undici alone hands the aborted request the idle connection and destroys it: two connects.
      expect(connects).toBe(1);
      expect(discord.restConnections()).toBe(1);
      expect(discord.requests.filter((r) => r.path === '/gateway')).toHaveLength(2);
    } finally {
      diagnosticsChannel.unsubscribe('undici:client:connected', onConnected);
      await agent.close();
    }
  });
});
