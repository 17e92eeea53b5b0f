/**
 * What the bot hooks into the gateway (client.ts makes it, bot.ts fills it, the strategy of
 * gateway-thread-strategy.ts reads it and sets its own parts): set before login, as the strategy
 * is built at login.
 */
import type { APIGatewaySessionStartLimit } from 'discord-api-types/v10';
import type { Deferral, DeferralRules } from './deferral-rules.js';
import type { GatewayWatch } from './gateway-health.js';
import type { SessionKeeping } from './gateway-sessions.js';
import type { GatewayThreadData } from './gateway-thread-protocol.js';
import type { PrestartedThread } from './gateway-thread-start.js';

export interface InteractionTap {
  /**
   * The deferral table and the acknowledger's address, for the thread; without them (a client
   * with no router, as the bench's memory and ready scenarios make) the thread defers nothing.
   */
  deferrals?: { rules: DeferralRules; acknowledger: NonNullable<GatewayThreadData['acknowledger']> };
  /** The thread sent a deferral; `done` settles with its outcome (an AcknowledgeError when refused). */
  onDeferral?: (id: string, deferral: Deferral, done: Promise<void>) => void;
  /** An interaction's packet (`d`) the thread did not defer, just before discord.js gets it. */
  onInteraction?: (packet: unknown) => void;
  /** discord.js threw on an event, or the thread reported an error. */
  onError?: (err: unknown, event: string) => void;
  /**
   * Discord's identify budget (`session_start_limit` of GET /gateway/bot) each time @discordjs/ws
   * fetched it afresh before starting the shards.
   */
  onSessionStartLimit?: (limit: APIGatewaySessionStartLimit) => void;
  /**
   * Asked before the shards start, with the budget as Discord gave it and how many shards would
   * identify: a reason not to start (an IdentifyBudgetError then fails the login), or undefined.
   */
  identifyBudgetRefusal?: (limit: APIGatewaySessionStartLimit, shards: number) => string | undefined;
  /**
   * Asked before each identify, before the throttler's turn: waits while the shard identifies too
   * often or the day's budget is at its floor (identify-pace.ts); rejects when `signal` aborts.
   */
  beforeIdentify?: (shardId: number, signal: AbortSignal) => Promise<void>;
  /** The thread ended without being asked to: the shards are gone with it. */
  onThreadLost?: (err: Error) => void;
  /** Set by the strategy: the thread defers nothing more (the bot is shutting down). */
  stopDeferring?: () => void;
  /**
   * The sessions kept in the store (gateway-sessions.ts): restored before the shards connect,
   * told of every change. Without it, sessions live as long as the process (discord.js's way).
   */
  sessions?: SessionKeeping;
  /** Each shard's closes and sessions, for the operator's one line per state change (gateway-health.ts). */
  gateway?: GatewayWatch;
  /** A shard began a session: READY after an IDENTIFY, or RESUMED (each as Discord sent it). */
  onSession?: (shardId: number, kind: 'identified' | 'resumed') => void;
  /**
   * Set by the strategy: closes the shards for a restart, their sessions kept resumable (close
   * code 4200, not 1000), and ends the thread. discord.js's own destroy afterwards has nothing left.
   */
  suspend?: () => Promise<void>;
  /**
   * A thread started early (gateway-thread-start.ts), for the first spawn to take: resuming the
   * saved sessions already, on a restart (app/early-resume.ts).
   */
  prestarted?: PrestartedThread;
}
