import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import {
  NotificationsClient,
  type NotificationsClientOptions,
  type NotifyConnectionState,
} from '../../src/directory/v3/notifications.js';
import type { NotifyEvent } from '../../src/directory/v3/notify.js';
import { createLogger } from '../../src/log/logger.js';

const KEY = 'bc-key-7f3a9e1d2c4b5a6f8e9d0c1b2a3f4e5d';
const RESOURCE = '722424773233213460';
const USER = '511887819153866762';
const T0 = 1_700_000_000_000;

interface Connection {
  socket: WebSocket;
  at: number;
  received: unknown[];
}

interface FakeDirectory {
  url: string;
  server: WebSocketServer;
  connections: Connection[];
  close(): Promise<void>;
}

const servers: FakeDirectory[] = [];
const clients: NotificationsClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.stop()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
  vi.restoreAllMocks();
});

/** A fake directory on 127.0.0.1: `onConnection` plays the server's part for each connection. */
async function fakeDirectory(
  onConnection: (c: Connection, index: number) => void,
  options: ConstructorParameters<typeof WebSocketServer>[0] = {},
): Promise<FakeDirectory> {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', ...options });
  await once(server, 'listening');
  const connections: Connection[] = [];
  server.on('connection', (socket) => {
    const c: Connection = { socket, at: Date.now(), received: [] };
    connections.push(c);
    socket.on('error', () => {});
    socket.on('message', (data) => {
      try {
        c.received.push(JSON.parse(String(data)));
      } catch {
        c.received.push(String(data));
      }
    });
    onConnection(c, connections.length - 1);
  });
  const fake: FakeDirectory = {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/websocket/`,
    server,
    connections,
    close: async () => {
      for (const socket of server.clients) socket.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(fake);
  return fake;
}

/** The server's part of a healthy directory: hello after auth, pong after ping. */
function healthy(c: Connection, extra?: (c: Connection) => void): void {
  c.socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as { event: string };
    if (frame.event === 'auth') {
      c.socket.send(JSON.stringify({ event: 'hello', data: { id: 'conn-1' } }));
      extra?.(c);
    }
    if (frame.event === 'ping') c.socket.send(JSON.stringify({ event: 'pong', data: {} }));
  });
}

function notifyFrame(i: number): string {
  return JSON.stringify({
    event: 'notify',
    data: {
      type: 'up_added',
      payload: { upCount: (i % 1000) + 1 },
      affected: RESOURCE,
      user: USER,
      happened: T0 + i,
    },
  });
}

function recorder() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  // No `secrets`: the client itself must keep the key out, not the logger's scrubbing.
  return { lines, logger: createLogger({ level: 'trace', destination: stream }) };
}

function makeClient(
  url: string,
  overrides: Partial<NotificationsClientOptions> = {},
): {
  client: NotificationsClient;
  events: NotifyEvent[];
  states: NotifyConnectionState[];
  frames: string[];
  lines: string[];
} {
  const { lines, logger } = recorder();
  const events: NotifyEvent[] = [];
  const states: NotifyConnectionState[] = [];
  const frames: string[] = [];
  const client = new NotificationsClient({
    url,
    key: KEY,
    logger,
    onEvent: (e) => {
      events.push(e);
    },
    onState: (s) => states.push(s),
    onFrame: (k) => frames.push(k),
    now: () => Date.now(),
    ...overrides,
  });
  clients.push(client);
  return { client, events, states, frames, lines };
}

async function until(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await sleep(5);
  }
}

function expectNoKey(lines: string[], states: string[] = []): void {
  for (const line of [...lines, ...states]) expect(line).not.toContain(KEY);
}

describe('NotificationsClient against a fake directory', () => {
  it('authenticates with the key, is ready on hello and pings', async () => {
    const fake = await fakeDirectory((c) => healthy(c));
    const { client, states, frames, lines } = makeClient(fake.url, { pingEveryMs: 30 });
    expect(client.state).toBe('idle');
    client.start();
    await until(() => client.state === 'ready');
    const first = fake.connections[0]!;
    expect(first.received[0]).toEqual({ event: 'auth', data: { token: KEY } });
    await until(() => first.received.filter((f) => (f as { event?: string }).event === 'ping').length >= 3);
    const pings = first.received.filter((f) => (f as { event?: string }).event === 'ping');
    for (const ping of pings) expect(ping).toEqual({ event: 'ping', data: {} });
    expect(frames).toContain('hello');
    expect(frames).toContain('pong');
    expect(fake.connections).toHaveLength(1);
    expect(client.state).toBe('ready');
    expect(states.slice(0, 2)).toEqual(['connecting', 'ready']);
    await client.stop();
    expect(client.state).toBe('stopped');
    expectNoKey(lines, states);
  });

  it('reconnects when no pong comes', async () => {
    const fake = await fakeDirectory((c) =>
      c.socket.on('message', (data) => {
        if ((JSON.parse(String(data)) as { event: string }).event === 'auth')
          c.socket.send(JSON.stringify({ event: 'hello', data: { id: 'x' } }));
      }),
    );
    const { client, states, lines } = makeClient(fake.url, {
      pingEveryMs: 20,
      pongTimeoutMs: 40,
      backoff: { floorMs: 10, maxMs: 20 },
    });
    client.start();
    await until(() => fake.connections.length >= 2);
    expect(states).toContain('backoff');
    await client.stop();
    expectNoKey(lines, states);
  });

  it('reconnects when no hello comes', async () => {
    const fake = await fakeDirectory(() => {});
    const { client, lines } = makeClient(fake.url, {
      helloTimeoutMs: 40,
      backoff: { floorMs: 10, maxMs: 20 },
    });
    client.start();
    await until(() => fake.connections.length >= 2);
    await client.stop();
    expectNoKey(lines);
  });

  it('a server closing at once every time: never a tight loop, and one warning about the key', async () => {
    const fake = await fakeDirectory((c) => c.socket.close(1011));
    const attempts: number[] = [];
    const { client, lines, states } = makeClient(fake.url, {
      backoff: { floorMs: 20, maxMs: 40 },
      attemptsPer10s: 5,
      onState: (s) => {
        states.push(s);
        if (s === 'connecting') attempts.push(Date.now());
      },
    });
    client.start();
    await sleep(1_000);
    await client.stop();
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.length).toBeLessThanOrEqual(5);
    expect(fake.connections.length).toBeLessThanOrEqual(5);
    for (let i = 1; i < attempts.length; i++) {
      expect(attempts[i]! - attempts[i - 1]!).toBeGreaterThanOrEqual(18);
    }
    const warnings = lines.filter((l) => l.includes('revoked or wrong'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!).level).toBe(40);
    expectNoKey(lines, states);
  });

  it('backs off exponentially between floor and max, and back to the floor after a stable minute', async () => {
    let offset = 0;
    const fake = await fakeDirectory((c, index) =>
      healthy(c, () => {
        if (index < 4) setTimeout(() => c.socket.close(1001), 5);
      }),
    );
    const marks: { state: NotifyConnectionState; at: number }[] = [];
    const { client, lines } = makeClient(fake.url, {
      backoff: { floorMs: 10, maxMs: 400 },
      attemptsPer10s: 15,
      random: () => 1,
      now: () => Date.now() + offset,
      onState: (state) => marks.push({ state, at: Date.now() }),
    });
    client.start();
    await until(() => fake.connections.length === 5 && client.state === 'ready');
    offset += 61_000;
    fake.connections[4]!.socket.close(1001);
    await until(() => fake.connections.length === 6 && client.state === 'ready');
    const gaps: number[] = [];
    for (let i = 1; i < marks.length; i++) {
      if (marks[i]!.state === 'connecting' && marks[i - 1]!.state === 'backoff') {
        gaps.push(marks[i]!.at - marks[i - 1]!.at);
      }
    }
    expect(gaps).toHaveLength(5);
    [10, 20, 40, 80].forEach((step, i) => {
      expect(gaps[i]).toBeGreaterThanOrEqual(step - 2);
    });
    // Without the reset the fifth step would be 160 ms.
    expect(gaps[4]).toBeLessThan(100);
    // These connections all reached hello: the key is not suspected.
    expect(lines.some((l) => l.includes('revoked or wrong'))).toBe(false);
    await client.stop();
  });

  it('a server refusing with 429, or sending garbage and dropping: bounded attempts too', async () => {
    const refusing = await fakeDirectory(() => {}, {
      verifyClient: (_info: unknown, cb: (ok: boolean, code?: number) => void) => cb(false, 429),
    } as ConstructorParameters<typeof WebSocketServer>[0]);
    const garbage = await fakeDirectory((c) => {
      c.socket.send('{"event":');
      c.socket.send(Buffer.from([0xff, 0x00, 0x13]));
      c.socket.terminate();
    });
    const a = makeClient(refusing.url, { backoff: { floorMs: 20, maxMs: 40 }, attemptsPer10s: 4 });
    const b = makeClient(garbage.url, { backoff: { floorMs: 20, maxMs: 40 }, attemptsPer10s: 4 });
    a.client.start();
    b.client.start();
    await sleep(600);
    await Promise.all([a.client.stop(), b.client.stop()]);
    const refusals = a.states.filter((s) => s === 'connecting').length;
    expect(refusals).toBeGreaterThanOrEqual(2);
    expect(refusals).toBeLessThanOrEqual(4);
    expect(garbage.connections.length).toBeGreaterThanOrEqual(2);
    expect(garbage.connections.length).toBeLessThanOrEqual(4);
    expect(b.events).toHaveLength(0);
    expectNoKey([...a.lines, ...b.lines]);
  });

  it('a frame over maxFrameBytes: the client closes, reconnects and goes on', async () => {
    const fake = await fakeDirectory((c, index) =>
      healthy(c, () => {
        if (index === 0) c.socket.send(JSON.stringify({ event: 'notify', data: { pad: 'x'.repeat(4096) } }));
        else c.socket.send(notifyFrame(1));
      }),
    );
    const { client, events, lines } = makeClient(fake.url, {
      maxFrameBytes: 1024,
      backoff: { floorMs: 10, maxMs: 20 },
    });
    client.start();
    await until(() => events.length === 1);
    expect(fake.connections.length).toBe(2);
    expect(events[0]!.happened).toBe(T0 + 1);
    await client.stop();
    expectNoKey(lines);
  });

  it('hands events over in order, once per frame; invalid and unknown frames are dropped and counted', async () => {
    const fake = await fakeDirectory((c) =>
      healthy(c, () => {
        for (let i = 0; i < 30; i++) {
          c.socket.send(notifyFrame(i));
          if (i % 10 === 0) c.socket.send('not json');
          if (i % 10 === 5) c.socket.send('{"event":"future_event","data":{}}');
        }
        c.socket.send(JSON.stringify({ event: 'error', data: { code: 14, message: `TokenInvalid ${KEY}` } }));
      }),
    );
    const { client, events, frames, lines } = makeClient(fake.url);
    client.start();
    await until(() => events.length === 30 && frames.includes('error'));
    expect(events.map((e) => e.happened)).toEqual(Array.from({ length: 30 }, (_, i) => T0 + i));
    expect(frames.filter((k) => k === 'invalid')).toHaveLength(3);
    expect(frames.filter((k) => k === 'ignored')).toHaveLength(3);
    expect(lines.filter((l) => l.includes('frames dropped'))).toHaveLength(1);
    const errorLine = lines.find((l) => l.includes('sent an error'));
    expect(errorLine).toBeDefined();
    expect(JSON.parse(errorLine!).code).toBe(14);
    await sleep(50);
    expect(events).toHaveLength(30);
    await client.stop();
    expectNoKey(lines);
  });

  it('a slow onEvent with maxQueued 5 and 100 frames: the socket is paused, all 100 arrive in order', async () => {
    const pause = vi.spyOn(WebSocket.prototype, 'pause');
    const resume = vi.spyOn(WebSocket.prototype, 'resume');
    const fake = await fakeDirectory((c) =>
      healthy(c, async () => {
        // Sent in bursts, so some arrive while the client is paused.
        for (let i = 0; i < 100; i++) {
          c.socket.send(notifyFrame(i));
          if (i % 10 === 9) await sleep(5);
        }
      }),
    );
    const events: NotifyEvent[] = [];
    let inHand = 0;
    let overlap = false;
    const { client, lines } = makeClient(fake.url, {
      maxQueued: 5,
      onEvent: async (e) => {
        inHand++;
        if (inHand > 1) overlap = true;
        await sleep(1);
        events.push(e);
        inHand--;
      },
    });
    client.start();
    await until(() => events.length === 100, 5_000);
    expect(events.map((e) => e.happened)).toEqual(Array.from({ length: 100 }, (_, i) => T0 + i));
    expect(overlap).toBe(false);
    expect(pause).toHaveBeenCalled();
    expect(resume).toHaveBeenCalled();
    expect(fake.connections).toHaveLength(1);
    await client.stop();
    expectNoKey(lines);
  });

  it('an onEvent that throws is logged and the next event still arrives', async () => {
    const fake = await fakeDirectory((c) =>
      healthy(c, () => {
        c.socket.send(notifyFrame(0));
        c.socket.send(notifyFrame(1));
        c.socket.send(notifyFrame(2));
      }),
    );
    const seen: number[] = [];
    const { client, lines } = makeClient(fake.url, {
      onEvent: (e) => {
        seen.push(e.happened);
        if (e.happened === T0) throw new Error(`store down (key ${KEY})`);
        if (e.happened === T0 + 1) return Promise.reject(new Error('async failure'));
      },
    });
    client.start();
    await until(() => seen.length === 3);
    await sleep(20);
    expect(lines.filter((l) => l.includes('onEvent threw'))).toHaveLength(1);
    await client.stop();
    expectNoKey(lines);
  });

  it('stop() waits for the event in hand, ends everything and never reconnects', async () => {
    const fake = await fakeDirectory((c) => healthy(c, () => c.socket.send(notifyFrame(0))));
    const timersBefore = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    let finished = false;
    let started = false;
    const { client, states, lines } = makeClient(fake.url, {
      pingEveryMs: 1_000,
      onEvent: async () => {
        started = true;
        await sleep(100);
        finished = true;
      },
    });
    client.start();
    await until(() => started);
    await client.stop();
    expect(finished).toBe(true);
    expect(client.state).toBe('stopped');
    expect(states.at(-1)).toBe('stopped');
    await client.stop();
    client.start();
    expect(client.state).toBe('stopped');
    await sleep(50);
    expect(fake.connections).toHaveLength(1);
    await until(() => fake.server.clients.size === 0);
    const timersAfter = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    expect(timersAfter).toBeLessThanOrEqual(timersBefore);
    expectNoKey(lines, states);
  });

  it('stop() while connecting or in backoff ends cleanly', async () => {
    const fake = await fakeDirectory((c) => c.socket.close(1011));
    const a = makeClient(fake.url, { backoff: { floorMs: 5_000, maxMs: 5_000 } });
    a.client.start();
    await until(() => a.client.state === 'backoff');
    await a.client.stop();
    // Nothing listens here: the connection is refused, or still connecting when stopped.
    const b = makeClient('ws://127.0.0.1:9/websocket/');
    b.client.start();
    await b.client.stop();
    const c = makeClient('not a url');
    c.client.start();
    expect(c.client.state).toBe('backoff');
    await c.client.stop();
    expect([a.client.state, b.client.state, c.client.state]).toEqual(['stopped', 'stopped', 'stopped']);
    expectNoKey([...a.lines, ...b.lines, ...c.lines]);
  });
});
