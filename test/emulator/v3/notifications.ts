/**
 * The directory's v3 notifications (docs/directory-v3-sources.md §4): the WebSocket gateway
 * (`wss://gateway.boticord.top/websocket/`, here `ws://127.0.0.1:PORT/websocket/` on the emulator's
 * own HTTP server) and, through hooks.ts, the HTTPS webhooks. What the docs leave open is decided
 * here and said where it is decided; docs/emulator.md sums it up.
 *
 * Protocol: the client sends `{"event":"auth","data":{"token":KEY}}`, a known API key gets
 * `{"event":"hello","data":{"id":"<connection id>"}}`; then `{"event":"ping"}` (with or without
 * `data`) gets `{"event":"pong","data":{}}`, and every event about a resource the key's account owns
 * arrives as `{"event":"notify","data":{type,payload,affected,user,happened}}`.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import type { Reply } from '../body.js';
import { type EmulatorState, V3_KEY_OWNERS, V3_KEYS } from '../state.js';
import type { V3HookSender } from './hooks.js';
import { botOwner, serverOwner } from './resources.js';
import { v3Error } from './routes.js';

/** docs-v3: "The client must send a ping at least every 90 seconds". */
export const DEFAULT_PING_TIMEOUT_MS = 90_000;
/** Not documented (the docs only say a wrong token gets no hello): the emulator's choice. */
export const DEFAULT_AUTH_TIMEOUT_MS = 10_000;
/** docs-v3: reconnect "observing the global rate limit of 15 attempts in 10 seconds". */
export const CONNECT_LIMIT = { attempts: 15, windowMs: 10_000 } as const;
/** An up's lifetime (docs/directory-facts.md: 14 days; not restated by the v3 sources). */
export const UP_LIFETIME_MS = 14 * 86_400_000;

/** The `data` of a notify frame (the webhook body carries the same with `id` for `affected`). */
export interface NotifyFrame {
  type: string;
  /** Any JSON; null when the event has none (as in docs-v3's example). */
  payload: unknown;
  /** The resource (bot or server) the event is about. */
  affected: string;
  /** The user who triggered it. */
  user: string;
  /** Unix ms. */
  happened: number;
}

export interface NotifyEvent {
  type: string;
  affected: string;
  user: string;
  payload?: unknown;
  /** Default: the emulator's clock now. */
  happened?: number;
}

export type CommentNotifyType = 'comment_added' | 'comment_edited' | 'comment_removed';

export interface NotifySocketInfo {
  /** The id its hello carried. */
  id: string;
  /** The key it authenticated with (null before auth). */
  key: string | null;
  authed: boolean;
  remote: string;
  openedAt: number;
  lastPingAt: number | null;
}

interface Conn {
  ws: WebSocket;
  id: string;
  key: string | null;
  authed: boolean;
  remote: string;
  openedAt: number;
  lastPingAt: number | null;
  /** Date.now() of the open or the last ping: the ping timeout runs on real time. */
  lastActive: number;
  authTimer: NodeJS.Timeout | undefined;
  pingTimer: NodeJS.Timeout | undefined;
}

interface SiteUp {
  id: string;
  expires: string | number;
  upCount: number;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function indexIn(map: Map<string, unknown>, id: string): number {
  let k = 0;
  for (const key of map.keys()) {
    if (key === id) return k;
    k += 1;
  }
  return k;
}

/** Answers an upgrade request with a plain HTTP error and closes the socket. */
function refuse(socket: Duplex, status: 404 | 429): void {
  const reason = status === 429 ? 'Too Many Requests' : 'Not Found';
  const body = JSON.stringify(
    status === 429 ? v3Error(429, 'RateLimited').body : v3Error(404, 'NotFound').body,
  );
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

export class NotifyGateway {
  readonly #state: EmulatorState;
  readonly #now: () => number;
  readonly #hooks: V3HookSender;
  readonly #wss = new WebSocketServer({ noServer: true, clientTracking: false });
  readonly #conns = new Set<Conn>();
  /** Every notify emitted, in order (replay() adds nothing). */
  readonly notifications: NotifyFrame[] = [];
  /** The exact text each notify was sent as, for replay(). */
  readonly #texts: { affected: string; text: string }[] = [];
  /** Remote address -> times (emulator clock) of its admitted connections in the window. */
  readonly #attemptsBy = new Map<string, number[]>();
  /** Keys revokeKey() took away -> their account, for restoreKey(). */
  readonly #revoked = new Map<string, string>();
  /** Resource id -> the ups made on the site (upOnSite), shown by GET /v3/servers/:id and /bots/:id. */
  readonly #siteUps = new Map<string, SiteUp[]>();
  #attempts = 0;
  #seq = 0;
  #pingTimeoutMs = DEFAULT_PING_TIMEOUT_MS;
  #authTimeoutMs = DEFAULT_AUTH_TIMEOUT_MS;
  #closed = false;

  constructor(state: EmulatorState, now: () => number, hooks: V3HookSender) {
    this.#state = state;
    this.#now = now;
    this.#hooks = hooks;
  }

  /** Every upgrade request seen on the HTTP server (refused ones and other paths included). */
  get connectionAttempts(): number {
    return this.#attempts;
  }

  /** Takes over the HTTP server's upgrade requests: /websocket and /websocket/ only. */
  attach(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      this.#attempts += 1;
      socket.on('error', () => {});
      if (this.#closed) {
        socket.destroy();
        return;
      }
      const pathname = (req.url ?? '/').split('?')[0];
      if (pathname !== '/websocket' && pathname !== '/websocket/') {
        refuse(socket, 404);
        return;
      }
      const remote = req.socket.remoteAddress ?? '';
      // The docs give the limit as a rule for clients only; what the gateway does beyond it is not
      // documented. The emulator answers the upgrade with an HTTP 429 (its own choice), counting
      // admitted connections in a sliding 10 s window per remote address.
      if (!this.#admit(remote)) {
        refuse(socket, 429);
        return;
      }
      this.#wss.handleUpgrade(req, socket, head, (ws) => this.#open(ws, remote));
    });
  }

