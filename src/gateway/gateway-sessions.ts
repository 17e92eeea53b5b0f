/**
 * Gateway sessions that outlive the process (issue 26). Each shard's session (its id, last
 * sequence and resume address) is kept in the store with a snapshot of the shard's guilds, both
 * written together every few seconds and when the process stops, so that the sequence and the
 * snapshot always say the same moment. The next process (this host's, or the host that takes the
 * shards over) restores the snapshot into discord.js and RESUMEs: Discord replays what came after
 * that sequence, and no IDENTIFY is spent.
 *
 * Why a snapshot: a session resumed in a new process gets no READY and no GUILD_CREATEs, only what
 * was missed, and discord.js would start with no guilds (a statistics post of 0 servers, reports
 * without channel names). The snapshot is replayed to discord.js as the READY and GUILD_CREATEs it
 * would have had (guild-snapshot.ts), each marked RESTORED so that nothing here counts it as news.
 *
 * A session Discord refuses (too old, or ended) falls back to identifying, through the identify
 * turns as any other: the READY that follows then says which restored guilds the bot is no longer
 * in, and they are deleted as a leave (`identified`). A snapshot older than `maxAgeMs` is not
 * restored at all: the shard identifies with nothing restored, as it always did.
 */
import type { SessionInfo } from '@discordjs/ws';
import { type Client, Events, GatewayDispatchEvents } from 'discord.js';
import type { Logger } from '../log/logger.js';
import type { GatewaySave, GatewaySessionRepository, GatewaySnapshot } from '../store/index.js';
import { PeriodicTask } from '../tasks/periodic.js';
import type { ChannelNames } from './channel-names.js';
import { type GuildPacket, guildPacket, unavailablePacket } from './guild-snapshot.js';
import { isPayload, loadSaved, parsed, resumable, SESSION_RESTORE_MAX_AGE_MS } from './saved-sessions.js';

/** Marks a dispatch this module made from the store (set on its `d`), not one Discord sent. */
export const RESTORED: unique symbol = Symbol('restored from the store');

/** A dispatch to hand discord.js as if the shard had received it. */
export interface RestoredDispatch {
  t: GatewayDispatchEvents.Ready | GatewayDispatchEvents.GuildCreate | GatewayDispatchEvents.GuildDelete;
  s: number;
  d: Record<string, unknown> & { [RESTORED]: true };
}

/** A shard's session to resume, and the dispatches that rebuild its guilds first. */
export interface RestoredShard {
  session: SessionInfo;
  dispatches: RestoredDispatch[];
}

/** What the gateway's strategy asks of the sessions (gateway-thread-strategy.ts). */
export interface SessionKeeping {
  /** Before the shards connect: the sessions to resume, by shard. Never throws (none then). */
  restore(shardIds: readonly number[], shardCount: number): Promise<Map<number, RestoredShard>>;
  /** A shard's session changed (a new one, its sequence, or none: invalid). */
  update(shardId: number, session: SessionInfo | null): void;
  /** The shard resumed: what was restored of it stands. */
  resumed(shardId: number): void;
  /**
   * The shard identified (its READY lists `guildIds`): the restored guilds it no longer has, as
   * GUILD_DELETEs for discord.js (a leave while the bot was down).
   */
  identified(shardId: number, guildIds: ReadonlySet<string>): RestoredDispatch[];
}

export interface GatewaySessionsOptions {
  repository: Pick<GatewaySessionRepository, 'load' | 'save'>;
  client: Client;
  channels: Pick<ChannelNames, 'guildChannels'>;
  logger: Logger;
  now?: () => number;
  /** How often what changed is saved (default SESSION_SAVE_EVERY_MS). */
  saveEveryMs?: number;
  /** Older snapshots are not restored (default SESSION_RESTORE_MAX_AGE_MS). */
  maxAgeMs?: number;
  /**
   * The shards this process will run, when the configuration says (not with SHARD_COUNT=auto):
   * their sessions are read from `start()` on, while the rest of the process starts, rather than
   * when the shards are about to connect. `loaded`: read already (by the entry point, which
   * resumed them at once: early-resume.ts), not read again.
   */
  expected?: { shardIds: readonly number[]; shardCount: number; loaded?: Map<number, GatewaySnapshot> };
}

/**
 * Cheap enough to run often (a row per shard and one per changed guild, in one transaction), and
 * what a `kill -9` may have the next process replay again at most.
 */
export const SESSION_SAVE_EVERY_MS = 5_000;

/** The dispatches that change what a snapshot holds: each marks its guild for the next save. */
const GUILD_EVENTS = [
  GatewayDispatchEvents.GuildCreate,
  GatewayDispatchEvents.GuildUpdate,
  GatewayDispatchEvents.GuildDelete,
  GatewayDispatchEvents.ChannelCreate,
  GatewayDispatchEvents.ChannelUpdate,
  GatewayDispatchEvents.ChannelDelete,
] as const;

