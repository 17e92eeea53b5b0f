/**
 * The deferral sent from the gateway packet (src/gateway/acknowledge.ts), over real sockets: against
 * the Discord stand-in for what it sends, and against a scripted server for what Discord may do
 * to it (429, refusal, a dropped connection, nobody there). Its errors never carry the token.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, Socket } from 'node:net';
import { InteractionResponseType } from 'discord.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  AcknowledgeError,
  DEFERRAL_CONNECTIONS,
  InteractionAcknowledger,
} from '../../src/gateway/acknowledge.js';
import type { Deferral } from '../../src/gateway/deferral-rules.js';
import { type DiscordStandIn, makeGuild, startDiscordStandIn } from '../discord/index.js';
import { closedPortUrl } from '../e2e/harness.js';

const USER_AGENT = 'DiscordBot (https://discord.js.org, test) Node.js/test';
const PUBLIC: Deferral = { type: InteractionResponseType.DeferredChannelMessageWithSource, ephemeral: false };
const PRIVATE: Deferral = { type: InteractionResponseType.DeferredChannelMessageWithSource, ephemeral: true };
const TOKEN = 'aW50ZXJhY3Rpb246MTIzNDU2Nzg5MDpzZWNyZXQtdG9rZW4tb2YtdGhlLWludGVyYWN0aW9u';

const acknowledgers: InteractionAcknowledger[] = [];
function acknowledgerFor(api: string): InteractionAcknowledger {
  const acknowledger = new InteractionAcknowledger({ api, version: '10', userAgent: USER_AGENT });
  acknowledgers.push(acknowledger);
  return acknowledger;
}
afterEach(async () => {
  await Promise.all(acknowledgers.splice(0).map((a) => a.close()));
});

describe('InteractionAcknowledger against the Discord stand-in', () => {
  const guild = makeGuild({ name: 'Acknowledged' });
  let discord: DiscordStandIn;
  beforeAll(async () => {
    discord = await startDiscordStandIn({ guilds: [guild] });
  });
  afterAll(async () => {
    await discord?.close();
  });

  it.each([
    ['a public deferral', PUBLIC, 0],
    ['a private deferral', PRIVATE, 64],
  ])(
    'sends %s as discord.js would, without the bot token, and hands it over once',
    async (_, deferral, flags) => {
      const handle = discord.sendCommand({ guildId: guild.id, name: 'up' });
      const acknowledger = acknowledgerFor(discord.restUrl);
      acknowledger.send(handle.id, handle.token, deferral);
      const sent = acknowledger.take(handle.id);
      expect(sent?.deferral).toEqual(deferral);
      await sent?.done;
      expect(acknowledger.take(handle.id)).toBeUndefined();

      const [callback, ...rest] = handle.requests();
      expect(rest).toEqual([]);
      expect(callback).toMatchObject({
        method: 'POST',
        path: `/interactions/${handle.id}/${handle.token}/callback`,
        status: 204,
        body: { type: 5, data: { flags } },
      });
      expect(callback?.headers.authorization).toBeUndefined();
      expect(callback?.headers['user-agent']).toBe(USER_AGENT);
      expect(handle.view().original).toBeDefined();
    },
  );

  it(`carries a burst over at most ${DEFERRAL_CONNECTIONS} connections, several callbacks on each`, async () => {
    const burst = discord.sendCommands(Array.from({ length: 40 }, () => ({ guildId: guild.id, name: 'up' })));
    const acknowledger = acknowledgerFor(discord.restUrl);
    for (const handle of burst) acknowledger.send(handle.id, handle.token, PUBLIC);
    await Promise.all(burst.map((handle) => acknowledger.take(handle.id)?.done));
    const callbacks = burst.map((handle) => handle.requests()[0]);
    expect(callbacks.map((c) => c?.status)).toEqual(burst.map(() => 204));
    const perConnection = new Map<number, number>();
    for (const c of callbacks)
      perConnection.set(c?.connection ?? 0, (perConnection.get(c?.connection ?? 0) ?? 0) + 1);
    expect(perConnection.size).toBeLessThanOrEqual(DEFERRAL_CONNECTIONS);
    expect(Math.max(...perConnection.values())).toBeGreaterThan(1);
  });

  it('knows nothing of an interaction it was not asked to acknowledge', () => {
    expect(acknowledgerFor(discord.restUrl).take('123456789012345678')).toBeUndefined();
  });
});

describe('InteractionAcknowledger when Discord does not simply accept', () => {
  type Script = (req: IncomingMessage, res: ServerResponse, attempt: number) => void;
  let server: Server;
  let api = '';
  let script: Script = (_, res) => res.writeHead(204).end();
  const seen: Array<{ at: number; path: string; body: string; port: number }> = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        seen.push({ at: performance.now(), path: req.url ?? '', body, port: req.socket.remotePort ?? 0 });
        script(req, res, seen.length);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
  });
  afterEach(() => {
    seen.length = 0;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

  async function failure(promise: Promise<void> | undefined): Promise<AcknowledgeError> {
    const err = await promise?.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(AcknowledgeError);
    const error = err as AcknowledgeError;
    expect(`${error.message} ${String(error.cause ?? '')}`).not.toContain(TOKEN);
    return error;
  }

  it('waits out a 429 (retry_after in the body) and sends the deferral again', async () => {
    script = (_, res, attempt) =>
      attempt === 1
        ? json(
            res,
            429,
            { message: 'You are being rate limited.', retry_after: 0.3, global: false },
            { 'retry-after': '1' },
          )
        : res.writeHead(204).end();
    const acknowledger = acknowledgerFor(api);
    acknowledger.send('111', TOKEN, { type: InteractionResponseType.DeferredMessageUpdate });
    await acknowledger.take('111')?.done;
    expect(seen.map((s) => s.path)).toEqual([
      `/api/v10/interactions/111/${TOKEN}/callback`,
      `/api/v10/interactions/111/${TOKEN}/callback`,
    ]);
    expect(JSON.parse(seen[1]?.body ?? '')).toEqual({ type: 6 });
    const waited = (seen[1]?.at ?? 0) - (seen[0]?.at ?? 0);
    expect(waited).toBeGreaterThanOrEqual(280);
    expect(waited).toBeLessThan(1_000);
  });

  it('gives up at once on a 429 whose wait outlasts the 3 s Discord allows', async () => {
    script = (_, res) =>
      json(res, 429, { message: 'You are being rate limited.', retry_after: 5, global: false });
    const acknowledger = acknowledgerFor(api);
    const started = performance.now();
    acknowledger.send('222', TOKEN, PUBLIC);
    const error = await failure(acknowledger.take('222')?.done);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(error.status).toBe(429);
    expect(seen).toHaveLength(1);
  });

  it("fails with Discord's status and code when the interaction is unknown, and does not try again", async () => {
    script = (_, res) => json(res, 404, { message: 'Unknown interaction', code: 10062 });
    const acknowledger = acknowledgerFor(api);
    acknowledger.send('333', TOKEN, PRIVATE);
    const error = await failure(acknowledger.take('333')?.done);
    expect(error).toMatchObject({ status: 404, code: 10062 });
    expect(error.message).toBe('Discord refused the deferral: 404 Unknown interaction (10062)');
    expect(seen).toHaveLength(1);
  });

  it('sends again over a new connection when one drops, and takes "already acknowledged" as done', async () => {
    // The first arrives and its connection drops before the answer: Discord did acknowledge it.
    script = (req, res, attempt) =>
      attempt === 1
        ? req.socket.destroy()
        : json(res, 400, { message: 'Interaction has already been acknowledged.', code: 40060 });
    const acknowledger = acknowledgerFor(api);
    acknowledger.send('444', TOKEN, PUBLIC);
    await acknowledger.take('444')?.done;
    expect(seen).toHaveLength(2);
  });

  it('takes "already acknowledged" on the first attempt as the failure it is', async () => {
    script = (_, res) =>
      json(res, 400, { message: 'Interaction has already been acknowledged.', code: 40060 });
    const acknowledger = acknowledgerFor(api);
    acknowledger.send('555', TOKEN, PUBLIC);
    expect(await failure(acknowledger.take('555')?.done)).toMatchObject({ status: 400, code: 40060 });
  });

  it('sends the next callbacks on a connection before the first is answered (pipelining)', async () => {
    script = (_, res) => {
      setTimeout(() => res.writeHead(204).end(), 150);
    };
    const acknowledger = acknowledgerFor(api);
    const ids = Array.from({ length: 3 * DEFERRAL_CONNECTIONS }, (_, i) => String(900 + i));
    for (const id of ids) acknowledger.send(id, TOKEN, PUBLIC);
    await Promise.all(ids.map((id) => acknowledger.take(id)?.done));
    expect(seen).toHaveLength(ids.length);
    expect(new Set(seen.map((s) => s.port)).size).toBeLessThanOrEqual(DEFERRAL_CONNECTIONS);
    // One at a time per connection, the last would have come 2 × 150 ms after the first.
    const first = Math.min(...seen.map((s) => s.at));
    expect(Math.max(...seen.map((s) => s.at)) - first).toBeLessThan(120);
  });

  it('writes the callbacks sent in one turn once per connection, not once each', async () => {
    script = (_, res) => res.writeHead(204).end();
    const acknowledger = acknowledgerFor(api);
    const warmUp = ['700', '701'];
    for (const id of warmUp) acknowledger.send(id, TOKEN, PUBLIC);
    await Promise.all(warmUp.map((id) => acknowledger.take(id)?.done));
    seen.length = 0;
    // Every write a socket to this server makes, from now until the burst has been answered.
    const port = Number(new URL(api).port);
    let writes = 0;
    const { _write, _writev } = Socket.prototype;
    const spies = [
      vi.spyOn(Socket.prototype, '_write').mockImplementation(function (this: Socket, ...args) {
        if (this.remotePort === port) writes += 1;
        return _write.apply(this, args);
      }),
      vi.spyOn(Socket.prototype, '_writev').mockImplementation(function (this: Socket, ...args) {
        if (this.remotePort === port) writes += 1;
        return _writev?.apply(this, args);
      }),
    ];
    try {
      const ids = Array.from({ length: 20 }, (_, i) => String(710 + i));
      for (const id of ids) acknowledger.send(id, TOKEN, PUBLIC);
      await Promise.all(ids.map((id) => acknowledger.take(id)?.done));
      expect(seen).toHaveLength(ids.length);
      // One write per connection that carried them (undici writes a callback's head and body
      // together; without holding, that is one write per callback).
      expect(writes).toBe(new Set(seen.map((s) => s.port)).size);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('is quiet once no deferral is on its way, or when the wait it was given is over', async () => {
    script = (_, res, attempt) => {
      setTimeout(() => res.writeHead(204).end(), attempt === 1 ? 300 : 0);
    };
    const acknowledger = acknowledgerFor(api);
    const started = performance.now();
    await acknowledger.quiet(1_000);
    expect(performance.now() - started).toBeLessThan(50);
    acknowledger.send('888', TOKEN, PUBLIC);
    const [short, long] = await Promise.all([
      acknowledger.quiet(100).then(() => performance.now() - started),
      acknowledger.quiet(2_000).then(() => performance.now() - started),
    ]);
    expect(short).toBeGreaterThanOrEqual(90);
    expect(short).toBeLessThan(280);
    expect(long).toBeGreaterThanOrEqual(280);
    expect(long).toBeLessThan(1_000);
    await acknowledger.take('888')?.done;
  });

  it('fails without a token in sight when nobody answers, and an untaken failure stays handled', async () => {
    const acknowledger = acknowledgerFor(await closedPortUrl());
    acknowledger.send('666', TOKEN, PUBLIC);
    acknowledger.send('777', TOKEN, PUBLIC);
    const error = await failure(acknowledger.take('666')?.done);
    expect(error.message).toBe('the deferral did not reach Discord');
    expect(error.status).toBeUndefined();
    // '777' is never taken: vitest fails the run on an unhandled rejection.
    await new Promise((resolve) => setTimeout(resolve, 50));
  });
});