  #admit(remote: string): boolean {
    const t = this.#now();
    const recent = (this.#attemptsBy.get(remote) ?? []).filter((at) => at > t - CONNECT_LIMIT.windowMs);
    const ok = recent.length < CONNECT_LIMIT.attempts;
    if (ok) recent.push(t);
    this.#attemptsBy.set(remote, recent);
    return ok;
  }

  #open(ws: WebSocket, remote: string): void {
    this.#seq += 1;
    const conn: Conn = {
      ws,
      id: `emu-ws-${this.#seq}`,
      key: null,
      authed: false,
      remote,
      openedAt: this.#now(),
      lastPingAt: null,
      lastActive: Date.now(),
      authTimer: undefined,
      pingTimer: undefined,
    };
    this.#conns.add(conn);
    conn.authTimer = setTimeout(() => {
      if (!conn.authed) ws.terminate();
    }, this.#authTimeoutMs);
    conn.authTimer.unref();
    this.#armPing(conn);
    ws.on('message', (data, isBinary) => this.#onMessage(conn, data, isBinary));
    ws.on('error', () => {});
    ws.on('close', () => {
      clearTimeout(conn.authTimer);
      clearTimeout(conn.pingTimer);
      this.#conns.delete(conn);
    });
  }

  /** Closes the socket (terminate: 1006 at the client) once pingTimeoutMs pass without a ping. */
  #armPing(conn: Conn): void {
    clearTimeout(conn.pingTimer);
    const left = Math.max(0, conn.lastActive + this.#pingTimeoutMs - Date.now());
    conn.pingTimer = setTimeout(() => conn.ws.terminate(), left);
    conn.pingTimer.unref();
  }

  #send(conn: Conn, frame: string | Buffer): boolean {
    if (conn.ws.readyState !== conn.ws.OPEN) return false;
    conn.ws.send(frame);
    return true;
  }

