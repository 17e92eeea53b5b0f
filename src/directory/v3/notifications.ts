/**
 * The client side of BotiCord v3's notification WebSocket (docs/directory-v3-sources.md §4):
 * authenticate with the API key, wait for `hello`, ping, hand each `notify` to the caller in order,
 * and reconnect whatever happens, without ever spinning.
 *
 * - Every end of a connection (a close, an error, no hello in time, no pong in time, a frame over
 *   the size limit) terminates the socket and schedules the next attempt with full-jitter
 *   exponential backoff between `floorMs` and `maxMs`; the step goes back to the floor after a
 *   connection that stayed ready for a minute. On top of that, never more than `attemptsPer10s`
 *   attempts in any 10 s (a sliding window of attempt times; the directory allows 15).
 * - A revoked key shows as a 1006 close, like a network drop: after 3 connections in a row that
 *   ended before hello, one warning says the key may be wrong, and retries go at the max backoff.
 * - Events are handed to `onEvent` one at a time, in order. While `maxQueued` wait, the socket is
 *   paused (nothing more is read, nothing dropped) until the queue drains below half; the pong
 *   deadline is suspended meanwhile, since a pong cannot be read from a paused socket.
 * - The key goes into the auth frame and nowhere else: not a log line, an error, or a state.
 */
import WebSocket from 'ws';
import type { Logger } from '../../log/logger.js';
import { logThrottle } from '../../log/throttle.js';
import { type NotifyEvent, parseNotifyFrame } from './notify.js';

export type NotifyConnectionState = 'idle' | 'connecting' | 'ready' | 'backoff' | 'stopped';

export interface NotificationsClientOptions {
  /** The gateway, e.g. wss://gateway.boticord.top/websocket/ */
  url: string;
  /** The API key (the same as the REST key). Sent in the auth frame only. */
  key: string;
  /** Called once per event, in order, one at a time (awaited). A throw is logged and skipped. */
  onEvent(event: NotifyEvent): Promise<void> | void;
  /**
   * Instead of onEvent: the events waiting (at most `maxBatch`, in order) handed over together,
   * one batch at a time: a store takes a burst in a few transactions, not one per event.
   */
  onEvents?(events: NotifyEvent[]): Promise<void> | void;
  /** With onEvents: the most events in one batch. Default 500. */
  maxBatch?: number;
  logger: Logger;
  onState?(state: NotifyConnectionState): void;
  /** Every frame's kind as parsed: hello, pong, notify, error, ignored, invalid. */
  onFrame?(kind: string): void;
  /** Default 45 s; the directory closes a connection without a ping for 90 s. */
  pingEveryMs?: number;
  pongTimeoutMs?: number;
  helloTimeoutMs?: number;
  backoff?: { floorMs?: number; maxMs?: number };
  /** Default 10; the directory allows 15 in 10 s. Clamped to 1..15. */
  attemptsPer10s?: number;
  /** Default 64 KiB: a larger frame ends the connection (ws maxPayload). */
  maxFrameBytes?: number;
  maxQueued?: number;
  now?: () => number;
  random?: () => number;
}

export const NOTIFICATIONS_DEFAULTS = {
  pingEveryMs: 45_000,
  pingEveryMaxMs: 90_000,
  pongTimeoutMs: 15_000,
  helloTimeoutMs: 15_000,
  floorMs: 1_000,
  maxMs: 60_000,
  attemptsPer10s: 10,
  directoryAttemptsPer10s: 15,
  maxFrameBytes: 64 * 1024,
  maxQueued: 1_000,
  /** A connection ready this long resets the backoff to its floor. */
  stableMs: 60_000,
  /** Connections in a row that ended before hello before the key is suspected. */
  suspectKeyAfter: 3,
  /** How long stop() waits for the close handshake before cutting the socket. */
  closeWaitMs: 1_000,
  /** How long stop() keeps handing over the events received already. */
  stopDrainMs: 2_000,
} as const;

const WINDOW_MS = 10_000;
const WARN_EVERY_MS = 10_000;
const SUSPECT_KEY_WARN_EVERY_MS = 10 * 60_000;
const REDACTED = '[REDACTED]';

