/**
 * Discord's gateway as the operator sees it: one line when this process's shards start losing
 * their connections (warn) and one when they have all been connected again for STEADY_MS (info),
 * never one per close, reconnect or resume. Five sessions invalidated in a row used to write ten
 * "shard reconnecting" lines and nothing saying a session, and the events it would have had, were
 * lost; a connection whose heartbeats went unanswered was closed without a word above debug.
 *
 * What each disconnection was is read where @discordjs/ws tells it (the strategy hands over each
 * shard event, gateway-thread-strategy.ts): its close code, and before it the debug line that
 * names the reason: "Told to reconnect by Discord" (op 7), "Zombie connection" (a heartbeat not
 * acknowledged before the next), "Invalid session; will attempt to resume: false" (op 9). Its
 * debug lines are the only place these reasons exist; an unknown wording is counted as a close
 * by its code, never dropped.
 *
 * The end line says how the shards came back: sessions resumed (Discord replays what it sent
 * meanwhile: nothing missed) and sessions lost (identified anew: what Discord sent meanwhile,
 * interactions included, never arrives; each also spent one identify of the daily budget).
 */
import type { Logger } from '../log/logger.js';

/** All shards connected this long, with no disconnection, ends a trouble. */
export const STEADY_MS = 10_000;

/** Why a shard's connection ended. */
export type GatewayCause =
  | 'reconnect_requested'
  | 'session_invalidated'
  | 'heartbeat_unacknowledged'
  | 'connection_lost'
  | 'closed';

export const GATEWAY_CAUSES: readonly GatewayCause[] = [
  'reconnect_requested',
  'session_invalidated',
  'heartbeat_unacknowledged',
  'connection_lost',
  'closed',
];

const CAUSE_WORDS: Record<GatewayCause, string> = {
  reconnect_requested: 'Discord asked it to reconnect',
  session_invalidated:
    'Discord invalidated its session: it identifies anew, and what was sent meanwhile is lost',
  heartbeat_unacknowledged: 'its heartbeat went unacknowledged',
  connection_lost: 'the connection was lost',
  closed: 'the connection was closed',
};

export type GatewayState = 'steady' | 'troubled';

/** What the strategy tells (gateway-tap.ts): each shard's connection ending and sessions beginning. */
export interface GatewayWatch {
  /** A debug line of @discordjs/ws for a shard: where the reason of the next close is named. */
  debug(shardId: number, message: string): void;
  /** The shard's connection closed with `code`. */
  closed(shardId: number, code: number): void;
  /** The shard began a session: READY after an IDENTIFY, or RESUMED. */
  began(shardId: number, kind: 'identified' | 'resumed'): void;
  /** The shards are being closed on purpose (a stop or a restart): their closes are not trouble. */
  stopping(): void;
}

export interface GatewayHealthOptions {
  logger: Logger;
  /** After each change of state (the metrics: metrics.discordGateway). */
  onChange?: ((state: GatewayState) => void) | undefined;
  /** Each disconnection of a connected shard, by cause (the metrics). */
  onDisconnection?: ((cause: GatewayCause) => void) | undefined;
  steadyMs?: number;
  now?: () => number;
}

interface Trouble {
  since: number;
  /** Disconnections of connected shards, by cause. */
  causes: Map<GatewayCause, number>;
  shards: Set<number>;
  resumed: number;
  lost: number;
}

/** The reason @discordjs/ws names in a debug line, when it names one. */
export function causeOf(message: string): GatewayCause | undefined {
  if (/Reason: Told to reconnect by Discord/.test(message)) return 'reconnect_requested';
  if (/Reason: Zombie connection/.test(message)) return 'heartbeat_unacknowledged';
  if (/^Invalid session; will attempt to resume: false/m.test(message)) return 'session_invalidated';
  return undefined;
}

function secondsOf(ms: number): string {
  return (ms / 1000).toFixed(1);
}

/** The causes in the end line: "3 × session invalidated". */
const CAUSE_SHORT: Record<GatewayCause, string> = {
  reconnect_requested: 'reconnect asked',
  session_invalidated: 'session invalidated',
  heartbeat_unacknowledged: 'heartbeat unanswered',
  connection_lost: 'connection lost',
  closed: 'closed',
};

function countsOf(causes: Map<GatewayCause, number>): string {
  return [...causes].map(([cause, n]) => `${n} × ${CAUSE_SHORT[cause]}`).join(', ');
}