  /**
   * Client frames. Not JSON, binary, unknown events, and anything but auth before auth are ignored
   * (the docs say nothing of them). A second auth re-authenticates the socket.
   */
  #onMessage(conn: Conn, data: WebSocket.RawData, isBinary: boolean): void {
    if (isBinary) return;
    let msg: unknown;
    try {
      const buf = Array.isArray(data)
        ? Buffer.concat(data)
        : Buffer.isBuffer(data)
          ? data
          : Buffer.from(data);
      msg = JSON.parse(buf.toString('utf8'));
    } catch {
      return;
    }
    if (!isRecord(msg)) return;
    if (msg.event === 'auth') {
      const token = isRecord(msg.data) ? msg.data.token : undefined;
      if (typeof token === 'string' && this.#state.v3.keys.has(token)) {
        conn.key = token;
        conn.authed = true;
        clearTimeout(conn.authTimer);
        this.#send(conn, JSON.stringify({ event: 'hello', data: { id: conn.id } }));
        return;
      }
      // The docs only say a wrong token gets no hello. boticordjava handles an
      // {"event":"error","data":{code,message}} frame; the emulator sends one (code 4 Unauthorized,
      // English numbering) and then drops the socket, which py and java read as a bad token (1006).
      const error = JSON.stringify({ event: 'error', data: { code: 4, message: 'Unauthorized' } });
      if (conn.ws.readyState === conn.ws.OPEN) conn.ws.send(error, () => conn.ws.terminate());
      else conn.ws.terminate();
      return;
    }
    if (msg.event === 'ping' && conn.authed) {
      conn.lastPingAt = this.#now();
      conn.lastActive = Date.now();
      this.#armPing(conn);
      this.#send(conn, JSON.stringify({ event: 'pong', data: {} }));
    }
  }

  /** The accounts whose sockets hear about a resource: a server's owner, a bot's developers. */
  #owners(resourceId: string): Set<string> {
    const server = this.#state.servers.get(resourceId);
    if (server !== undefined) return new Set([serverOwner(server)]);
    const bot = this.#state.bots.get(resourceId);
    if (bot !== undefined) return new Set(bot.information.developers);
    return new Set();
  }

  /** The owner's API key for X-Boticord-Token; a constructed stand-in when the owner has none. */
  #ownerToken(resourceId: string): string {
    const server = this.#state.servers.get(resourceId);
    const bot = server === undefined ? this.#state.bots.get(resourceId) : undefined;
    const owner = server !== undefined ? serverOwner(server) : bot !== undefined ? botOwner(bot) : null;
    if (owner !== null && owner !== '') {
      for (const [key, account] of this.#state.v3.keys) if (account === owner) return key;
    }
    return `emu-v3-nokey-${owner === null || owner === '' ? 'unknown' : owner}`;
  }

  /** Sockets whose key is no longer valid are dropped, as a revoked token is. */
  #dropRevoked(): void {
    for (const c of this.#conns) {
      if (c.authed && c.key !== null && !this.#state.v3.keys.has(c.key)) c.ws.terminate();
    }
  }

  #deliver(affected: string, text: string): number {
    this.#dropRevoked();
    const owners = this.#owners(affected);
    let sent = 0;
    for (const c of this.#conns) {
      if (!c.authed || c.key === null) continue;
      const account = this.#state.v3.keys.get(c.key);
      if (account !== undefined && owners.has(account) && this.#send(c, text)) sent += 1;
    }
    return sent;
  }

  notify(event: NotifyEvent): NotifyFrame {
    const frame: NotifyFrame = {
      type: event.type,
      payload: event.payload === undefined ? null : event.payload,
      affected: event.affected,
      user: event.user,
      happened: event.happened ?? this.#now(),
    };
    this.notifications.push(frame);
    if (this.#closed) return frame;
    const text = JSON.stringify({ event: 'notify', data: frame });
    this.#texts.push({ affected: frame.affected, text });
    this.#deliver(frame.affected, text);
    void this.#hooks.send(frame, this.#ownerToken(frame.affected));
    return frame;
  }

  /**
   * An up made on the site: the resource's up count grows by upCount (v2 bumps, v3 upCount and the
   * search index's ups), its v3 `ups` by one entry expiring 14 days after `at`; then up_added.
   */
  upOnSite(resourceId: string, userId: string, options: { at?: number; upCount?: number } = {}): NotifyFrame {
    const at = options.at ?? this.#now();
    const upCount = options.upCount ?? 1;
    const server = this.#state.servers.get(resourceId);
    const bot = server === undefined ? this.#state.bots.get(resourceId) : undefined;
    const info = server?.information ?? bot?.information;
    if (info !== undefined) {
      info.bumps += upCount;
      const k =
        server !== undefined
          ? indexIn(this.#state.servers, resourceId)
          : indexIn(this.#state.bots, resourceId);
      const list = this.#siteUps.get(resourceId) ?? [];
      const expires = at + UP_LIFETIME_MS;
      // The same type as the resource's seeded ups (resources.ts: a string on even positions).
      list.push({
        id: `up${resourceId.slice(-6)}s${list.length + 1}`,
        expires: k % 2 === 0 ? String(expires) : expires,
        upCount,
      });
      this.#siteUps.set(resourceId, list);
    }
    return this.notify({
      type: 'up_added',
      affected: resourceId,
      user: userId,
      payload: { upCount },
      happened: at,
    });
  }

  /** A review event; notification only (the emulator's comments are not changed). */
  comment(
    type: CommentNotifyType,
    resourceId: string,
    userId: string,
    review: { content: string; rating: number },
    options: { at?: number } = {},
  ): NotifyFrame {
    return this.notify({
      type,
      affected: resourceId,
      user: userId,
      payload: { content: review.content, rating: review.rating },
      ...(options.at !== undefined ? { happened: options.at } : {}),
    });
  }

  /** Sends the last `count` notify frames again, byte for byte, to the owners' sockets open now. */
  replay(count = 1): NotifyFrame[] {
    const n = Math.max(0, Math.min(count, this.#texts.length));
    const texts = this.#texts.slice(this.#texts.length - n);
    for (const t of texts) this.#deliver(t.affected, t.text);
    return this.notifications.slice(this.notifications.length - n);
  }

  /** Writes a raw frame (a Buffer goes as a binary frame) to every authenticated socket, or that key's. */
  sendRaw(frame: string | Buffer, apiKey?: string): number {
    let sent = 0;
    for (const c of this.#conns) {
      if (!c.authed || (apiKey !== undefined && c.key !== apiKey)) continue;
      if (this.#send(c, frame)) sent += 1;
    }
    return sent;
  }

  /** 'terminate' (default): a network drop, 1006 at the client; 'close': a close frame 1001 (going away). */
  dropSockets(how: 'close' | 'terminate' = 'terminate'): void {
    for (const c of this.#conns) {
      if (how === 'close') c.ws.close(1001, 'going away');
      else c.ws.terminate();
    }
  }

  /** Deletes the key (REST and gateway) and drops its sockets (RU docs: 1006). */
  revokeKey(apiKey: string): void {
    const owner = this.#state.v3.keys.get(apiKey);
    if (owner !== undefined) this.#revoked.set(apiKey, owner);
    this.#state.v3.keys.delete(apiKey);
    for (const c of this.#conns) if (c.key === apiKey) c.ws.terminate();
  }

  /** Gives a revoked key back (a V3_KEYS key is known even after a reset). */
  restoreKey(apiKey: string): void {
    const named = (Object.keys(V3_KEYS) as (keyof typeof V3_KEYS)[]).find((n) => V3_KEYS[n] === apiKey);
    const owner = this.#revoked.get(apiKey) ?? (named === undefined ? undefined : V3_KEY_OWNERS[named]);
    if (owner === undefined) return;
    this.#state.v3.keys.set(apiKey, owner);
    this.#revoked.delete(apiKey);
  }

  setPingTimeout(ms: number): void {
    this.#pingTimeoutMs = ms;
    for (const c of this.#conns) this.#armPing(c);
  }

  /** For sockets opened from now on. */
  setAuthTimeout(ms: number): void {
    this.#authTimeoutMs = ms;
  }

  sockets(): NotifySocketInfo[] {
    return [...this.#conns]
      .filter((c) => c.ws.readyState === c.ws.OPEN)
      .map((c) => ({
        id: c.id,
        key: c.key,
        authed: c.authed,
        remote: c.remote,
        openedAt: c.openedAt,
        lastPingAt: c.lastPingAt,
      }));
  }

  /** The site's ups in a v3 answer: `ups` of the resource (or a user's bots and servers). */
  decorate(reply: Reply): Reply {
    if (this.#siteUps.size === 0 || reply.status !== 200 || !isRecord(reply.body)) return reply;
    const result = reply.body.result;
    if (!isRecord(result)) return reply;
    this.#withSiteUps(result);
    for (const field of ['bots', 'servers'] as const) {
      const list = result[field];
      if (Array.isArray(list)) for (const r of list) if (isRecord(r)) this.#withSiteUps(r);
    }
    return reply;
  }

  /** The derived ups stand for the bumps before the site's ups; the site's follow them. */
  #withSiteUps(resource: Record<string, unknown>): void {
    const site = typeof resource.id === 'string' ? this.#siteUps.get(resource.id) : undefined;
    if (site === undefined || !Array.isArray(resource.ups) || typeof resource.upCount !== 'number') return;
    const added = site.reduce((sum, u) => sum + u.upCount, 0);
    const base = Math.max(0, resource.upCount - added);
    resource.ups = [
      ...resource.ups.slice(0, Math.min(base, resource.ups.length)),
      ...site.map((u) => ({ id: u.id, expires: u.expires })),
    ];
  }

  /** Clears events, webhooks, counters and settings; open sockets stay. */
  reset(): void {
    this.notifications.length = 0;
    this.#texts.length = 0;
    this.#attemptsBy.clear();
    this.#revoked.clear();
    this.#siteUps.clear();
    this.#attempts = 0;
    this.#authTimeoutMs = DEFAULT_AUTH_TIMEOUT_MS;
    this.#hooks.reset();
    this.setPingTimeout(DEFAULT_PING_TIMEOUT_MS);
  }

  /** Drops every socket, closes the WebSocket server and waits for webhook posts on their way. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const c of this.#conns) {
      clearTimeout(c.authTimer);
      clearTimeout(c.pingTimer);
      c.ws.terminate();
    }
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    await this.#hooks.settled();
  }
}