type Timer = ReturnType<typeof setTimeout>;

export class NotificationsClient {
  readonly #url: string;
  readonly #key: string;
  readonly #onEvent: (event: NotifyEvent) => Promise<void> | void;
  readonly #onEvents: ((events: NotifyEvent[]) => Promise<void> | void) | undefined;
  readonly #maxBatch: number;
  readonly #log: Logger;
  readonly #onState: ((state: NotifyConnectionState) => void) | undefined;
  readonly #onFrame: ((kind: string) => void) | undefined;
  readonly #pingEveryMs: number;
  readonly #pongTimeoutMs: number;
  readonly #helloTimeoutMs: number;
  readonly #floorMs: number;
  readonly #maxMs: number;
  readonly #attemptsPer10s: number;
  readonly #maxFrameBytes: number;
  readonly #maxQueued: number;
  readonly #now: () => number;
  readonly #random: () => number;

  #state: NotifyConnectionState = 'idle';
  #ws: WebSocket | null = null;
  #readySince: number | null = null;
  /** Failures since the last stable connection: the backoff's exponent. */
  #failures = 0;
  /** Connections in a row that ended before hello. */
  #beforeHello = 0;
  #attempts: number[] = [];

  #reconnectTimer: Timer | null = null;
  #helloTimer: Timer | null = null;
  #pingTimer: Timer | null = null;
  #pongTimer: Timer | null = null;
  #awaitingPong = false;
  #paused = false;

  #queue: NotifyEvent[] = [];
  /** True from the moment an event is handed over until the queue is empty (set synchronously). */
  #busy = false;
  /** Stopped, and out of time to hand the queue over: the rest is dropped. */
  #dropRest = false;
  /** The drain loop, for stop() to wait on: resolves once the event in hand is done. */
  #draining: Promise<void> = Promise.resolve();

  #dropped = 0;
  #lastDropReason = '';
  readonly #dropWarn: () => boolean;
  readonly #errorFrameWarn: () => boolean;
  #errorFramesSuppressed = 0;
  readonly #handlerWarn: () => boolean;
  #handlerFailuresSuppressed = 0;
  readonly #lostWarn: () => boolean;
  readonly #suspectKeyWarn: () => boolean;

