/**
 * The gateway's shards as @discordjs/ws's SimpleShardingStrategy runs them (every shard in this
 * process), with one difference: interactions come first. Each INTERACTION_CREATE is handed to
 * `onInteraction` (the router's acknowledger, which sends the deferral) the moment its shard has
 * read it, and discord.js gets that dispatch, and everything after it, once the event loop has
 * read what else had arrived meanwhile.
 *
 * Why: discord.js builds an interaction (its user, member, permissions, options ...) as soon as
 * it gets the packet. Under a burst (bench scenario 2: 200 interactions at once) the packets come
 * in faster than that, and a deferral sent from discord.js's own dispatch event waited for every
 * interaction that had arrived before it to be built: the last of 200 went out about 60 ms after
 * its packet on this project's machine. Acknowledged here, each deferral waits only for the
 * reading and acknowledging of the packets before it.
 *
 * What discord.js sees is unchanged: every event of every shard, in the order the shards emitted
 * them (once one is held, the events after it wait behind it), a moment later. They wait while
 * more interactions keep arriving, at most HOLD_MS, then go in slices of at most SLICE_MS so the
 * packets that arrive in between are acknowledged first. An error thrown while discord.js handles
 * one goes to `onError` and the rest still go.
 *
 * Passed to discord.js as its `ws.buildStrategy` option, the extension point @discordjs/ws
 * offers for this; built only from @discordjs/ws's exported pieces.
 */
import { Collection } from '@discordjs/collection';
import {
  type IShardingStrategy,
  type ManagerShardEventsMap,
  managerToFetchingStrategyOptions,
  SimpleContextFetchingStrategy,
  type WebSocketManager,
  WebSocketShard,
  type WebSocketShardDestroyOptions,
  WebSocketShardEvents,
  type WebSocketShardStatus,
} from '@discordjs/ws';
import { GatewayDispatchEvents, type GatewaySendPayload } from 'discord.js';

/** Where an interaction's raw packet (`d` of INTERACTION_CREATE) goes first. Set once the router exists. */
export interface InteractionTap {
  onInteraction?: (packet: unknown) => void;
  /** discord.js threw while handling a held event. */
  onError?: (err: unknown, event: string) => void;
}

/** A held event waits at most this long while interactions keep arriving. */
export const HOLD_MS = 50;
/** Held events are handed to discord.js this long at a time, then the event loop reads again. */
export const SLICE_MS = 4;

type ShardEvent = keyof ManagerShardEventsMap;
/** What a shard emits, with its id added as SimpleShardingStrategy adds it; a dispatch has `data`. */
type Received = { shardId: number; data?: { t?: unknown; d?: unknown } };
/** The manager's emit, without the per-event typing a loop over every event cannot satisfy. */
type Emit = (event: ShardEvent, payload: unknown) => void;
type Listen = (event: ShardEvent, listener: (payload: object) => void) => void;

export class InteractionsFirstStrategy implements IShardingStrategy {
  readonly #manager: WebSocketManager;
  readonly #shards = new Collection<number, WebSocketShard>();
  readonly #events: InteractionsFirst<ShardEvent, Received>;

