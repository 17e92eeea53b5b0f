/**
 * The bot's shards on a thread of their own (gateway-thread.ts), which also sends each slash
 * command's first response before the main thread has even read the packet. Passed to discord.js
 * as its `ws.buildStrategy`, the extension point @discordjs/ws offers for this.
 *
 * The main thread's half of @discordjs/ws's worker protocol (WorkerSendPayload /
 * WorkerReceivePayload), the half WorkerShardingStrategy implements, written again for three
 * reasons: WorkerShardingStrategy rethrows a thread's error from an event listener (an uncaught
 * exception that would end the bot), passes the thread nothing but its own options (the deferral
 * table and the acknowledger's address must get there), and has no way to pass our own messages
 * in either direction. Its ops and their meaning are kept as they are.
 *
 * What discord.js sees is unchanged: every event of every shard, in order. An interaction the
 * thread did not defer (a button) goes to `tap.onInteraction` just before discord.js gets it.
 */
import type { Worker } from 'node:worker_threads';
import { Collection } from '@discordjs/collection';
import {
  CloseCodes,
  type IIdentifyThrottler,
  type IShardingStrategy,
  managerToFetchingStrategyOptions,
  type WebSocketManager,
  type WebSocketShardDestroyOptions,
  WebSocketShardEvents,
  type WebSocketShardStatus,
  type WorkerReceivePayload,
  WorkerReceivePayloadOp,
  type WorkerSendPayload,
  WorkerSendPayloadOp,
} from '@discordjs/ws';
import {
  type APIGatewayBotInfo,
  GatewayDispatchEvents,
  type GatewaySendPayload,
} from 'discord-api-types/v10';
import { doneWithin } from '../time/bounded.js';
import { AcknowledgeError } from './acknowledge.js';
import type { RestoredShard } from './gateway-sessions.js';
import type { InteractionTap } from './gateway-tap.js';
import type { FromGatewayThread, GatewayThreadData, ToGatewayThread } from './gateway-thread-protocol.js';
import { resumesShards, startGatewayThread } from './gateway-thread-start.js';
import { IdentifyBudgetError } from './identify-budget.js';

/** A shard's destroy waits this long for the thread, then the thread is ended all the same. */
const DESTROY_BOUND_MS = 10_000;

type Emit = (event: string, payload: unknown) => void;
type FromThread = WorkerReceivePayload | FromGatewayThread;

export class GatewayThreadStrategy implements IShardingStrategy {
  readonly #manager: WebSocketManager;
  readonly #tap: InteractionTap;
  readonly #emit: Emit;
  #worker: Worker | undefined;
  #shardIds: number[] = [];
  #nonce = 0;
  readonly #connected = new Map<number, () => void>();
  readonly #destroyed = new Map<number, () => void>();
  readonly #statuses = new Map<number, (status: WebSocketShardStatus) => void>();
  readonly #identifying = new Map<number, AbortController>();
  readonly #deferrals = new Map<string, { resolve: () => void; reject: (err: Error) => void }>();
  /** Interactions the thread deferred whose packet has not come through yet. */
  readonly #deferredIds = new Set<string>();
  #throttler: Promise<IIdentifyThrottler> | undefined;
  /** Shared with every thread this strategy starts (GatewayThreadData.stopped). */
  readonly #stopped = new Int32Array(new SharedArrayBuffer(4));
  /** Closing for a restart: the sessions the closing drops are not news for the store. */
  #suspending = false;
  /** The sessions restored (spawn), whose guilds discord.js gets as the shards connect. */
  #restoring = new Map<number, RestoredShard>();
  /** The thread spawn took resumes early: it keeps its messages until connect's `go`. */
  #early = false;

