/**
 * What the gateway's thread (gateway-thread.ts) and its strategy (gateway-thread-strategy.ts) say
 * to each other beyond @discordjs/ws's own worker protocol (WorkerSendPayload and
 * WorkerReceivePayload, numbered ops): ours are named, so they never meet a number of theirs.
 */
import type { SessionInfo, WorkerData } from '@discordjs/ws';
import type { AcknowledgerOptions } from './acknowledge.js';
import type { Deferral, DeferralRules } from './deferral-rules.js';

/** The thread's data (its `init` message): @discordjs/ws's, the deferral table and the acknowledger's address. */
export interface GatewayThreadData extends WorkerData {
  rules: DeferralRules;
  /** Undefined: the thread defers nothing (no router to take its deferrals). */
  acknowledger: Pick<AcknowledgerOptions, 'api' | 'version' | 'userAgent'> | undefined;
  /**
   * Shared with the main thread: [0] becomes 1 when the bot shuts down, and the thread defers
   * nothing more. A flag and not a message: it holds from the moment it is set, so an interaction
   * that comes in after "shutting down" is always the main thread's to refuse.
   */
  stopped: Int32Array;
}

/**
 * A restart's shards resumed before the bot's modules have loaded (early-resume.ts): what a RESUME
 * needs and nothing else. The rest of the thread's data comes with `attach`.
 */
export interface EarlyResume {
  token: string;
  shardIds: number[];
  shardCount: number;
  /** The sessions to resume at once, by shard; the other shards wait for the strategy's Connect. */
  sessions: Record<number, SessionInfo>;
  /** The commands replayed meanwhile are deferred by this table (DEFERRAL_RULES, commands/definitions.ts)… */
  rules: DeferralRules;
  /** …at Discord's API root (DISCORD_API_URL; default discord.js's). */
  api: string | undefined;
}

/**
 * What the main thread says to the thread beyond @discordjs/ws's ops: the sessions restored from
 * the store, by shard (gateway-sessions.ts), before any Connect. The thread RESUMEs them without
 * asking the main thread, which is busy restoring the guilds meanwhile.
 */
export type ToGatewayThread =
  | { op: 'sessions'; sessions: Record<number, SessionInfo> }
  /**
   * The thread's data, its first message: the thread is started before the main thread knows it
   * (prestartGatewayThread), so that it loads its modules meanwhile.
   */
  | { op: 'init'; data: GatewayThreadData }
  /**
   * Or, as its first message: resume these sessions now. Until `go`, the thread keeps to itself
   * what it would tell the main thread (nobody there is listening yet), its deferrals included.
   */
  | { op: 'early'; resume: EarlyResume }
  /** After `early`: the thread's whole data, as `init` would have given it (the same shards). */
  | { op: 'attach'; data: GatewayThreadData }
  /**
   * After `attach`: the restored guilds are in discord.js; what the thread kept, the replay
   * included, may follow (in order, each command deferred on its way).
   */
  | { op: 'go' };

/** The thread sent this deferral (before the packet follows), then how it went. */
export type FromGatewayThread =
  | { op: 'deferral'; id: string; deferral: Deferral }
  | {
      op: 'deferred';
      id: string;
      error?: { message: string; status: number | undefined; code: number | undefined };
    };
