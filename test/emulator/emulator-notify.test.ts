import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LOCALHOST } from '../support/local.js';
import { type Emulator, startEmulator } from './server.js';
import { IDS, V3_KEYS } from './state.js';
import { UP_LIFETIME_MS } from './v3/notifications.js';

const T0 = 1_700_000_000_000;
let clock = T0;
let emu: Emulator;
const clients: Client[] = [];

beforeAll(async () => {
  emu = await startEmulator({ rateLimits: false, now: () => clock });
});
afterAll(async () => {
  await emu.close();
});
beforeEach(() => {
  clock = T0;
  emu.reset();
});
afterEach(() => {
  for (const c of clients.splice(0)) c.ws.terminate();
});

class HttpStatus extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}

interface Client {
  ws: WebSocket;
  /** Every text frame received, as received. */
  frames: string[];
  /** The next frame not yet taken by next(). */
  next(ms?: number): Promise<string>;
  /** The close code the client saw. */
  closed: Promise<number>;
  send(value: unknown): void;
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

function connect(url = emu.v3.notifyUrl): Promise<Client> {
  const ws = new WebSocket(url);
  const frames: string[] = [];
  const waiting: ((frame: string) => void)[] = [];
  let taken = 0;
  ws.on('message', (data) => {
    const text = Buffer.isBuffer(data) ? data.toString('utf8') : String(data);
    frames.push(text);
    const w = waiting.shift();
    if (w !== undefined) {
      taken += 1;
      w(text);
    }
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  const client: Client = {
    ws,
    frames,
    closed,
    send: (value) => ws.send(typeof value === 'string' ? value : JSON.stringify(value)),
    next: (ms = 1000) => {
      const ready = frames[taken];
      if (ready !== undefined) {
        taken += 1;
        return Promise.resolve(ready);
      }
      return within(new Promise<string>((resolve) => waiting.push(resolve)), ms, 'a frame');
    },
  };
  clients.push(client);
  return new Promise<Client>((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (req, res) => {
      res.resume();
      req.destroy();
      reject(new HttpStatus(res.statusCode ?? 0));
    });
    ws.once('error', reject);
  });
}

async function authed(key: string): Promise<{ client: Client; id: string }> {
  const client = await connect();
  client.send({ event: 'auth', data: { token: key } });
  const hello = JSON.parse(await client.next()) as { event: string; data: { id: string } };
  expect(hello.event).toBe('hello');
  return { client, id: hello.data.id };
}

/** Ping and wait for the pong: every frame sent to this socket before it has arrived by then. */
async function sync(client: Client): Promise<string[]> {
  const before = client.frames.length;
  client.send({ event: 'ping', data: {} });
  for (;;) {
    const frame = await client.next();
    if (frame === '{"event":"pong","data":{}}') return client.frames.slice(before, -1);
  }
}

describe('v3 notification gateway', () => {
  it('answers auth with a known key with hello and a connection id', async () => {
    expect(emu.v3.notifyUrl).toBe(`ws://${LOCALHOST}:${emu.port}/websocket/`);
    const { client, id } = await authed(V3_KEYS.staff);
    expect(id).toMatch(/\S/);
    const open = emu.v3.sockets();
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({ id, key: V3_KEYS.staff, authed: true, remote: LOCALHOST, openedAt: T0 });
    expect(client.frames).toEqual([JSON.stringify({ event: 'hello', data: { id } })]);
  });

  it('accepts the path without the trailing slash too', async () => {
    await connect(emu.v3.notifyUrl.replace(/\/$/, ''));
    await expect(connect(`ws://${LOCALHOST}:${emu.port}/gateway`)).rejects.toMatchObject({ status: 404 });
  });

  it('answers a wrong or missing key with an error frame, then drops the socket (1006)', async () => {
    for (const auth of [{ event: 'auth', data: { token: 'nope' } }, { event: 'auth' }]) {
      const client = await connect();
      client.send(auth);
      expect(JSON.parse(await client.next())).toEqual({
        event: 'error',
        data: { code: 4, message: 'Unauthorized' },
      });
      expect(await within(client.closed, 1000, 'close')).toBe(1006);
    }
  });

  it('drops a socket that does not authenticate in time', async () => {
    emu.v3.setAuthTimeout(50);
    const client = await connect();
    expect(await within(client.closed, 1000, 'close')).toBe(1006);
    expect(client.frames).toEqual([]);
  });

  it('answers ping with pong, with or without data', async () => {
    const { client } = await authed(V3_KEYS.staff);
    clock = T0 + 5;
    client.send({ event: 'ping', data: {} });
    expect(await client.next()).toBe('{"event":"pong","data":{}}');
    client.send({ event: 'ping' });
    expect(await client.next()).toBe('{"event":"pong","data":{}}');
    expect(emu.v3.sockets()[0]?.lastPingAt).toBe(T0 + 5);
  });

  it('closes a socket that has not pinged within the ping timeout; one that pings stays', async () => {
    const quiet = await authed(V3_KEYS.staff);
    const chatty = await authed(V3_KEYS.owner);
    emu.v3.setPingTimeout(150);
    const pinger = setInterval(() => chatty.client.send({ event: 'ping' }), 40);
    try {
      expect(await within(quiet.client.closed, 1000, 'close')).toBe(1006);
      expect(chatty.client.ws.readyState).toBe(WebSocket.OPEN);
    } finally {
      clearInterval(pinger);
    }
  });

  it("sends an up on the site to the owner's sockets only, and GET /v3/servers/:id shows it", async () => {
    const read = async () => {
      const res = await fetch(`${emu.v3.url}/servers/${IDS.serverFresh}`);
      return ((await res.json()) as { result: { upCount: number; ups: { id: string; expires: unknown }[] } })
        .result;
    };
    const before = await read();
    const staff = await authed(V3_KEYS.staff);
    const other = await authed(V3_KEYS.owner);
    const at = T0 - 1000;
    const frame = emu.v3.upOnSite(IDS.serverFresh, IDS.prolificUser, { at });
    const expected = {
      type: 'up_added',
      payload: { upCount: 1 },
      affected: IDS.serverFresh,
      user: IDS.prolificUser,
    };
    expect(frame).toEqual({ ...expected, happened: at });
    expect(JSON.parse(await staff.client.next())).toEqual({
      event: 'notify',
      data: { ...expected, happened: at },
    });
    expect(await sync(other.client)).toEqual([]);
    expect(emu.v3.notifications).toEqual([frame]);

    const after = await read();
    expect(after.upCount).toBe(before.upCount + 1);
    expect(after.ups).toHaveLength(before.ups.length + 1);
    expect(Number(after.ups.at(-1)?.expires)).toBe(at + UP_LIFETIME_MS);
  });

  it("keeps a bot's ups consistent in GET /v3/bots/:id and the owner's GET /v3/users/:id", async () => {
    type Ups = { id: string; upCount: number; ups: unknown[] };
    const bot = async () =>
      ((await (await fetch(`${emu.v3.url}/bots/${IDS.plainBot}`)).json()) as { result: Ups }).result;
    const inProfile = async () =>
      (
        (await (await fetch(`${emu.v3.url}/users/${IDS.plainBotOwner}`)).json()) as {
          result: { bots: Ups[] };
        }
      ).result.bots.find((b) => b.id === IDS.plainBot);
    const before = await bot();
    emu.v3.upOnSite(IDS.plainBot, IDS.prolificUser);
    emu.v3.upOnSite(IDS.plainBot, IDS.prolificUser, { upCount: 2 });
    const after = await bot();
    expect(after.upCount).toBe(before.upCount + 3);
    expect(after.ups).toHaveLength(before.ups.length + 2);
    expect(await inProfile()).toMatchObject({ upCount: after.upCount, ups: after.ups });
    emu.reset();
    expect(await bot()).toMatchObject({ upCount: before.upCount, ups: before.ups });
  });

  it("sends a bot's review events to its developers' sockets", async () => {
    const kerdoku = await authed(V3_KEYS.kerdoku);
    const staff = await authed(V3_KEYS.staff);
    emu.v3.comment('comment_edited', IDS.plainBot, IDS.prolificUser, { content: 'ok', rating: 3 });
    expect(JSON.parse(await kerdoku.client.next())).toEqual({
      event: 'notify',
      data: {
        type: 'comment_edited',
        payload: { content: 'ok', rating: 3 },
        affected: IDS.plainBot,
        user: IDS.prolificUser,
        happened: T0,
      },
    });
    expect(await sync(staff.client)).toEqual([]);
  });

  it('replays the last frame byte for byte', async () => {
    const { client } = await authed(V3_KEYS.staff);
    emu.v3.notify({ type: 'comment_added', affected: IDS.serverFresh, user: IDS.prolificUser });
    const first = await client.next();
    expect(JSON.parse(first)).toMatchObject({ data: { payload: null } });
    emu.v3.replay();
    expect(await client.next()).toBe(first);
    expect(emu.v3.notifications).toHaveLength(1);
  });

  it('writes raw frames and drops sockets on demand', async () => {
    const { client } = await authed(V3_KEYS.staff);
    expect(emu.v3.sendRaw('{"event":"notify","data":', V3_KEYS.owner)).toBe(0);
    expect(emu.v3.sendRaw('{"event":"notify","data":')).toBe(1);
    expect(await client.next()).toBe('{"event":"notify","data":');
    emu.v3.dropSockets('close');
    expect(await within(client.closed, 1000, 'close')).toBe(1001);
  });

  it('refuses the 16th connection attempt within 10 s with HTTP 429', async () => {
    for (let n = 0; n < 15; n += 1) await connect();
    await expect(connect()).rejects.toMatchObject({ status: 429 });
    expect(emu.v3.connectionAttempts).toBe(16);
    clock = T0 + 10_001;
    await connect();
  });

  it('terminates the sockets of a revoked key, and the key stops working on REST', async () => {
    const { client } = await authed(V3_KEYS.staff);
    const other = await authed(V3_KEYS.owner);
    emu.v3.revokeKey(V3_KEYS.staff);
    expect(await within(client.closed, 1000, 'close')).toBe(1006);
    expect(other.client.ws.readyState).toBe(WebSocket.OPEN);
    const search = () => fetch(`${emu.v3.url}/search-key`, { headers: { authorization: V3_KEYS.staff } });
    expect((await search()).status).toBe(401);
    emu.v3.restoreKey(V3_KEYS.staff);
    expect((await search()).status).toBe(200);
  });

  it('reset() clears events, webhooks and the ping timeout', async () => {
    emu.v3.setWebhook(IDS.serverFresh, { url: 'http://127.0.0.1:9/' });
    emu.v3.notify({ type: 'x', affected: IDS.serverFresh, user: IDS.prolificUser });
    await emu.v3.hooksSettled();
    expect(emu.v3.hookDeliveries).toEqual([{ affected: IDS.serverFresh, type: 'x', status: 0, at: T0 }]);
    emu.v3.setPingTimeout(10);
    emu.reset();
    expect(emu.v3.notifications).toEqual([]);
    expect(emu.v3.hookDeliveries).toEqual([]);
    const { client } = await authed(V3_KEYS.staff);
    await sync(client);
    expect(client.ws.readyState).toBe(WebSocket.OPEN);
  });
});

describe('v3 webhooks', () => {
  let receiver: Server;
  let received: { headers: IncomingMessage['headers']; body: string }[];
  let answer = 200;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, LOCALHOST, resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });
  beforeEach(() => {
    received = [];
    answer = 200;
  });

  function receiverUrl(): string {
    const address = receiver.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    return `http://${LOCALHOST}:${address.port}/boticord`;
  }

  it('POSTs each event once with the documented headers and body, and does not retry a 500', async () => {
    answer = 500;
    const url = receiverUrl();
    emu.v3.setWebhook(IDS.serverFresh, { url, headers: { 'x-custom': 'abc' } });
    const { client } = await authed(V3_KEYS.staff);
    emu.v3.upOnSite(IDS.serverFresh, IDS.prolificUser, { upCount: 2 });
    await emu.v3.hooksSettled();
    await client.next(); // the socket hears it too
    expect(received).toHaveLength(1);
    const [hit] = received;
    expect(hit?.headers).toMatchObject({
      'content-type': 'application/json',
      'x-boticord-token': V3_KEYS.staff,
      'x-boticord-affected': IDS.serverFresh,
      'x-custom': 'abc',
    });
    expect(JSON.parse(hit?.body ?? '')).toEqual({
      type: 'up_added',
      payload: { upCount: 2 },
      id: IDS.serverFresh,
      user: IDS.prolificUser,
      happened: T0,
      webhookSettings: { enabled: true, headers: { 'x-custom': 'abc' }, url, token: V3_KEYS.staff },
    });
    expect(emu.v3.hookDeliveries).toEqual([
      { affected: IDS.serverFresh, type: 'up_added', status: 500, at: T0 },
    ]);
    // Only the resource with a webhook gets posts.
    emu.v3.notify({ type: 'up_added', affected: IDS.serverCooldown, user: IDS.prolificUser });
    await emu.v3.hooksSettled();
    expect(received).toHaveLength(1);
  });

  it('sends a placeholder token when the owner has no key', async () => {
    emu.v3.setWebhook(IDS.serverFresh, { url: receiverUrl() });
    emu.v3.revokeKey(V3_KEYS.staff);
    emu.v3.notify({ type: 'none', affected: IDS.serverFresh, user: IDS.prolificUser });
    await emu.v3.hooksSettled();
    expect(received[0]?.headers['x-boticord-token']).not.toBe(V3_KEYS.staff);
    expect(JSON.parse(received[0]?.body ?? '')).toMatchObject({ webhookSettings: { headers: {} } });
  });
});