export class GatewayHealth implements GatewayWatch {
  readonly #log: Logger;
  readonly #onChange: GatewayHealthOptions['onChange'];
  readonly #onDisconnection: GatewayHealthOptions['onDisconnection'];
  readonly #steadyMs: number;
  readonly #now: () => number;
  /** Each shard seen connected once: whether it is connected now. */
  readonly #connected = new Map<number, boolean>();
  /** The reason named for a shard's next close. */
  readonly #named = new Map<number, GatewayCause>();
  #trouble: Trouble | undefined;
  #stopping = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: GatewayHealthOptions) {
    this.#log = options.logger;
    this.#onChange = options.onChange;
    this.#onDisconnection = options.onDisconnection;
    this.#steadyMs = options.steadyMs ?? STEADY_MS;
    this.#now = options.now ?? Date.now;
  }

  state(): GatewayState {
    return this.#trouble ? 'troubled' : 'steady';
  }

  debug(shardId: number, message: string): void {
    const cause = causeOf(message);
    if (cause) this.#named.set(shardId, cause);
  }

  closed(shardId: number, code: number): void {
    if (this.#stopping) return;
    const named = this.#named.get(shardId);
    this.#named.delete(shardId);
    const cause = named ?? (code === 1006 ? 'connection_lost' : 'closed');
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const wasConnected = this.#connected.get(shardId);
    if (wasConnected === undefined) return; // Never connected yet: the start-up's business.
    if (!wasConnected) {
      // Closed again while coming back: the same disconnection.
      this.#log.debug({ shardId, cause, code }, 'shard closed again while reconnecting');
      return;
    }
    this.#connected.set(shardId, false);
    this.#tell(() => this.#onDisconnection?.(cause));
    const trouble = this.#trouble;
    if (trouble) {
      trouble.causes.set(cause, (trouble.causes.get(cause) ?? 0) + 1);
      trouble.shards.add(shardId);
      this.#log.debug({ shardId, cause, code }, 'shard disconnected');
      return;
    }
    this.#trouble = {
      since: this.#now(),
      causes: new Map([[cause, 1]]),
      shards: new Set([shardId]),
      resumed: 0,
      lost: 0,
    };
    this.#log.warn(
      { discordGateway: 'troubled', shardId, cause, code },
      `Discord gateway trouble: shard ${shardId} disconnected (${CAUSE_WORDS[cause]}); it reconnects by itself`,
    );
    this.#tell(() => this.#onChange?.('troubled'));
  }

  began(shardId: number, kind: 'identified' | 'resumed'): void {
    const known = this.#connected.has(shardId);
    this.#connected.set(shardId, true);
    // A READY after having been connected: the session was lost (a RESUME would have kept it).
    const lost = kind === 'identified' && known;
    const trouble = this.#trouble;
    if (!trouble) {
      // Without a trouble told (a close while stopping, then a new start): nothing to tell.
      if (lost) this.#log.debug({ shardId }, 'shard identified anew');
      return;
    }
    if (lost) trouble.lost += 1;
    else if (kind === 'resumed') trouble.resumed += 1;
    this.#log.debug({ shardId, kind }, 'shard connected again');
    if ([...this.#connected.values()].every(Boolean)) this.#arm();
  }

  stopping(): void {
    this.#stopping = true;
    this.close();
  }

  /** Stops the timer (the bot stopping); the state stays as it is. */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#steady(), this.#steadyMs);
    this.#timer.unref();
  }

  #steady(): void {
    this.#timer = undefined;
    const trouble = this.#trouble;
    if (!trouble || this.#stopping || ![...this.#connected.values()].every(Boolean)) return;
    this.#trouble = undefined;
    // Up to the last shard's return: the steady wait after it is not part of the trouble.
    const lastedMs = Math.max(0, this.#now() - this.#steadyMs - trouble.since);
    const disconnections = [...trouble.causes.values()].reduce((a, b) => a + b, 0);
    const lostWords =
      trouble.lost > 0
        ? `${trouble.lost} session(s) lost (identified anew: what Discord sent meanwhile never arrived)`
        : 'no session lost';
    this.#log.info(
      {
        discordGateway: 'steady',
        was: 'troubled',
        lastedMs,
        disconnections,
        causes: Object.fromEntries(trouble.causes),
        shards: [...trouble.shards].sort((a, b) => a - b),
        resumed: trouble.resumed,
        sessionsLost: trouble.lost,
      },
      `Discord gateway steady again after ${secondsOf(lastedMs)} s: ${disconnections} disconnection(s) (${countsOf(trouble.causes)}), ${trouble.resumed} session(s) resumed, ${lostWords}`,
    );
    this.#tell(() => this.#onChange?.('steady'));
  }

  #tell(told: () => void): void {
    try {
      told();
    } catch {
      // The metrics never throw (metrics.ts); nothing here may break a shard's event.
    }
  }
}
