// The Discord gateway (v10, JSON encoding, no compression) on top of a `ws` WebSocketServer.
// Sessions outlive their sockets so clients can RESUME and get the events they missed.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import { randomToken } from './fixtures.js';
import { isRecord } from './interactions.js';
import type { GatewayLogEntry, InteractionDelivery } from './types.js';
import { WaitList } from './waiters.js';

export const GatewayOp = {
  Dispatch: 0,
  Heartbeat: 1,
  Identify: 2,
  PresenceUpdate: 3,
  VoiceStateUpdate: 4,
  Resume: 6,
  Reconnect: 7,
  RequestGuildMembers: 8,
  InvalidSession: 9,
  Hello: 10,
  HeartbeatAck: 11,
  RequestSoundboardSounds: 31,
} as const;

export const GatewayClose = {
  UnknownError: 4000,
  UnknownOpcode: 4001,
  DecodeError: 4002,
  NotAuthenticated: 4003,
  AuthenticationFailed: 4004,
  AlreadyAuthenticated: 4005,
  InvalidSeq: 4007,
  RateLimited: 4008,
  SessionTimedOut: 4009,
  InvalidShard: 4010,
  ShardingRequired: 4011,
  InvalidAPIVersion: 4012,
  InvalidIntents: 4013,
  DisallowedIntents: 4014,
} as const;

/** Server close codes after which Discord's session cannot be resumed. */
const SESSION_ENDING_CODES = new Set<number>([4004, 4007, 4009, 4010, 4011, 4012, 4013, 4014]);

interface DispatchPayload {
  op: 0;
  t: string;
  s: number;
  d: unknown;
}

interface Session {
  id: string;
  shardId: number;
  shardCount: number;
  seq: number;
  log: DispatchPayload[];
  conn: Connection | null;
}

interface Connection {
  ws: WebSocket;
  shardId: number | null;
  identified: boolean;
  session: Session | null;
  serverCloseCode?: number;
  closed: boolean;
}

export interface GatewayHost {
  readonly token: string;
  readonly shardCount: number;
  readonly heartbeatIntervalMs: number;
  /** Dispatches a session keeps for a RESUME to replay. */
  readonly sessionReplayMax: number;
  resumeUrl(): string;
  readyData(shardId: number, shardCount: number, sessionId: string): Record<string, unknown>;
  /** GUILD_CREATE payloads for the guilds of a shard. */
  guildCreates(shardId: number, shardCount: number, largeThreshold: number): unknown[];
  log(entry: GatewayLogEntry): void;
  /** A heartbeat received (kept apart from the log: one every interval per shard). */
  heartbeat(shardId: number | null, at: number): void;
}

export class Gateway {
  readonly #host: GatewayHost;
  readonly #wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 1 << 20 });
  readonly #sessions = new Map<string, Session>();
  readonly #shardSessions = new Map<number, Session>();
  readonly #connections = new Set<Connection>();
  readonly #identifyDelays = new Map<number, number>();
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #readyWaiters = new WaitList<number>();
  /** Shards whose heartbeats get no ACK (dropHeartbeatAcks). */
  readonly #unacked = new Set<number>();