interface ShardState {
  /** The latest session, as @discordjs/ws has it. */
  session: SessionInfo | null;
  /** What the store has: undefined, nothing known; null, no session. */
  savedSessionId: string | null | undefined;
  savedSequence: number;
  /** Guilds changed since the last save. */
  dirty: Set<string>;
  /** Guild ids restored, until the shard resumes or identifies. */
  restored: Set<string> | undefined;
}

function shardsKey(shardIds: readonly number[], shardCount: number): string {
  return `${[...shardIds].sort((a, b) => a - b).join(',')}/${shardCount}`;
}

function restored(t: RestoredDispatch['t'], s: number, d: Record<string, unknown>): RestoredDispatch {
  return { t, s, d: { ...d, [RESTORED]: true } };
}

export class GatewaySessions implements SessionKeeping {
  readonly #o: GatewaySessionsOptions;
  readonly #now: () => number;
  readonly #shards = new Map<number, ShardState>();
  /** What READY said of the bot ({user, application}), as JSON: restored with every session. */
  #identity: string | undefined;
  #saving: Promise<void> = Promise.resolve();
  /** The saves every `saveEveryMs`, on the background engine (started with the other tasks). */
  readonly task: PeriodicTask;
  #failing = false;
  #closed = false;
  /** The expected shards' sessions, being read since start(). */
  #prefetched: { key: string; loaded: Promise<Map<number, GatewaySnapshot>> } | undefined;

  constructor(options: GatewaySessionsOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.task = new PeriodicTask({
      name: 'gateway sessions',
      everyMs: options.saveEveryMs ?? SESSION_SAVE_EVERY_MS,
      firstDelayMs: options.saveEveryMs ?? SESSION_SAVE_EVERY_MS,
      run: () => this.save(),
      failure: 'the gateway sessions could not be saved',
      logger: options.logger,
    });
  }

  /** Follows the guilds' changes and reads the expected sessions (the saves are `task`'s). */
  start(): void {
    const { client, expected } = this.#o;
    if (expected && !this.#prefetched) {
      const loaded = expected.loaded
        ? Promise.resolve(expected.loaded)
        : this.#load(expected.shardIds, expected.shardCount);
      // Awaited by restore(); a failure is said there.
      loaded.catch(() => undefined);
      this.#prefetched = { key: shardsKey(expected.shardIds, expected.shardCount), loaded };
    }
    client.ws.on(GatewayDispatchEvents.Ready, (data: unknown) => {
      if (!isPayload(data) || data[RESTORED]) return;
      this.#identity = JSON.stringify({ user: data.user, application: data.application });
    });
    for (const event of GUILD_EVENTS) {
      client.ws.on(event, (data: unknown, shardId: number) => {
        if (!isPayload(data) || data[RESTORED]) return;
        const guildId = event.startsWith('GUILD_') ? data.id : data.guild_id;
        if (typeof guildId === 'string') this.#state(shardId).dirty.add(guildId);
      });
    }
    // A new session is saved as soon as its shard has its guilds: a crash right after a start
    // resumes too, without waiting for the next save.
    client.on(Events.ShardReady, () => void this.save());
  }

