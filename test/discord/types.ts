import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import type { GuildFixture, UserFixture } from './fixtures.js';

export interface StandInOptions {
  /** The bot token accepted on REST and gateway (default 'stand-in-token'). */
  token?: string;
  /** Default: a fresh snowflake. */
  applicationId?: string;
  botUser?: { id: string; username: string };
  /** Shard count returned by GET /gateway/bot (default 1). */
  shards?: number;
  /** Guilds the bot is in; spread over shards by (guild_id >> 22) % shardCount. */
  guilds?: GuildFixture[];
  /** Extra users GET /users/:id knows (the bot, guild owners and interaction users are known anyway). */
  users?: UserFixture[];
  /** Default 0 (an ephemeral port). */
  port?: number;
  /** HELLO heartbeat_interval (default 41250). */
  heartbeatIntervalMs?: number;
  /** session_start_limit.max_concurrency (default: the shard count, so all shards identify at once). */
  maxConcurrency?: number;
  /** Initial responses later than this after dispatch get 404 Unknown interaction, as on Discord (3000). */
  interactionDeadlineMs?: number;
  /** Artificial delay before every REST answer (default 0). */
  restLatencyMs?: number;
}

export interface RecordedFile {
  field: string;
  filename: string;
  contentType: string;
  size: number;
}

export interface RecordedRestRequest {
  method: string;
  /** Path below /api/v10, percent-decoded (e.g. '/webhooks/1/tok/messages/@original'). */
  path: string;
  /** Raw query string without '?' ('' when none). */
  query: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, raw string, undefined when empty; multipart → parsed payload_json. */
  body: unknown;
  /** Files of a multipart body. */
  files?: RecordedFile[];
  /** performance.now() when the request arrived. */
  at: number;
  /** The client's port: requests that share it came over the same connection. */
  connection?: number;
  /** Status the stand-in answered with. */
  status: number;
  /** The body the stand-in answered with (undefined for 204). */
  response?: unknown;
}

export interface RestFaultRule {
  method?: string;
  /** Tested against RecordedRestRequest.path. */
  path: RegExp;
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /** How many matching requests get the fault (default 1; Infinity for all). */
  times?: number;
}

export interface SendCommandOptions {
  guildId?: string;
  channelId?: string;
  user?: { id: string; username: string; global_name?: string | null };
  /** Member role ids (guild interactions). */
  roles?: string[];
  locale?: string;
  name: string;
  options?: APIApplicationCommandInteractionDataOption[];
  resolved?: Record<string, unknown>;
  /** Application command type (1 chat input, 2 user, 3 message). */
  type?: number;
}

export interface SendButtonOptions {
  guildId?: string;
  channelId?: string;
  user?: { id: string; username: string; global_name?: string | null };
  roles?: string[];
  locale?: string;
  customId: string;
  /** The message carrying the button: a message the stand-in knows (e.g. an earlier reply) or a new id. */
  messageId?: string;
  /** Component type (2 button, 3 string select ...). */
  componentType?: number;
  values?: string[];
}

export interface ViewedMessage {
  id: string;
  content?: string;
  embeds?: unknown[];
  components?: unknown[];
  flags?: number;
  deleted: boolean;
}

export interface InteractionView {
  /** The message '@original' refers to now (undefined before a command is acknowledged). */
  original?: ViewedMessage;
  /** Follow-ups in creation order (deleted ones are kept with deleted: true). */
  followUps: ViewedMessage[];
}

export type InteractionDelivery = 'sent' | 'queued' | 'dropped';

export interface InteractionResponseRecord {
  type: number;
  data?: unknown;
  /** performance.now() when the accepted callback arrived. */
  at: number;
}

export interface InteractionHandle {
  id: string;
  token: string;
  /** performance.now() when the INTERACTION_CREATE was written (queued or dropped, if not live). */
  sentAt: number;
  /** Shard the INTERACTION_CREATE went to. */
  shardId: number;
  /** 'sent' (written to a live session), 'queued' (session disconnected; replayed on resume), 'dropped'. */
  readonly delivery: InteractionDelivery;
  /** The raw INTERACTION_CREATE payload. */
  payload: Record<string, unknown>;
  /** First accepted callback (faults and rejected callbacks do not count). */
  firstResponse(timeoutMs?: number): Promise<InteractionResponseRecord>;
  requests(): RecordedRestRequest[];
  waitFor(pred: (r: RecordedRestRequest) => boolean, timeoutMs?: number): Promise<RecordedRestRequest>;
  view(): InteractionView;
}

export interface GatewayLogEntry {
  at: number;
  shardId: number | null;
  kind: 'connect' | 'identify' | 'ready' | 'resume' | 'resumed' | 'invalid_session' | 'close';
  code?: number;
  sessionId?: string;
  /** For 'close': who closed ('server' or 'client'). */
  by?: 'server' | 'client';
}

export interface DiscordStandIn {
  restUrl: string;
  gatewayUrl: string;
  applicationId: string;
  token: string;
  botUser: UserFixture;
  shardCount: number;
  requests: RecordedRestRequest[];
  guilds: Map<string, GuildFixture>;
  gatewayLog: GatewayLogEntry[];
  /** TCP connections opened to the REST API since the start (all but the gateway's), used or not. */
  restConnections(): number;
  /**
   * Lets go of finished interactions: their records, their messages and their requests (in
   * `requests` too). A long benchmark calls it so that the stand-in's heap, and its collector's
   * work, stay those of a short run. The stand-in then answers them as unknown interactions, and a
   * wait still pending on one of their handles ends with an error.
   */
  forget(interactionIds: readonly string[]): void;
  connectedShards(): number[];
  waitForShards(n: number, timeoutMs?: number): Promise<void>;
  disconnectShard(shardId: number, closeCode: number): void;
  setIdentifyDelay(shardId: number, ms: number): void;
  /** Sends op 7 RECONNECT on a shard (discord.js closes with 4200 and resumes). */
  requestReconnect(shardId: number): void;
  addGuild(g: GuildFixture): void;
  removeGuild(id: string, unavailable?: boolean): void;
  addUser(u: UserFixture): void;
  /** Dispatch any event on a shard; returns how it was delivered. */
  dispatch(shardId: number, event: string, data: unknown): InteractionDelivery;
  sendCommand(opts: SendCommandOptions): InteractionHandle;
  /** Several at once, as a burst: all built first, then dispatched back to back. */
  sendCommands(opts: readonly SendCommandOptions[]): InteractionHandle[];
  sendButton(opts: SendButtonOptions): InteractionHandle;
  injectRestFault(rule: RestFaultRule): void;
  clearRestFaults(): void;
  waitForRequest(pred: (r: RecordedRestRequest) => boolean, timeoutMs?: number): Promise<RecordedRestRequest>;
  /** Commands registered through PUT/POST (global: guildId undefined). */
  commands(guildId?: string): unknown[];
  close(): Promise<void>;
}