  constructor(manager: WebSocketManager, tap: InteractionTap) {
    this.#manager = manager;
    this.#tap = tap;
    this.#emit = manager.emit.bind(manager) as unknown as Emit;
    tap.stopDeferring = () => Atomics.store(this.#stopped, 0, 1);
    tap.suspend = () => this.#suspend();
  }

  async spawn(shardIds: number[]): Promise<void> {
    const deferrals = this.#tap.deferrals ?? {
      rules: { commands: {}, userCommands: {} },
      acknowledger: undefined,
    };
    const options = await managerToFetchingStrategyOptions(this.#manager);
    this.#tellSessionStartLimit(options.gatewayInformation);
    // Every shard counts, a restored one too: Discord may refuse its session, and it identifies then.
    const refusal = this.#tap.identifyBudgetRefusal?.(
      options.gatewayInformation.session_start_limit,
      shardIds.length,
    );
    if (refusal !== undefined) throw new IdentifyBudgetError(refusal);
    const data: GatewayThreadData = {
      ...options,
      shardIds,
      rules: deferrals.rules,
      acknowledger: deferrals.acknowledger,
      stopped: this.#stopped,
    };
    const taken = this.#tap.prestarted?.take();
    // A thread resuming early resumes these very shards, or is of no use (ended, sessions kept).
    const early = taken?.early && resumesShards(taken.early, shardIds, options.shardCount);
    if (taken?.early && !early) await taken.worker.terminate();
    const worker = taken && (early || !taken.early) ? taken.worker : startGatewayThread();
    this.#send(early ? { op: 'attach', data } : { op: 'init', data }, worker);
    this.#early = early === true;
    this.#worker = worker;
    this.#shardIds = shardIds;
    const ready = new Promise<void>((resolve, reject) => {
      const early = (err: Error): void => reject(err);
      const earlyExit = (code: number): void => reject(new Error(`the gateway thread exited (${code})`));
      worker.once('error', early).once('exit', earlyExit);
      // The thread sends its messages in batches, in order (gateway-thread.ts).
      worker.on('message', (batch: FromThread[]) => {
        for (const message of batch) {
          if (message.op === WorkerReceivePayloadOp.WorkerReady) {
            worker.off('error', early).off('exit', earlyExit);
            resolve();
            continue;
          }
          this.#receive(message);
        }
      });
    });
    // Awaited below: a thread that fails meanwhile must not be an unhandled rejection until then.
    ready.catch(() => undefined);
    // The sessions are read from the store while the thread starts.
    const restored: Map<number, RestoredShard> =
      (await this.#tap.sessions?.restore(shardIds, options.shardCount)) ?? new Map();
    const sessions: Extract<ToGatewayThread, { op: 'sessions' }>['sessions'] = {};
    for (const [shardId, shard] of restored) {
      this.#manager.options.updateSessionInfo(shardId, shard.session);
      sessions[shardId] = shard.session;
    }
    this.#restoring = restored;
    // An early thread read the same sessions (saved-sessions.ts), and is resuming them.
    if (restored.size > 0 && !this.#early) this.#send({ op: 'sessions', sessions });
    await ready;
    worker.on('error', (err) => this.#tap.onError?.(err, 'gateway thread'));
    worker.on('exit', (code) => {
      if (this.#worker !== worker) return;
      this.#worker = undefined;
      this.#tap.onThreadLost?.(new Error(`the gateway thread exited (${code}) while its shards were up`));
    });
  }

  /**
   * A session from the store: discord.js gets it (its shard RESUMEs when the thread asks for it,
   * gateway-thread.ts), then the READY and guilds it would have had, before any replayed dispatch.
   */
  #restore(shardId: number, restored: RestoredShard): void {
    for (const dispatch of restored.dispatches) {
      const data = { op: 0, t: dispatch.t, s: dispatch.s, d: dispatch.d };
      try {
        if (dispatch.t === GatewayDispatchEvents.Ready)
          this.#emit(WebSocketShardEvents.Ready, { data: dispatch.d, shardId });
        this.#emit(WebSocketShardEvents.Dispatch, { data, shardId });
      } catch (err) {
        this.#tap.onError?.(err, `restored ${dispatch.t}`);
      }
    }
  }

  async #suspend(): Promise<void> {
    this.#suspending = true;
    await this.destroy({ code: CloseCodes.Resuming, reason: 'restarting: the session will be resumed' });
  }

  /** @discordjs/ws keeps what it fetched until the budget resets: the same object is not news. */
  #toldGatewayInformation: APIGatewayBotInfo | undefined;
  #tellSessionStartLimit(info: APIGatewayBotInfo): void {
    if (info === this.#toldGatewayInformation) return;
    this.#toldGatewayInformation = info;
    this.#tap.onSessionStartLimit?.(info.session_start_limit);
  }

  async connect(): Promise<void> {
    const connected = Promise.all(
      this.#shardIds.map(
        (shardId) =>
          new Promise<void>((resolve) => {
            this.#connected.set(shardId, resolve);
            this.#send({ op: WorkerSendPayloadOp.Connect, shardId });
          }),
      ),
    );
    // The thread connects and RESUMEs (deferring the replayed commands itself) while this thread
    // gives discord.js the restored guilds: what the thread sends meanwhile, the replay included,
    // is read once this is done, after the guilds, in order. Seconds for 10,000 guilds.
    const restoring = this.#restoring;
    this.#restoring = new Map();
    for (const [shardId, shard] of restoring) this.#restore(shardId, shard);
    // The guilds are back, the sessions not yet: discord.js marks a shard with a session as
    // resuming at its HELLO, and /readyz says not ready until RESUMED. Said now, not at the
    // connection's HELLO, so that the restored READY's "ready" does not stand meanwhile; and once
    // every shard is restored, so that discord.js has seen them all ready and is ready itself.
    for (const shardId of restoring.keys()) this.#emit(WebSocketShardEvents.Hello, { shardId });
    // An early thread kept what came meanwhile: it follows now, after the guilds.
    if (this.#early) this.#send({ op: 'go' });
    this.#early = false;
    await connected;
  }

  async destroy(given: Omit<WebSocketShardDestroyOptions, 'recover'> = {}): Promise<void> {
    const worker = this.#worker;
    if (!worker) return;
    this.#tap.gateway?.stopping();
    // discord.js's own destroy (code 1000) after a restart's close that is still under way.
    const options = this.#suspending ? { ...given, code: CloseCodes.Resuming } : given;
    const all = Promise.all(
      this.#shardIds.map(
        (shardId) =>
          new Promise<void>((resolve) => {
            this.#destroyed.set(shardId, resolve);
            this.#send({ op: WorkerSendPayloadOp.Destroy, shardId, options });
          }),
      ),
    );
    await doneWithin(all, DESTROY_BOUND_MS);
    this.#worker = undefined;
    await worker.terminate();
    this.#shardIds = [];
    for (const pending of this.#deferrals.values())
      pending.reject(new Error('the gateway thread was stopped'));
    this.#deferrals.clear();
    this.#deferredIds.clear();
  }

  send(shardId: number, payload: GatewaySendPayload): void {
    if (!this.#shardIds.includes(shardId)) throw new RangeError(`Shard ${shardId} not found`);
    this.#send({ op: WorkerSendPayloadOp.Send, shardId, payload });
  }

  async fetchStatus(): Promise<Collection<number, WebSocketShardStatus>> {
    const statuses = new Collection<number, WebSocketShardStatus>();
    // No thread (stopped, or lost on the way to the process's end): no shard to ask.
    if (!this.#worker) return statuses;
    await Promise.all(
      this.#shardIds.map(async (shardId) => {
        const nonce = ++this.#nonce;
        const status = await new Promise<WebSocketShardStatus>((resolve) => {
          this.#statuses.set(nonce, resolve);
          this.#send({ op: WorkerSendPayloadOp.FetchStatus, shardId, nonce });
        });
        statuses.set(shardId, status);
      }),
    );
    return statuses;
  }

  #send(payload: WorkerSendPayload | ToGatewayThread, worker = this.#worker): void {
    worker?.postMessage(payload);
  }

  /** A message from the thread. Never throws: what fails goes to tap.onError. */
  #receive(message: FromThread): void {
    try {
      this.#handle(message);
    } catch (err) {
      this.#tap.onError?.(err, typeof message.op === 'string' ? message.op : `thread op ${message.op}`);
    }
  }

