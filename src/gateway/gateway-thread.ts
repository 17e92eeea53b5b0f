/**
 * The gateway's thread: the bot's shards (@discordjs/ws's WorkerBootstrapper) and the first
 * response to each slash command, away from the main thread. Started early (gateway-thread-start.ts)
 * and taken by GatewayThreadStrategy (gateway-thread-strategy.ts), which gives it the strategy's
 * options, the deferral table and the acknowledger's address as its first message (`init`); or,
 * on a restart, given the saved sessions first (`early`, app/early-resume.ts): it resumes them
 * while the main thread loads the bot, keeps what it would tell the main thread, and gets the rest
 * of its data when the strategy takes it (`attach`), then lets what it kept go (`go`).
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
  DefaultWebSocketManagerOptions,
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
import { AcknowledgeError, deferralAddress, InteractionAcknowledger } from './acknowledge.js';
import { applicationCommandDeferral, type InteractionPacket } from './deferral-rules.js';
import type {
  EarlyResume,
  FromGatewayThread,
  GatewayThreadData,
  ToGatewayThread,
} from './gateway-thread-protocol.js';

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
/** Early (below): what this thread tells the main thread is kept until `go`. */
let kept = false;
const postNow = port.postMessage.bind(port);
port.postMessage = (message: unknown): void => {
  outbox.push(message);
  if (outbox.length === 1) setImmediate(flush);
};
function flush(): void {
  if (!kept && outbox.length > 0) postNow(outbox.splice(0));
}

type First = Extract<ToGatewayThread, { op: 'init' | 'early' }>;
/**
 * The thread is started before the main thread knows what to give it (gateway-thread-strategy.ts,
 * prestartGatewayThread): by then it has loaded its modules, on a core of its own, while the main
 * thread started. Its data comes as its first message: `init`, or `early` (a restart's sessions,
 * resumed before the main thread has loaded the bot: early-resume.ts), whose data comes later.
 */
const first = await new Promise<First>((resolve) => {
  const onFirst = (message: ToGatewayThread | { op?: unknown }): void => {
    if (message.op !== 'init' && message.op !== 'early') return;
    port.off('message', onFirst);
    resolve(message as First);
  };
  port.on('message', onFirst);
});
const early = first.op === 'early' ? first.resume : undefined;
kept = early !== undefined;
const data: GatewayThreadData = first.op === 'init' ? first.data : resumeOnly(first.resume);
let acknowledger = data.acknowledger && new InteractionAcknowledger(data.acknowledger);
/** Early: `attach` came, with the thread's whole data. */
let attach!: () => void;
const attached = new Promise<void>((resolve) => {
  attach = resolve;
});
if (!early) attach();

/**
 * What a RESUME reads of the data (@discordjs/ws's defaults, as discord.js leaves them), until
 * `attach` replaces it all. A shard that has to identify instead waits for `attach` first
 * (SessionsKeptHere), so nothing else of this is ever used.
 */
function resumeOnly(resume: EarlyResume): GatewayThreadData {
  const d = DefaultWebSocketManagerOptions;
  return {
    token: resume.token,
    shardIds: resume.shardIds,
    shardCount: resume.shardCount,
    intents: 0,
    version: d.version,
    encoding: d.encoding,
    compression: d.compression,
    handshakeTimeout: d.handshakeTimeout,
    helloTimeout: d.helloTimeout,
    readyTimeout: d.readyTimeout,
    largeThreshold: d.largeThreshold,
    initialPresence: d.initialPresence,
    identifyProperties: d.identifyProperties,
    gatewayInformation: {
      url: '',
      shards: resume.shardCount,
      session_start_limit: { total: 0, remaining: 0, reset_after: 0, max_concurrency: 1 },
    },
    rules: resume.rules,
    acknowledger: deferralAddress(resume.api),
    stopped: new Int32Array(new SharedArrayBuffer(4)),
  };
}

/** `attach`: the data the main thread would have given with `init`; the deferrals start. */
function attachData(given: GatewayThreadData): void {
  const before = data.acknowledger;
  Object.assign(data, given);
  const after = data.acknowledger;
  const same =
    before !== undefined &&
    after !== undefined &&
    before.api === after.api &&
    before.version === after.version &&
    before.userAgent === after.userAgent;
  if (!same) {
    // Its pool closes once the deferrals it is sending are done (undici's close).
    void acknowledger?.close().catch(() => undefined);
    acknowledger = after && new InteractionAcknowledger(after);
  }
  attach();
  postNow([{ op: WorkerReceivePayloadOp.WorkerReady }]);
}

/** `go`: what was kept leaves, in order (a command's deferral before its packet, as ever). */
function letGo(): void {
  kept = false;
  flush();
}

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
    if (early) this.restored(early.sessions);
  }

  /** Sessions restored from the store (before any Connect): resumed without asking. */
  restored(sessions: Record<number, SessionInfo>): void {
    for (const [shardId, session] of Object.entries(sessions)) this.#sessions.set(Number(shardId), session);
  }

  async retrieveSessionInfo(shardId: number): Promise<SessionInfo | null> {
    const saved = this.#sessions.get(shardId);
    if (saved) return saved;
    // No session to resume: the gateway's address and the IDENTIFY's options come with `attach`.
    await attached;
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

  /** Early: the shards resuming since the thread started, until the strategy's Connect takes each. */
  readonly #resuming = new Map<number, Promise<void>>();

  constructor(data: GatewayThreadData) {
    super();
    this.data = data;
  }

  /** A shard resuming early is connected already: its Connect waits for that connection. */
  protected override connect(shardId: number): Promise<void> {
    const resuming = this.#resuming.get(shardId);
    this.#resuming.delete(shardId);
    return resuming ?? super.connect(shardId);
  }

  async start(): Promise<void> {
    const context = new SessionsKeptHere(this.data);
    port.on('message', (message: ToGatewayThread | { op?: unknown }) => {
      const ours = message as ToGatewayThread;
      if (ours.op === 'sessions') context.restored(ours.sessions);
      else if (ours.op === 'attach') attachData(ours.data);
      else if (ours.op === 'go') letGo();
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
    if (!early) {
      port.postMessage({ op: WorkerReceivePayloadOp.WorkerReady });
      return;
    }
    // Ready when attached (attachData); the sessions resume now.
    for (const shardId of Object.keys(early.sessions).map(Number)) {
      const shard = this.shards.get(shardId);
      if (!shard) continue;
      const connecting = shard.connect();
      // Its outcome is the strategy's Connect's (connect above); until then it must not be unhandled.
      connecting.catch(() => undefined);
      this.#resuming.set(shardId, connecting);
    }
  }
}

await new GatewayThread(data).start();