  constructor(options: NotificationsClientOptions) {
    const d = NOTIFICATIONS_DEFAULTS;
    this.#url = options.url;
    this.#key = options.key;
    this.#onEvent = options.onEvent;
    this.#onEvents = options.onEvents?.bind(options);
    this.#maxBatch = Math.max(1, Math.floor(positive(options.maxBatch, 500)));
    this.#log = options.logger;
    this.#onState = options.onState;
    this.#onFrame = options.onFrame;
    this.#pingEveryMs = positive(options.pingEveryMs, d.pingEveryMs);
    this.#pongTimeoutMs = positive(options.pongTimeoutMs, d.pongTimeoutMs);
    this.#helloTimeoutMs = positive(options.helloTimeoutMs, d.helloTimeoutMs);
    this.#floorMs = positive(options.backoff?.floorMs, d.floorMs);
    this.#maxMs = Math.max(this.#floorMs, positive(options.backoff?.maxMs, d.maxMs));
    this.#attemptsPer10s = Math.min(
      d.directoryAttemptsPer10s,
      Math.max(1, Math.floor(positive(options.attemptsPer10s, d.attemptsPer10s))),
    );
    this.#maxFrameBytes = Math.floor(positive(options.maxFrameBytes, d.maxFrameBytes));
    this.#maxQueued = Math.max(1, Math.floor(positive(options.maxQueued, d.maxQueued)));
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
    this.#dropWarn = logThrottle(WARN_EVERY_MS, this.#now);
    this.#errorFrameWarn = logThrottle(WARN_EVERY_MS, this.#now);
    this.#handlerWarn = logThrottle(WARN_EVERY_MS, this.#now);
    this.#lostWarn = logThrottle(WARN_EVERY_MS, this.#now);
    this.#suspectKeyWarn = logThrottle(SUSPECT_KEY_WARN_EVERY_MS, this.#now);
  }

  get state(): NotifyConnectionState {
    return this.#state;
  }

  /** Connects, and keeps connected until stop(). Calling it again (or after stop) does nothing. */
  start(): void {
    if (this.#state !== 'idle') return;
    this.#connect();
  }

  /**
   * Closes with 1000 (nothing more is read), cancels every timer, and hands over the events
   * received already for at most `drainMs` (default 2 s: the directory does not send them again);
   * those left then are dropped, with one line saying how many. Never rejects; no reconnect
   * afterwards.
   */
  async stop(drainMs: number = NOTIFICATIONS_DEFAULTS.stopDrainMs): Promise<void> {
    if (this.#state === 'stopped') {
      await this.#draining;
      return;
    }
    this.#setState('stopped');
    this.#clearTimer('reconnect');
    this.#clearConnectionTimers();
    const ws = this.#ws;
    this.#ws = null;
    const closed = ws ? closeSocket(ws, NOTIFICATIONS_DEFAULTS.closeWaitMs) : undefined;
    let timer: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      this.#draining.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), drainMs);
      }),
    ]);
    clearTimeout(timer);
    if (!drained) {
      const left = this.#queue.length - (this.#busy ? 1 : 0);
      if (left > 0) this.#log.warn({ dropped: left }, 'notifications stopped with events not yet handled');
      // The drain loop hands over nothing more; the event in hand finishes.
      this.#dropRest = true;
    }
    await Promise.all([this.#draining, closed]);
  }

  #setState(state: NotifyConnectionState): void {
    if (this.#state === state) return;
    this.#state = state;
    try {
      this.#onState?.(state);
    } catch (error) {
      this.#log.warn({ err: this.#safeError(error) }, 'notifications onState threw');
    }
  }

  #frameSeen(kind: string): void {
    try {
      this.#onFrame?.(kind);
    } catch (error) {
      this.#log.warn({ err: this.#safeError(error) }, 'notifications onFrame threw');
    }
  }

  #connect(): void {
    if (this.#state === 'stopped') return;
    this.#reconnectTimer = null;
    this.#setState('connecting');
    this.#attempts.push(this.#now());
    this.#readySince = null;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.#url, {
        maxPayload: this.#maxFrameBytes,
        handshakeTimeout: this.#helloTimeoutMs,
        perMessageDeflate: false,
      });
    } catch (error) {
      this.#log.error({ err: this.#safeError(error) }, 'notifications cannot open the WebSocket');
      this.#ended('cannot open', null);
      return;
    }
    this.#ws = ws;
    this.#paused = false;
    this.#helloTimer = setTimeout(() => this.#fail(ws, 'no hello in time'), this.#helloTimeoutMs);

    ws.on('open', () => {
      if (ws !== this.#ws) return;
      this.#send(ws, { event: 'auth', data: { token: this.#key } });
      this.#flow();
    });
    ws.on('message', (data, isBinary) => {
      if (ws !== this.#ws) return;
      this.#onMessage(ws, rawText(data, isBinary));
    });
    ws.on('close', (code, reason) => {
      this.#fail(ws, 'closed', code, reason.toString('utf8'));
    });
    ws.on('error', (error) => {
      this.#fail(ws, 'error', null, this.#safeError(error).message);
    });
  }

  #onMessage(ws: WebSocket, text: string): void {
    // Any frame shows the connection alive, as a pong does.
    this.#awaitingPong = false;
    this.#clearTimer('pong');
    const frame = parseNotifyFrame(text, this.#now());
    this.#frameSeen(frame.kind);
    switch (frame.kind) {
      case 'hello':
        if (this.#readySince !== null) return;
        this.#clearTimer('hello');
        this.#readySince = this.#now();
        this.#beforeHello = 0;
        this.#setState('ready');
        this.#log.info({ connection: frame.id }, 'notifications connected');
        this.#schedulePing(ws);
        return;
      case 'pong':
        this.#awaitingPong = false;
        this.#clearTimer('pong');
        return;
      case 'notify':
        this.#queue.push(frame.event);
        this.#flow();
        if (!this.#busy) {
          this.#busy = true;
          this.#draining = this.#drain();
        }
        return;
      case 'error': {
        if (this.#errorFrameWarn()) {
          this.#log.warn(
            {
              code: frame.code,
              message: frame.message === null ? null : this.#redact(frame.message),
              suppressed: this.#errorFramesSuppressed,
            },
            'notifications: the directory sent an error',
          );
          this.#errorFramesSuppressed = 0;
        } else {
          this.#errorFramesSuppressed++;
        }
        return;
      }
      case 'ignored':
      case 'invalid':
        this.#dropped++;
        this.#lastDropReason = frame.reason;
        if (this.#dropWarn()) {
          this.#log.warn(
            { dropped: this.#dropped, lastReason: this.#lastDropReason },
            'notifications: frames dropped (invalid or unknown)',
          );
          this.#dropped = 0;
        }
        return;
    }
  }

  #schedulePing(ws: WebSocket): void {
    this.#pingTimer = setTimeout(() => {
      this.#pingTimer = null;
      if (ws !== this.#ws) return;
      this.#send(ws, { event: 'ping', data: {} });
      if (!this.#awaitingPong) {
        this.#awaitingPong = true;
        this.#armPong(ws);
      }
      this.#schedulePing(ws);
    }, this.#pingEveryMs);
  }

  #armPong(ws: WebSocket): void {
    if (this.#paused || this.#pongTimer) return;
    this.#pongTimer = setTimeout(() => {
      this.#pongTimer = null;
      // Decided after the next poll phase: after an event loop held busy, the timers run before
      // the socket is read, and a pong waiting in its buffer would not count yet.
      setImmediate(() => {
        if (ws === this.#ws && this.#awaitingPong && !this.#paused) this.#fail(ws, 'no pong in time');
      });
    }, this.#pongTimeoutMs);
  }

  #send(ws: WebSocket, frame: unknown): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    // A failed send ends the socket; its close or error event does the rest.
    ws.send(JSON.stringify(frame), () => {});
  }

  /** Pause the socket while the queue is full, resume below half; the pong deadline follows. */
  #flow(): void {
    const ws = this.#ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    if (!this.#paused && this.#queue.length >= this.#maxQueued) {
      this.#paused = true;
      ws.pause();
      this.#clearTimer('pong');
    } else if (this.#paused && this.#queue.length < this.#maxQueued / 2) {
      this.#paused = false;
      ws.resume();
      if (this.#awaitingPong) this.#armPong(ws);
    }
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        // The events waiting, handed over together when the caller takes batches.
        const batch = this.#onEvents ? this.#queue.slice(0, this.#maxBatch) : [this.#queue[0]!];
        try {
          if (this.#onEvents) await this.#onEvents(batch);
          else await this.#onEvent(batch[0]!);
        } catch (error) {
          if (this.#handlerWarn()) {
            this.#log.warn(
              {
                err: this.#safeError(error),
                events: batch.length,
                type: batch[0]?.type,
                suppressed: this.#handlerFailuresSuppressed,
              },
              'notifications: onEvent threw; the event is skipped',
            );
            this.#handlerFailuresSuppressed = 0;
          } else {
            this.#handlerFailuresSuppressed++;
          }
        }
        this.#queue.splice(0, batch.length);
        // A turn of the event loop between events: a store that answers synchronously (SQLite)
        // would otherwise hand over the whole queue as one chain of promises, and nothing else
        // (a pong, an interaction) would run meanwhile.
        await new Promise((resolve) => setImmediate(resolve));
        if (this.#dropRest) {
          this.#queue.length = 0;
          break;
        }
        this.#flow();
      }
    } catch {
      // Only the logger could throw here: never let it become an unhandled rejection.
    } finally {
      this.#busy = false;
    }
  }

  /** The socket `ws` is done for: cut it, and (unless stopped) try again later. */
  #fail(ws: WebSocket, why: string, code: number | null = null, detail = ''): void {
    if (ws !== this.#ws) return;
    this.#ws = null;
    this.#clearConnectionTimers();
    try {
      ws.terminate();
    } catch {
      // terminate() on a socket that never opened may throw in older ws; it is gone either way.
    }
    this.#ended(why, code, detail);
  }

  #ended(why: string, code: number | null, detail = ''): void {
    if (this.#state === 'stopped') return;
    const now = this.#now();
    const wasReady = this.#readySince !== null;
    if (wasReady && now - (this.#readySince ?? now) >= NOTIFICATIONS_DEFAULTS.stableMs) this.#failures = 0;
    this.#readySince = null;
    this.#failures++;
    if (!wasReady) this.#beforeHello++;
    const suspect = this.#beforeHello >= NOTIFICATIONS_DEFAULTS.suspectKeyAfter;
    if (suspect && this.#suspectKeyWarn()) {
      this.#log.warn(
        { endedBeforeHello: this.#beforeHello },
        'notifications: connections keep ending before hello; the API key may be revoked or wrong (retrying at the max backoff)',
      );
    }
    const delay = this.#nextDelay(now, suspect);
    const context = { why, code, detail: this.#redact(detail).slice(0, 200), retryInMs: delay };
    if (wasReady && this.#lostWarn()) this.#log.warn(context, 'notifications connection lost; reconnecting');
    else this.#log.debug(context, 'notifications connection ended');
    this.#setState('backoff');
    this.#reconnectTimer = setTimeout(() => this.#connect(), delay);
  }

  /** Full jitter between the floor and the step (or the max, once the key is suspect), then the window. */
  #nextDelay(now: number, suspect: boolean): number {
    const step = suspect
      ? this.#maxMs
      : Math.min(this.#maxMs, this.#floorMs * 2 ** Math.min(30, Math.max(0, this.#failures - 1)));
    const jittered = suspect ? step : this.#floorMs + this.#random() * (step - this.#floorMs);
    this.#attempts = this.#attempts.filter((at) => now - at < WINDOW_MS);
    let windowWait = 0;
    if (this.#attempts.length >= this.#attemptsPer10s) {
      const oldest = this.#attempts[this.#attempts.length - this.#attemptsPer10s]!;
      windowWait = oldest + WINDOW_MS - now;
    }
    return Math.ceil(Math.max(this.#floorMs, jittered, windowWait));
  }

  #clearConnectionTimers(): void {
    this.#clearTimer('hello');
    this.#clearTimer('ping');
    this.#clearTimer('pong');
    this.#awaitingPong = false;
    this.#paused = false;
  }

  #clearTimer(which: 'reconnect' | 'hello' | 'ping' | 'pong'): void {
    switch (which) {
      case 'reconnect':
        if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
        this.#reconnectTimer = null;
        return;
      case 'hello':
        if (this.#helloTimer) clearTimeout(this.#helloTimer);
        this.#helloTimer = null;
        return;
      case 'ping':
        if (this.#pingTimer) clearTimeout(this.#pingTimer);
        this.#pingTimer = null;
        return;
      case 'pong':
        if (this.#pongTimer) clearTimeout(this.#pongTimer);
        this.#pongTimer = null;
        return;
    }
  }

  #redact(text: string): string {
    return this.#key.length > 0 && text.includes(this.#key) ? text.split(this.#key).join(REDACTED) : text;
  }

  /** An error as a log field with the key cut from its message and stack. */
  #safeError(error: unknown): { name: string; message: string; stack?: string } {
    if (error instanceof Error) {
      const out: { name: string; message: string; stack?: string } = {
        name: error.name,
        message: this.#redact(error.message),
      };
      if (error.stack) out.stack = this.#redact(error.stack);
      return out;
    }
    return { name: 'NonError', message: this.#redact(String(error)) };
  }
}

function positive(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

function rawText(data: WebSocket.RawData, isBinary: boolean): string {
  void isBinary;
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

/** Close with 1000 and wait for it, up to `waitMs`; then cut the socket. Never rejects. */
function closeSocket(ws: WebSocket, waitMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    ws.removeAllListeners();
    // A socket closed while still connecting emits an error: it must have a listener.
    ws.on('error', () => {});
    if (ws.readyState === WebSocket.CLOSED) {
      resolve();
      return;
    }
    const timer = setTimeout(() => {
      try {
        ws.terminate();
      } catch {
        // gone either way
      }
      resolve();
    }, waitMs);
    ws.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    try {
      if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
      else ws.close(1000);
    } catch {
      clearTimeout(timer);
      resolve();
    }
  });
}