  #handle(message: FromThread): void {
    switch (message.op) {
      case 'deferral':
        this.#deferredIds.add(message.id);
        this.#tap.onDeferral?.(
          message.id,
          message.deferral,
          new Promise<void>((resolve, reject) => this.#deferrals.set(message.id, { resolve, reject })),
        );
        return;
      case 'deferred': {
        const pending = this.#deferrals.get(message.id);
        this.#deferrals.delete(message.id);
        const error = message.error;
        if (!error) pending?.resolve();
        else pending?.reject(new AcknowledgeError(error.message, error.status, error.code));
        return;
      }
      case WorkerReceivePayloadOp.Event:
        this.#event(message.event, message.data as { data?: { t?: unknown; d?: unknown } }, message.shardId);
        return;
      case WorkerReceivePayloadOp.Connected:
        this.#connected.get(message.shardId)?.();
        this.#connected.delete(message.shardId);
        return;
      case WorkerReceivePayloadOp.Destroyed:
        this.#destroyed.get(message.shardId)?.();
        this.#destroyed.delete(message.shardId);
        return;
      case WorkerReceivePayloadOp.FetchStatusResponse:
        this.#statuses.get(message.nonce)?.(message.status);
        this.#statuses.delete(message.nonce);
        return;
      case WorkerReceivePayloadOp.RetrieveSessionInfo:
        void this.#answer('retrieving a session', async () => {
          const session = await this.#manager.options.retrieveSessionInfo(message.shardId);
          this.#send({ op: WorkerSendPayloadOp.SessionInfoResponse, nonce: message.nonce, session });
        });
        return;
      case WorkerReceivePayloadOp.UpdateSessionInfo:
        if (!this.#suspending) this.#tap.sessions?.update(message.shardId, message.session);
        void this.#answer('keeping a session', async () => {
          await this.#manager.options.updateSessionInfo(message.shardId, message.session);
        });
        return;
      case WorkerReceivePayloadOp.WaitForIdentify:
        void this.#identify(message.shardId, message.nonce);
        return;
      case WorkerReceivePayloadOp.CancelIdentify:
        this.#identifying.get(message.nonce)?.abort();
        this.#identifying.delete(message.nonce);
        return;
      default:
        return;
    }
  }

  #event(
    event: string,
    payload: { data?: { t?: unknown; d?: unknown }; message?: unknown; code?: unknown },
    shardId: number,
  ): void {
    const watch = this.#tap.gateway;
    if (watch && event === WebSocketShardEvents.Debug && typeof payload.message === 'string')
      watch.debug(shardId, payload.message);
    else if (watch && event === WebSocketShardEvents.Closed && typeof payload.code === 'number')
      watch.closed(shardId, payload.code);
    if (event === WebSocketShardEvents.Ready) this.#began(shardId, 'identified', payload.data);
    else if (event === WebSocketShardEvents.Resumed) this.#began(shardId, 'resumed', undefined);
    if (
      event === WebSocketShardEvents.Dispatch &&
      payload.data?.t === GatewayDispatchEvents.InteractionCreate
    ) {
      const packet = payload.data.d as { id?: unknown } | undefined;
      const id = typeof packet?.id === 'string' ? packet.id : undefined;
      if (id !== undefined && this.#deferredIds.delete(id)) {
        // Deferred by the thread already.
      } else {
        try {
          this.#tap.onInteraction?.(packet);
        } catch (err) {
          this.#tap.onError?.(err, event);
        }
      }
    }
    try {
      this.#emit(event, { ...payload, shardId });
    } catch (err) {
      this.#tap.onError?.(err, event);
    }
  }

  /**
   * A session began. After an IDENTIFY, the restored guilds the READY no longer lists are gone
   * (left while the bot was down): discord.js deletes them before it reads the READY.
   */
  #began(shardId: number, kind: 'identified' | 'resumed', ready: unknown): void {
    this.#tap.onSession?.(shardId, kind);
    this.#tap.gateway?.began(shardId, kind);
    const sessions = this.#tap.sessions;
    if (!sessions) return;
    if (kind === 'resumed') {
      sessions.resumed(shardId);
      return;
    }
    const listed = (ready as { guilds?: unknown } | undefined)?.guilds;
    const ids = new Set<string>();
    if (Array.isArray(listed))
      for (const guild of listed as { id?: unknown }[]) if (typeof guild?.id === 'string') ids.add(guild.id);
    for (const gone of sessions.identified(shardId, ids))
      this.#emit(WebSocketShardEvents.Dispatch, {
        data: { op: 0, t: gone.t, s: gone.s, d: gone.d },
        shardId,
      });
  }

  /** A shard may identify once the manager's throttler says so; a cancelled wait answers no. */
  async #identify(shardId: number, nonce: number): Promise<void> {
    const controller = new AbortController();
    this.#identifying.set(nonce, controller);
    let ok = false;
    try {
      await this.#tap.beforeIdentify?.(shardId, controller.signal);
      this.#throttler ??= Promise.resolve(this.#manager.options.buildIdentifyThrottler(this.#manager));
      await (await this.#throttler).waitForIdentify(shardId, controller.signal);
      ok = true;
    } catch (err) {
      if (!controller.signal.aborted) this.#tap.onError?.(err, 'waiting to identify');
    } finally {
      this.#identifying.delete(nonce);
    }
    this.#send({ op: WorkerSendPayloadOp.ShardIdentifyResponse, nonce, ok });
  }

  async #answer(what: string, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (err) {
      this.#tap.onError?.(err, what);
    }
  }
}
