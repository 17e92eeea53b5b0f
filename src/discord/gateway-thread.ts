/**
 * The gateway's thread: the bot's shards (@discordjs/ws's WorkerBootstrapper) and the first
 * response to each slash command, away from the main thread. Started by GatewayThreadStrategy
 * (gateway-thread-strategy.ts), which gives it the strategy's options, the deferral table and
 * the acknowledger's address in `workerData`.
 *
 * Why a thread: the deferral must reach Discord within 3 s, and the bot wants it within tens of
 * milliseconds; on the main thread it waits for whatever the event loop is doing when the packet
 * arrives (building interactions, the store's writes, rendering, a garbage collection of the
 * heap every interaction in flight keeps). Measured under bench scenario 2 (200 /up in flight),
 * the main thread's event-loop delay p99 was 45 ms, and the first response's p99 followed it.
 * Here a packet is read, its deferral sent and the packet passed on, on a loop that does nothing
 * else and a heap that holds nothing else.
 *
 * For each INTERACTION_CREATE of a command in the table: the deferral is sent (acknowledge.ts),
 * the main thread is told (`deferral`), then gets the packet, then the outcome (`deferred`).
 * Everything else goes through as @discordjs/ws's own worker sends it.
 */
import { type MessagePort, parentPort } from 'node:worker_threads';
import {
  type IContextFetchingStrategy,
  type SessionInfo,
  WebSocketShard,
  WebSocketShardEvents,
  WorkerBootstrapper,
  WorkerContextFetchingStrategy,
  type WorkerData,
  WorkerReceivePayloadOp,
} from '@discordjs/ws';
import { GatewayDispatchEvents } from 'discord-api-types/v10';
import { AcknowledgeError, InteractionAcknowledger } from './acknowledge.js';
import { applicationCommandDeferral, type InteractionPacket } from './deferral-rules.js';
import type { FromGatewayThread, GatewayThreadData, ToGatewayThread } from './gateway-thread-protocol.js';

function mainThread(): MessagePort {
  if (!parentPort) throw new Error('gateway-thread.ts runs as a worker thread');
  return parentPort;
}
const port = mainThread();

/**
 * Everything this thread says to the main thread, @discordjs/ws's own messages included, goes
 * out in batches: what one turn of this thread's event loop produced (a burst's dispatches, their
 * deferrals, the shards' session updates) leaves as one message, in order, once the turn is done.
 * One message each cost this thread more than the dispatch itself under a burst (each is a
 * serialization and a wake-up of the main thread). The port's postMessage is replaced, here only,
 * so that WorkerBootstrapper's and WorkerContextFetchingStrategy's messages keep their place
 * among ours. The main thread takes a batch as an array (gateway-thread-strategy.ts).
 */
const outbox: unknown[] = [];
const postNow = port.postMessage.bind(port);
port.postMessage = (message: unknown): void => {
  outbox.push(message);
  if (outbox.length === 1) setImmediate(flush);
};
function flush(): void {
  if (outbox.length > 0) postNow(outbox.splice(0));
}
/**
 * The thread is started before the main thread knows what to give it (gateway-thread-strategy.ts,
 * prestartGatewayThread): by then it has loaded its modules, on a core of its own, while the main
 * thread started. Its data comes as its first message.
 */
const data = await new Promise<GatewayThreadData>((resolve) => {
  const onInit = (message: ToGatewayThread | { op?: unknown }): void => {
    if (message.op !== 'init') return;
    port.off('message', onInit);
    resolve((message as Extract<ToGatewayThread, { op: 'init' }>).data);
  };
  port.on('message', onInit);
});
const acknowledger = data.acknowledger && new InteractionAcknowledger(data.acknowledger);

const post = (message: FromGatewayThread): void => port.postMessage(message);