  constructor(host: GatewayHost) {
    this.#host = host;
  }

  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname !== '/gateway' && url.pathname !== '/gateway/resume') {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#onConnection(ws, url));
  }

  /** Shard ids with a live, ready (identified or resumed) session. */
  connectedShards(): number[] {
    const ids: number[] = [];
    for (const [shardId, session] of this.#shardSessions) if (session.conn) ids.push(shardId);
    return ids.sort((a, b) => a - b);
  }

  /** Bytes sent to the gateway's connections and not yet handed to the network (ws's bufferedAmount). */
  backlog(): number {
    let bytes = 0;
    for (const conn of this.#connections) if (!conn.closed) bytes += conn.ws.bufferedAmount;
    return bytes;
  }

  waitForShards(n: number, timeoutMs: number): Promise<void> {
    return this.#readyWaiters
      .wait((count) => count >= n, timeoutMs, `${n} ready shard(s)`, [this.connectedShards().length])
      .then(() => undefined);
  }

  setIdentifyDelay(shardId: number, ms: number): void {
    if (ms > 0) this.#identifyDelays.set(shardId, ms);
    else this.#identifyDelays.delete(shardId);
  }

  /**
   * Sends (or queues for resume) a dispatch on a shard's current session. `json`, when given, is
   * `d` already serialized (a burst's payloads are made before any is sent).
   */
  dispatch(shardId: number, t: string, d: unknown, json?: string): InteractionDelivery {
    const session = this.#shardSessions.get(shardId);
    if (!session) return 'dropped';
    return this.#dispatchTo(session, t, d, json);
  }

  disconnect(shardId: number, code: number): void {
    const conn = this.#connectionOf(shardId);
    if (!conn) return;
    this.#serverClose(conn, code);
  }

  /**
   * Ends every session with no connection, as Discord does once a dropped session is too old to
   * resume: a RESUME of one gets INVALID_SESSION (d: false), and the client identifies.
   */
  expireDroppedSessions(): number {
    let ended = 0;
    for (const session of [...this.#sessions.values()]) {
      if (session.conn) continue;
      this.#endSession(session);
      ended += 1;
    }
    return ended;
  }

  /**
   * Sends op 9 INVALID_SESSION (d: false) on a shard's live connection and ends its session, as
   * Discord does when it drops a session: the client closes and identifies anew.
   */
  invalidateSession(shardId: number): void {
    const conn = this.#connectionOf(shardId);
    if (!conn) return;
    const session = conn.session;
    if (session) {
      this.#detach(conn);
      this.#endSession(session);
    }
    this.#host.log({ at: performance.now(), shardId, kind: 'invalid_session' });
    this.#send(conn, { op: GatewayOp.InvalidSession, d: false, s: null, t: null });
  }

  /**
   * Heartbeats of the shard are received but not acknowledged while `on` (a connection Discord no
   * longer serves): the client takes it for a zombie, closes it and resumes.
   */
  dropHeartbeatAcks(shardId: number, on: boolean): void {
    if (on) this.#unacked.add(shardId);
    else this.#unacked.delete(shardId);
  }

  /** Sends op 7 RECONNECT: the client closes and resumes. */
  requestReconnect(shardId: number): void {
    const conn = this.#connectionOf(shardId);
    if (conn) this.#send(conn, { op: GatewayOp.Reconnect, d: null, s: null, t: null });
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#readyWaiters.close();
    for (const conn of this.#connections) {
      conn.closed = true;
      conn.ws.terminate();
    }
    this.#connections.clear();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  // ---------------------------------------------------------------------------------------------

  #connectionOf(shardId: number): Connection | undefined {
    const session = this.#shardSessions.get(shardId);
    if (session?.conn) return session.conn;
    let found: Connection | undefined;
    for (const conn of this.#connections) if (conn.shardId === shardId && !conn.closed) found = conn;
    return found;
  }

  #onConnection(ws: WebSocket, url: URL): void {
    const conn: Connection = { ws, shardId: null, identified: false, session: null, closed: false };
    this.#connections.add(conn);
    this.#host.log({ at: performance.now(), shardId: null, kind: 'connect' });
    ws.on('message', (data, isBinary) => this.#onMessage(conn, data, isBinary));
    ws.on('close', (code) => this.#onClose(conn, code));
    ws.on('error', () => {
      // A broken socket also emits 'close'; nothing else to do.
    });
    const version = url.searchParams.get('v');
    if (version !== null && version !== '10') {
      this.#serverClose(conn, GatewayClose.InvalidAPIVersion, 'Invalid API version');
      return;
    }
    const encoding = url.searchParams.get('encoding');
    if (encoding !== null && encoding !== 'json') {
      this.#serverClose(conn, GatewayClose.DecodeError, 'Only JSON encoding is supported');
      return;
    }
    // `compress` (zlib-stream) is deliberately ignored: frames are sent as uncompressed text, which
    // @discordjs/ws parses as plain JSON whatever it asked for.
    this.#send(conn, {
      op: GatewayOp.Hello,
      d: {
        heartbeat_interval: this.#host.heartbeatIntervalMs,
        _trace: ['["gateway-stand-in",{"micros":0}]'],
      },
      s: null,
      t: null,
    });
  }

  #send(conn: Connection, payload: unknown): void {
    if (conn.closed || conn.ws.readyState !== WebSocket.OPEN) return;
    conn.ws.send(JSON.stringify(payload));
  }

  #serverClose(conn: Connection, code: number, reason = ''): void {
    if (conn.closed) return;
    conn.serverCloseCode = code;
    this.#detach(conn);
    if (SESSION_ENDING_CODES.has(code) && conn.session) this.#endSession(conn.session);
    if (code === 1006) conn.ws.terminate();
    else conn.ws.close(code, reason);
  }

  #detach(conn: Connection): void {
    const session = conn.session;
    if (session && session.conn === conn) session.conn = null;
  }

  #endSession(session: Session): void {
    this.#sessions.delete(session.id);
    if (this.#shardSessions.get(session.shardId) === session) this.#shardSessions.delete(session.shardId);
  }

  #onClose(conn: Connection, code: number): void {
    const byServer = conn.serverCloseCode !== undefined;
    conn.closed = true;
    this.#connections.delete(conn);
    this.#detach(conn);
    // A client closing with 1000/1001 ends its session, as on Discord (discord.js uses 4200 to keep it).
    if (!byServer && conn.session && (code === 1000 || code === 1001)) this.#endSession(conn.session);
    const entry: GatewayLogEntry = {
      at: performance.now(),
      shardId: conn.shardId,
      kind: 'close',
      code: conn.serverCloseCode ?? code,
      by: byServer ? 'server' : 'client',
    };
    if (conn.session) entry.sessionId = conn.session.id;
    this.#host.log(entry);
  }

  #onMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    if (conn.closed) return;
    let payload: unknown;
    try {
      if (isBinary) throw new Error('binary frames are not supported');
      payload = JSON.parse(rawToString(data));
    } catch {
      this.#serverClose(conn, GatewayClose.DecodeError, 'Error while decoding payload.');
      return;
    }
    if (!isRecord(payload) || typeof payload.op !== 'number') {
      this.#serverClose(conn, GatewayClose.DecodeError, 'Error while decoding payload.');
      return;
    }
    const d = payload.d;
    switch (payload.op) {
      case GatewayOp.Heartbeat:
        this.#host.heartbeat(conn.shardId, performance.now());
        if (conn.shardId !== null && this.#unacked.has(conn.shardId)) return;
        this.#send(conn, { op: GatewayOp.HeartbeatAck, d: null, s: null, t: null });
        return;
      case GatewayOp.Identify:
        this.#onIdentify(conn, d);
        return;
      case GatewayOp.Resume:
        this.#onResume(conn, d);
        return;
      case GatewayOp.PresenceUpdate:
      case GatewayOp.VoiceStateUpdate:
      case GatewayOp.RequestGuildMembers:
      case GatewayOp.RequestSoundboardSounds:
        if (!conn.identified) this.#serverClose(conn, GatewayClose.NotAuthenticated, 'Not authenticated.');
        return;
      default:
        this.#serverClose(conn, GatewayClose.UnknownOpcode, 'Unknown opcode.');
    }
  }

  #onIdentify(conn: Connection, d: unknown): void {
    if (conn.identified) {
      this.#serverClose(conn, GatewayClose.AlreadyAuthenticated, 'Already authenticated.');
      return;
    }
    if (!isRecord(d)) {
      this.#serverClose(conn, GatewayClose.DecodeError, 'Error while decoding payload.');
      return;
    }
    if (d.token !== this.#host.token && d.token !== `Bot ${this.#host.token}`) {
      this.#serverClose(conn, GatewayClose.AuthenticationFailed, 'Authentication failed.');
      return;
    }
    if (typeof d.intents !== 'number' || !Number.isInteger(d.intents) || d.intents < 0) {
      this.#serverClose(conn, GatewayClose.InvalidIntents, 'Invalid intent(s).');
      return;
    }
    const shard = d.shard ?? [0, 1];
    const expected = this.#host.shardCount;
    if (
      !Array.isArray(shard) ||
      shard.length !== 2 ||
      typeof shard[0] !== 'number' ||
      typeof shard[1] !== 'number' ||
      shard[1] !== expected ||
      shard[0] < 0 ||
      shard[0] >= shard[1]
    ) {
      this.#serverClose(conn, GatewayClose.InvalidShard, 'Invalid shard.');
      return;
    }
    const [shardId, shardCount] = shard as [number, number];
    const largeThreshold =
      typeof d.large_threshold === 'number' ? Math.min(250, Math.max(50, d.large_threshold)) : 50;
    conn.identified = true;
    conn.shardId = shardId;
    this.#host.log({ at: performance.now(), shardId, kind: 'identify' });
    const delay = this.#identifyDelays.get(shardId) ?? 0;
    if (delay <= 0) {
      this.#startSession(conn, shardId, shardCount, largeThreshold);
      return;
    }
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!conn.closed) this.#startSession(conn, shardId, shardCount, largeThreshold);
    }, delay);
    this.#timers.add(timer);
  }

  #startSession(conn: Connection, shardId: number, shardCount: number, largeThreshold: number): void {
    const session: Session = { id: randomToken(32), shardId, shardCount, seq: 0, log: [], conn: null };
    this.#sessions.set(session.id, session);
    this.#shardSessions.set(shardId, session);
    conn.session = session;
    session.conn = conn;
    this.#dispatchTo(session, 'READY', this.#host.readyData(shardId, shardCount, session.id));
    for (const guild of this.#host.guildCreates(shardId, shardCount, largeThreshold)) {
      this.#dispatchTo(session, 'GUILD_CREATE', guild);
    }
    this.#host.log({ at: performance.now(), shardId, kind: 'ready', sessionId: session.id });
    this.#readyWaiters.notify(this.connectedShards().length);
  }

  #onResume(conn: Connection, d: unknown): void {
    if (conn.identified) {
      this.#serverClose(conn, GatewayClose.AlreadyAuthenticated, 'Already authenticated.');
      return;
    }
    if (!isRecord(d) || typeof d.session_id !== 'string') {
      this.#serverClose(conn, GatewayClose.DecodeError, 'Error while decoding payload.');
      return;
    }
    if (d.token !== this.#host.token && d.token !== `Bot ${this.#host.token}`) {
      this.#serverClose(conn, GatewayClose.AuthenticationFailed, 'Authentication failed.');
      return;
    }
    const session = this.#sessions.get(d.session_id);
    const seq = typeof d.seq === 'number' ? d.seq : 0;
    this.#host.log({
      at: performance.now(),
      shardId: session?.shardId ?? null,
      kind: 'resume',
      sessionId: d.session_id,
    });
    const oldest = session?.log[0]?.s ?? 1;
    if (!session || seq < oldest - 1) {
      this.#host.log({ at: performance.now(), shardId: session?.shardId ?? null, kind: 'invalid_session' });
      this.#send(conn, { op: GatewayOp.InvalidSession, d: false, s: null, t: null });
      return;
    }
    if (seq > session.seq) {
      this.#serverClose(conn, GatewayClose.InvalidSeq, 'Invalid seq.');
      return;
    }
    const previous = session.conn;
    if (previous && previous !== conn) {
      this.#detach(previous);
      this.#serverClose(previous, GatewayClose.UnknownError, 'Session resumed elsewhere.');
    }
    conn.identified = true;
    conn.shardId = session.shardId;
    conn.session = session;
    session.conn = conn;
    if (this.#shardSessions.get(session.shardId) === undefined)
      this.#shardSessions.set(session.shardId, session);
    for (const event of session.log) if (event.s > seq) this.#send(conn, event);
    this.#dispatchTo(session, 'RESUMED', { _trace: ['["gateway-stand-in",{"micros":0}]'] });
    this.#host.log({
      at: performance.now(),
      shardId: session.shardId,
      kind: 'resumed',
      sessionId: session.id,
    });
    this.#readyWaiters.notify(this.connectedShards().length);
  }

  #dispatchTo(session: Session, t: string, d: unknown, json?: string): InteractionDelivery {
    session.seq += 1;
    const event: DispatchPayload = { op: 0, t, s: session.seq, d };
    session.log.push(event);
    const max = this.#host.sessionReplayMax;
    if (session.log.length > max) session.log.splice(0, session.log.length - max);
    const conn = session.conn;
    if (conn && !conn.closed && conn.ws.readyState === WebSocket.OPEN) {
      // The same text JSON.stringify(event) would give, with `d` serialized beforehand.
      conn.ws.send(
        json === undefined
          ? JSON.stringify(event)
          : `{"op":0,"t":${JSON.stringify(t)},"s":${event.s},"d":${json}}`,
      );
      return 'sent';
    }
    return 'queued';
  }
}

function rawToString(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}