  async restore(shardIds: readonly number[], shardCount: number): Promise<Map<number, RestoredShard>> {
    const out = new Map<number, RestoredShard>();
    const started = performance.now();
    let loaded: Map<number, GatewaySnapshot>;
    const prefetched = this.#prefetched;
    this.#prefetched = undefined;
    try {
      loaded =
        prefetched?.key === shardsKey(shardIds, shardCount)
          ? await prefetched.loaded
          : await this.#load(shardIds, shardCount);
    } catch (err) {
      this.#o.logger.warn({ err }, 'the saved gateway sessions could not be read: the shards identify');
      return out;
    }
    for (const [shardId, saved] of loaded) {
      const readable = resumable(shardId, shardCount, saved);
      if (!readable) {
        this.#o.logger.warn({ shardId }, 'a saved gateway session is unreadable: the shard identifies');
        continue;
      }
      const { session, guilds } = saved;
      const { identity, session: info } = readable;
      const packets = guilds
        .map(parsed)
        .filter((p): p is GuildPacket => p !== undefined && typeof p.id === 'string');
      const s = session.sequence;
      const dispatches = [
        restored(GatewayDispatchEvents.Ready, s, {
          v: 10,
          user: identity.user,
          application: identity.application,
          guilds: packets.map((p) => unavailablePacket(p.id)),
          session_id: session.sessionId,
          resume_gateway_url: session.resumeUrl,
          shard: [shardId, shardCount],
        }),
        // An unavailable guild is said so as Discord would (discord.js then stops waiting for it).
        ...packets.map((p) =>
          p.unavailable === true
            ? restored(GatewayDispatchEvents.GuildDelete, s, p)
            : restored(GatewayDispatchEvents.GuildCreate, s, p),
        ),
      ];
      out.set(shardId, { session: info, dispatches });
      this.#identity ??= session.identity;
      const state = this.#state(shardId);
      state.session = info;
      state.savedSessionId = info.sessionId;
      state.savedSequence = s;
      state.restored = new Set(packets.map((p) => p.id));
    }
    if (out.size > 0)
      this.#o.logger.info(
        {
          shards: [...out.keys()],
          guilds: [...out.values()].reduce((n, r) => n + r.dispatches.length - 1, 0),
          readMs: Math.round(performance.now() - started),
        },
        'gateway sessions read from the store: resuming them',
      );
    return out;
  }

  #load(shardIds: readonly number[], shardCount: number): Promise<Map<number, GatewaySnapshot>> {
    return loadSaved(
      this.#o.repository,
      { shardIds, shardCount },
      this.#now(),
      this.#o.maxAgeMs ?? SESSION_RESTORE_MAX_AGE_MS,
    );
  }

  update(shardId: number, session: SessionInfo | null): void {
    this.#state(shardId).session = session;
  }

  /** Some shard restored from the store has neither resumed nor identified yet. */
  resuming(): boolean {
    for (const state of this.#shards.values()) if (state.restored) return true;
    return false;
  }

  resumed(shardId: number): void {
    this.#state(shardId).restored = undefined;
  }

  identified(shardId: number, guildIds: ReadonlySet<string>): RestoredDispatch[] {
    const state = this.#state(shardId);
    const before = state.restored;
    state.restored = undefined;
    if (!before) return [];
    return [...before]
      .filter((id) => !guildIds.has(id))
      .map((id) => restored(GatewayDispatchEvents.GuildDelete, 0, { id }));
  }

  /**
   * Saves each shard's session and the guilds changed since the last save, in one transaction.
   * Never throws: a failed save is logged and its changes are saved with the next one.
   */
  save(): Promise<void> {
    this.#saving = this.#saving.then(() =>
      this.#saveNow().catch((err: unknown) => {
        // Not expected (#saveNow catches what it knows): the chain of saves must go on all the same.
        this.#o.logger.warn({ err }, 'the gateway sessions could not be saved');
      }),
    );
    return this.#saving;
  }

  /** The last save (the shards are closed by now): nothing is saved after it. */
  async close(): Promise<void> {
    if (this.#closed) return this.#saving;
    await this.save();
    this.#closed = true;
  }

  #state(shardId: number): ShardState {
    let state = this.#shards.get(shardId);
    if (!state) {
      state = {
        session: null,
        savedSessionId: undefined,
        savedSequence: -1,
        dirty: new Set(),
        restored: undefined,
      };
      this.#shards.set(shardId, state);
    }
    return state;
  }

  async #saveNow(): Promise<void> {
    if (this.#closed) return;
    const saves: GatewaySave[] = [];
    const taken: { state: ShardState; dirty: Set<string>; sessionId: string | null; sequence: number }[] = [];
    for (const [shardId, state] of this.#shards) {
      let save: GatewaySave | undefined;
      try {
        save = this.#saveOf(shardId, state);
      } catch (err) {
        // Left as it is (its changes still marked) for the next save; the other shards go on.
        this.#o.logger.warn({ err, shardId }, "a shard's gateway session could not be written");
        continue;
      }
      if (!save) continue;
      saves.push(save);
      taken.push({
        state,
        dirty: state.dirty,
        sessionId: save.session?.sessionId ?? null,
        sequence: save.session?.sequence ?? -1,
      });
      state.dirty = new Set();
    }
    if (saves.length === 0) return;
    try {
      await this.#o.repository.save(saves);
      for (const { state, sessionId, sequence } of taken) {
        state.savedSessionId = sessionId;
        state.savedSequence = sequence;
      }
      if (this.#failing) this.#o.logger.info('the gateway sessions are saved again');
      this.#failing = false;
    } catch (err) {
      for (const { state, dirty } of taken) for (const id of dirty) state.dirty.add(id);
      if (!this.#failing)
        this.#o.logger.warn({ err }, 'the gateway sessions could not be saved; trying again');
      this.#failing = true;
    }
  }

  /** What to save of a shard, or undefined when the store has it already. */
  #saveOf(shardId: number, state: ShardState): GatewaySave | undefined {
    const session = state.session;
    if (!session) {
      if (state.savedSessionId === null) return undefined;
      return { shardId, session: null, replace: true, guilds: [], gone: [] };
    }
    // Neither READY seen nor a session restored: nothing to restore the bot's user from.
    if (this.#identity === undefined) return undefined;
    const replace = state.savedSessionId !== session.sessionId;
    if (!replace && state.dirty.size === 0 && state.savedSequence === session.sequence) return undefined;
    const cache = this.#o.client.guilds.cache;
    const ids = replace
      ? [...cache.values()].filter((g) => g.shardId === shardId).map((g) => g.id)
      : [...state.dirty];
    const guilds: GatewaySave['guilds'] = [];
    const gone: string[] = [];
    for (const id of ids) {
      const guild = cache.get(id);
      if (guild && guild.shardId === shardId)
        guilds.push({ guildId: id, packet: JSON.stringify(guildPacket(guild, this.#o.channels)) });
      else gone.push(id);
    }
    return {
      shardId,
      session: {
        shardId,
        shardCount: session.shardCount,
        sessionId: session.sessionId,
        sequence: session.sequence,
        resumeUrl: session.resumeURL,
        identity: this.#identity,
        savedAt: this.#now(),
      },
      replace,
      guilds,
      gone,
    };
  }
}