/** Sends the packet's deferral if it is a command of the table; tells the main thread first. */
function defer(packet: InteractionPacket): void {
  if (!acknowledger || Atomics.load(data.stopped, 0) === 1) return;
  const { id, token } = packet;
  if (typeof id !== 'string' || typeof token !== 'string') return;
  const deferral = applicationCommandDeferral(packet, data.rules);
  if (!deferral) return;
  acknowledger.send(id, token, deferral);
  const sent = acknowledger.take(id);
  post({ op: 'deferral', id, deferral });
  sent?.done.then(
    () => post({ op: 'deferred', id }),
    (err: unknown) =>
      post({
        op: 'deferred',
        id,
        error: {
          message: err instanceof Error ? err.message : String(err),
          status: err instanceof AcknowledgeError ? err.status : undefined,
          code: err instanceof AcknowledgeError ? err.code : undefined,
        },
      }),
  );
}

/**
 * The shards' sessions, kept here. @discordjs/ws's worker asks the main thread for its shard's
 * session at every dispatch (to note the sequence), and waits for the answer before passing the
 * dispatch on: each packet would wait for the main thread's event loop, the very wait this
 * thread is for. Here the main thread is asked once per shard (at its first connection) and told
 * of every change, without waiting.
 */
class SessionsKeptHere implements IContextFetchingStrategy {
  readonly #main: WorkerContextFetchingStrategy;
  readonly #sessions = new Map<number, SessionInfo | null>();

  constructor(readonly options: WorkerData) {
    this.#main = new WorkerContextFetchingStrategy(options);
  }

  /** Sessions restored from the store (before any Connect): resumed without asking. */
  restored(sessions: Record<number, SessionInfo>): void {
    for (const [shardId, session] of Object.entries(sessions)) this.#sessions.set(Number(shardId), session);
  }

  async retrieveSessionInfo(shardId: number): Promise<SessionInfo | null> {
    if (this.#sessions.has(shardId)) return this.#sessions.get(shardId) ?? null;
    const session = await this.#main.retrieveSessionInfo(shardId);
    if (!this.#sessions.has(shardId)) this.#sessions.set(shardId, session);
    return this.#sessions.get(shardId) ?? null;
  }

  updateSessionInfo(shardId: number, session: SessionInfo | null): void {
    this.#sessions.set(shardId, session);
    this.#main.updateSessionInfo(shardId, session);
  }

  waitForIdentify(shardId: number, signal: AbortSignal): Promise<void> {
    return this.#main.waitForIdentify(shardId, signal);
  }
}

/** @discordjs/ws's worker, with the sessions kept here and each command deferred before its packet is passed on. */
class GatewayThread extends WorkerBootstrapper {
  /** @discordjs/ws reads `workerData`, which this thread is started without: the data is its first message. */
  protected override readonly data: GatewayThreadData;

  constructor(data: GatewayThreadData) {
    super();
    this.data = data;
  }

  async start(): Promise<void> {
    const context = new SessionsKeptHere(this.data);
    port.on('message', (message: ToGatewayThread | { op?: unknown }) => {
      if (message.op === 'sessions')
        context.restored((message as Extract<ToGatewayThread, { op: 'sessions' }>).sessions);
    });
    const forwarded = Object.values(WebSocketShardEvents).filter((e) => e !== WebSocketShardEvents.Dispatch);
    for (const shardId of this.data.shardIds) {
      const shard = new WebSocketShard(context, shardId);
      for (const event of forwarded) {
        (shard.on as (event: string, listener: (payload: unknown) => void) => void)(event, (payload) => {
          port.postMessage({ op: WorkerReceivePayloadOp.Event, event, data: payload, shardId });
        });
      }
      shard.on(WebSocketShardEvents.Dispatch, (event) => {
        if (event.data.t === GatewayDispatchEvents.InteractionCreate)
          defer(event.data.d as InteractionPacket);
        port.postMessage({
          op: WorkerReceivePayloadOp.Event,
          event: WebSocketShardEvents.Dispatch,
          data: event,
          shardId,
        });
      });
      this.shards.set(shardId, shard);
    }
    this.setupThreadEvents();
    port.postMessage({ op: WorkerReceivePayloadOp.WorkerReady });
  }
}

await new GatewayThread(data).start();