  constructor(manager: WebSocketManager, tap: InteractionTap) {
    this.#manager = manager;
    const emit = manager.emit.bind(manager) as unknown as Emit;
    this.#events = new InteractionsFirst<ShardEvent, Received>({
      isInteraction: (event, payload) =>
        event === WebSocketShardEvents.Dispatch &&
        payload.data?.t === GatewayDispatchEvents.InteractionCreate,
      onInteraction: (payload) => tap.onInteraction?.(payload.data?.d),
      emit,
      onError: (err, event) => tap.onError?.(err, event),
    });
  }

  async spawn(shardIds: number[]): Promise<void> {
    const options = await managerToFetchingStrategyOptions(this.#manager);
    for (const shardId of shardIds) {
      const shard = new WebSocketShard(new SimpleContextFetchingStrategy(this.#manager, options), shardId);
      const listen = shard.on.bind(shard) as unknown as Listen;
      for (const event of Object.values(WebSocketShardEvents)) {
        listen(event, (payload) => this.#events.receive(event, { ...payload, shardId } as Received));
      }
      this.#shards.set(shardId, shard);
    }
  }

  async connect(): Promise<void> {
    await Promise.all(this.#shards.map((shard) => shard.connect()));
  }

  async destroy(options?: Omit<WebSocketShardDestroyOptions, 'recover'>): Promise<void> {
    await Promise.all(this.#shards.map((shard) => shard.destroy(options)));
    this.#shards.clear();
    // What a destroyed shard said last (its close, say) still reaches discord.js, in order.
    this.#events.flush();
  }

  async send(shardId: number, payload: GatewaySendPayload): Promise<void> {
    const shard = this.#shards.get(shardId);
    if (!shard) throw new RangeError(`Shard ${shardId} not found`);
    await shard.send(payload);
  }

  fetchStatus(): Collection<number, WebSocketShardStatus> {
    return this.#shards.mapValues((shard) => shard.status);
  }
}

export interface InteractionsFirstOptions<E, P> {
  isInteraction(event: E, payload: P): boolean;
  /** Called at once for an interaction, before it (or anything after it) is emitted. */
  onInteraction(payload: P): void;
  /** Hands an event on (to discord.js); what it throws goes to onError. */
  emit(event: E, payload: P): void;
  onError(err: unknown, event: E): void;
  now?: () => number;
  /** Schedules a callback for the event loop's check phase (setImmediate). */
  defer?: (callback: () => void) => void;
}

interface Held<E, P> {
  event: E;
  payload: P;
  at: number;
}

/**
 * The order of the strategy's events: an interaction is passed to onInteraction at once and held;
 * every event after a held one is held too, so `emit` sees them all in the order they came. Held
 * events wait while interactions keep arriving (at most HOLD_MS from the oldest), then go SLICE_MS
 * at a time, with a turn of the event loop in between for the packets that arrive meanwhile.
 */
export class InteractionsFirst<E, P> {
  readonly #options: InteractionsFirstOptions<E, P>;
  readonly #now: () => number;
  readonly #defer: (callback: () => void) => void;
  #held: Array<Held<E, P>> = [];
  #next = 0;
  #scheduled = false;
  /** Interactions received since the event loop last came round to the held events. */
  #arrived = 0;

  constructor(options: InteractionsFirstOptions<E, P>) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
    this.#defer = options.defer ?? ((callback) => setImmediate(callback));
  }

  /** Events held and not yet emitted. */
  get held(): number {
    return this.#held.length - this.#next;
  }

  receive(event: E, payload: P): void {
    const interaction = this.#options.isInteraction(event, payload);
    if (interaction) {
      this.#arrived += 1;
      try {
        this.#options.onInteraction(payload);
      } catch (err) {
        this.#options.onError(err, event);
      }
    }
    if (!interaction && this.held === 0) {
      this.#emit(event, payload);
      return;
    }
    this.#held.push({ event, payload, at: this.#now() });
    this.#schedule();
  }

  /** Emits everything held, now. */
  flush(): void {
    this.#release(Number.POSITIVE_INFINITY);
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#defer(() => {
      this.#scheduled = false;
      this.#turn();
    });
  }

  /** Holds on while interactions keep coming (bounded), else releases a slice. */
  #turn(): void {
    const oldest = this.#held[this.#next];
    if (!oldest) return;
    const now = this.#now();
    const arrived = this.#arrived;
    this.#arrived = 0;
    if (arrived > 0 && now - oldest.at < HOLD_MS) {
      this.#schedule();
      return;
    }
    this.#release(now + SLICE_MS);
    if (this.held > 0) this.#schedule();
  }

  #release(until: number): void {
    while (this.#next < this.#held.length) {
      const held = this.#held[this.#next] as Held<E, P>;
      this.#next += 1;
      this.#emit(held.event, held.payload);
      if (this.held > 0 && this.#now() >= until) break;
    }
    if (this.held === 0) {
      this.#held = [];
      this.#next = 0;
    }
  }

  #emit(event: E, payload: P): void {
    try {
      this.#options.emit(event, payload);
    } catch (err) {
      this.#options.onError(err, event);
    }
  }
}
