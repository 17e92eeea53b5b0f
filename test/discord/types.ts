import type {
  APIApplicationCommandInteractionDataOption,
  APIModalInteractionResponseCallbackData,
} from 'discord.js';
import type {
  ChannelFixture,
  ChannelInput,
  GuildFixture,
  MessagePayload,
  RoleFixture,
  RoleInput,
  UserFixture,
} from './fixtures.js';
import type { GlobalRateLimit } from './global-limit.js';
import type { OverwriteInput } from './permissions.js';
import type { SpecViolation } from './spec/conformance.js';

export type { SpecViolation };

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
  /** Dispatches each gateway session keeps for a RESUME to replay (default 50,000; a long benchmark keeps fewer). */
  sessionReplayMax?: number;
  /** session_start_limit.max_concurrency (default: the shard count, so all shards identify at once). */
  maxConcurrency?: number;
  /** session_start_limit.total: gateway sessions a day (default 1000); remaining counts the IDENTIFYs. */
  sessionStartLimit?: number;
  /** Initial responses later than this after dispatch get 404 Unknown interaction, as on Discord (3000). */
  interactionDeadlineMs?: number;
  /** Artificial delay before every REST answer (default 0). */
  restLatencyMs?: number;
  /**
   * How long a message's nonce is remembered for `enforce_nonce` (per channel and author;
   * Discord says "the past few minutes"). Default 300000 (5 min).
   */
  nonceWindowMs?: number;
  /**
   * Discord's global limit, off by default: at most `max` requests with the bot's token per
   * `windowMs` (Discord's: 50 per 1000 ms), interaction callbacks and interaction webhooks not
   * counted; past it, a global 429 (global-limit.ts). `globalRateLimited()` counts them.
   */
  globalRateLimit?: GlobalRateLimit;
}

export interface RecordedFile {
  field: string;
  filename: string;
  contentType: string;
  size: number;
  /** The bytes, to check what was sent (an image is a real PNG). */
  data: Buffer;
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
  /** Status the stand-in answered with (0: none, the connection was closed: a dropped held post). */
  status: number;
  /** The body the stand-in answered with (undefined for 204). */
  response?: unknown;
}

export interface RestFaultRule {
  method?: string;
  /** Tested against RecordedRestRequest.path. */
  path: RegExp;
  /** The answer instead of the route's; without it, the route answers (after `delayMs`). */
  status?: number;
  /** The answer comes this much later. */
  delayMs?: number;
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
  /**
   * `member.permissions` (and resolved channels' `permissions`) instead of what the guild's roles
   * and the channel's overwrites give the member: e.g. `PermissionFlagsBits.ManageGuild`.
   */
  permissions?: bigint | string;
  /** `app_permissions` instead of the bot member's computed permissions in the channel. */
  appPermissions?: bigint | string;
  locale?: string;
  name: string;
  /** Options as Discord sends them; `commandOption` (fixtures.ts) builds them. */
  options?: APIApplicationCommandInteractionDataOption[];
  /**
   * Extra or replacement `data.resolved` entries. Channels, roles, users and members the options
   * name are resolved by the stand-in from its guilds and users (resolveOptions in fixtures.ts).
   */
  resolved?: Record<string, unknown>;
  /** Application command type (1 chat input, 2 user, 3 message). */
  type?: number;
  /** A user command's target (`data.target_id`): a user the stand-in knows. */
  targetId?: string;
  /**
   * Sent as the user typing (an autocomplete interaction, type 4): one of `options` carries
   * `focused: true`; the answer is callback type 8 with at most 25 choices.
   */
  autocomplete?: boolean;
  /**
   * A server the bot is not in, where the user installed the app (`guildId` is left out): the
   * interaction names the server by id and locale only, the user as the installer, and comes on
   * the shard the id maps to.
   */
  externalGuild?: { id: string; locale?: string };
  /** Without a guild: a DM or group DM between users (context 2), not the bot's DM (1). */
  privateChannel?: boolean;
}

export interface SendButtonOptions {
  guildId?: string;
  channelId?: string;
  user?: { id: string; username: string; global_name?: string | null };
  roles?: string[];
  /** `member.permissions` instead of the computed ones (see SendCommandOptions.permissions). */
  permissions?: bigint | string;
  /** `app_permissions` instead of the computed ones. */
  appPermissions?: bigint | string;
  locale?: string;
  customId: string;
  /** The message carrying the button: a message the stand-in knows (e.g. an earlier reply) or a new id. */
  messageId?: string;
  /** Component type (2 button, 3 string select ...). */
  componentType?: number;
  values?: string[];
}

export interface SendModalOptions {
  guildId?: string;
  channelId?: string;
  user?: { id: string; username: string; global_name?: string | null };
  roles?: string[];
  /** `member.permissions` instead of the computed ones (see SendCommandOptions.permissions). */
  permissions?: bigint | string;
  locale?: string;
  /** The modal the bot showed: the `data` of its callback of type 9. */
  modal: APIModalInteractionResponseCallbackData;
  /** What the user filled in, by the field's custom_id (fields left out keep their defaults). */
  answers: Readonly<Record<string, string | readonly string[]>>;
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

export interface DiscordStandIn extends StandInMessaging {
  /** Bytes of dispatches written and still waiting in this process for the network. */
  gatewayBacklog(): number;
  restUrl: string;
  gatewayUrl: string;
  applicationId: string;
  token: string;
  botUser: UserFixture;
  shardCount: number;
  requests: RecordedRestRequest[];
  guilds: Map<string, GuildFixture>;
  gatewayLog: GatewayLogEntry[];
  /** Every heartbeat received, with its shard and time (performance.now()). */
  heartbeats: ReadonlyArray<{ shardId: number | null; at: number }>;
  /** TCP connections opened to the REST API since the start (all but the gateway's), used or not. */
  restConnections(): number;
  /** Global 429s answered (StandInOptions.globalRateLimit; 0 when it is off). */
  globalRateLimited(): number;
  /** Requests the global limit counted, the 429s among them (0 when it is off). */
  globalCounted(): number;
  /**
   * Lets go of finished interactions: their records, their messages and their requests (in
   * `requests` too). A long benchmark calls it so that the stand-in's heap, and its collector's
   * work, stay those of a short run. The stand-in then answers them as unknown interactions, and a
   * wait still pending on one of their handles ends with an error.
   */
  forget(interactionIds: readonly string[]): void;
  /** Resolves once every REST request that reached the stand-in has been answered (held posts count until settled). */
  restSettled(): Promise<void>;
  connectedShards(): number[];
  waitForShards(n: number, timeoutMs?: number): Promise<void>;
  disconnectShard(shardId: number, closeCode: number): void;
  setIdentifyDelay(shardId: number, ms: number): void;
  /** Sends op 7 RECONNECT on a shard (discord.js closes with 4200 and resumes). */
  requestReconnect(shardId: number): void;
  /** Sends op 9 INVALID_SESSION (d: false) on a shard's connection and ends its session: the client identifies anew. */
  invalidateSession(shardId: number): void;
  /** While `on`, the shard's heartbeats get no ACK: the client closes the connection as a zombie and resumes. */
  dropHeartbeatAcks(shardId: number, on: boolean): void;
  /** Ends the sessions with no connection (too old to resume, as Discord says): their RESUME gets INVALID_SESSION. Returns how many. */
  expireDroppedSessions(): number;
  addGuild(g: GuildFixture): void;
  removeGuild(id: string, unavailable?: boolean): void;
  addUser(u: UserFixture): void;
  /** Dispatch any event on a shard; returns how it was delivered. */
  dispatch(shardId: number, event: string, data: unknown): InteractionDelivery;
  sendCommand(opts: SendCommandOptions): InteractionHandle;
  /** Several at once, as a burst: all built first, then dispatched back to back. */
  sendCommands(opts: readonly SendCommandOptions[]): InteractionHandle[];
  sendButton(opts: SendButtonOptions): InteractionHandle;
  /**
   * A modal submit for a modal the bot showed (its callback's `data`), filled in as `answers` say
   * (modals.ts checks them against the modal as Discord's client would).
   */
  sendModal(opts: SendModalOptions): InteractionHandle;
  injectRestFault(rule: RestFaultRule): void;
  clearRestFaults(): void;
  waitForRequest(pred: (r: RecordedRestRequest) => boolean, timeoutMs?: number): Promise<RecordedRestRequest>;
  /** Commands registered through PUT/POST (global: guildId undefined). */
  commands(guildId?: string): unknown[];
  /**
   * Requests so far that Discord's API description does not allow (spec/conformance.ts): a route it
   * does not have, a body field it does not declare. They were answered as usual.
   */
  specViolations(): SpecViolation[];
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// Messages the bot posts on its own (POST /channels/{id}/messages, DMs)

/** Whom a message notifies, as Discord would decide it: content mentions filtered by allowed_mentions and permissions. */
export interface MessagePings {
  /** @everyone or @here in the content, 'everyone' in parse, and the bot has Mention Everyone. */
  everyone: boolean;
  /** Users mentioned (<@id>) and allowed (whether or not the stand-in knows them). */
  users: string[];
  /** Roles of the guild mentioned (<@&id>), allowed, and mentionable or the bot has Mention Everyone. */
  roles: string[];
}

export interface PostedMessage {
  id: string;
  channelId: string;
  /** For a message in a guild channel. */
  guildId?: string;
  /** For a DM: the user it went to. */
  recipientId?: string;
  content: string;
  /** What a reader sees: the content, or the texts of a Components V2 layout. */
  text: string;
  embeds: unknown[];
  /** The request's allowed_mentions as sent; undefined when absent (Discord then parses every mention). */
  allowedMentions?: unknown;
  nonce?: string | number;
  enforceNonce: boolean;
  /** The whole request body (JSON, or a multipart body's payload_json). */
  body: Record<string, unknown>;
  pings: MessagePings;
  /** performance.now() when the request arrived (for a held post: when it first arrived). */
  at: number;
  /** Date.now() when the request arrived. */
  receivedAt: number;
  /** Later posts with the same nonce and enforce_nonce answered with this message instead of a new one. */
  repeats: number;
  /** The message object the stand-in answered with (edits applied). */
  message: MessagePayload;
  /** The bodies of the edits made to it since (PATCH /channels/{id}/messages/{id}), in order. */
  edits: Array<Record<string, unknown>>;
  /** When it was deleted (DELETE /channels/{id}/messages/{id}); still listed, as Discord's audit would. */
  deletedAt?: number;
}

export interface PostFailureOptions {
  /** HTTP status (e.g. 500, 503, 429, 403). */
  status: number;
  /** Discord's JSON error code (default: 0; none for a 429). */
  code?: number;
  message?: string;
  /** How many posts fail (default 1; Infinity for all until clearRestFaults). */
  times?: number;
  /** For a 429: seconds to wait (body retry_after and the Retry-After header; default 0.2). */
  retryAfter?: number;
  /** For a 429: a global rate limit (default false). */
  global?: boolean;
}

export interface HeldPost {
  channelId: string;
  /** The request body as received. */
  body: unknown;
  /** performance.now() when it arrived. */
  at: number;
  /** True once the client's connection closed (its process killed, its request timed out). */
  readonly clientGone: boolean;
  /** True once complete() or drop() was called (or releasePosts settled it). */
  readonly settled: boolean;
  /**
   * Lets it through now, as if it had just arrived: the message is created (or refused) and the
   * client answered if still there. Resolves with the recorded request (status and response).
   */
  complete(): Promise<RecordedRestRequest>;
  /** Loses it: no message, and the connection, if still open, is closed without an answer. */
  drop(): Promise<RecordedRestRequest>;
}

/** Controls and views of guilds, channels, roles, users and messages for tests (part of DiscordStandIn). */
export interface StandInMessaging {
  /** Adds a channel to a guild (CHANNEL_CREATE). */
  addChannel(guildId: string, channel?: ChannelFixture | ChannelInput): ChannelFixture;
  /** Deletes a guild channel (CHANNEL_DELETE); later posts and reads get 404 Unknown Channel (10003). */
  deleteChannel(channelId: string): void;
  /** Replaces a guild channel's permission overwrites (CHANNEL_UPDATE). */
  setChannelOverwrites(channelId: string, overwrites: OverwriteInput[]): void;
  /** Adds a role to a guild (GUILD_ROLE_CREATE). */
  addRole(guildId: string, role?: RoleFixture | RoleInput): RoleFixture;
  /** Changes a role's permissions, mentionability or name (GUILD_ROLE_UPDATE). */
  updateRole(
    guildId: string,
    roleId: string,
    patch: { permissions?: bigint | string; mentionable?: boolean; name?: string },
  ): void;
  /** Shorthand for updateRole(guildId, roleId, { permissions }). */
  setRolePermissions(guildId: string, roleId: string, permissions: bigint | string): void;
  /**
   * Deletes a role (GUILD_ROLE_DELETE): gone from members and from channel overwrites (CHANNEL_UPDATE
   * for each channel that had one).
   */
  deleteRole(guildId: string, roleId: string): void;
  /** Gives a member of a guild these roles (GUILD_MEMBER_UPDATE); the bot's own too. */
  setMemberRoles(guildId: string, userId: string, roles: string[]): void;
  /** Whether a user takes DMs from the bot (closed: posts to their DM channel get 403 50007). */
  setDmsClosed(userId: string, closed?: boolean): void;
  /** The DM channel the bot has opened with a user (POST /users/@me/channels), if any. */
  dmChannelId(userId: string): string | undefined;
  /**
   * The user's DM channel, opened now if the bot has not yet (as if it had, earlier): its id, to
   * fail or hold posts there before the bot's first DM. Throws for a user the stand-in does not know.
   */
  openDmChannel(userId: string): string;
  /** The next `times` posts to a channel (guild or DM) fail with this status and code. */
  failPosts(channelId: string, failure: PostFailureOptions): void;
  /** Posts to the channel from now on stay unanswered until completed, dropped or released. */
  holdPosts(channelId: string): void;
  /** Stops holding the channel's posts and settles those held: 'complete' (default) or 'drop'. */
  releasePosts(channelId: string, how?: 'complete' | 'drop'): Promise<void>;
  /** Posts held and not yet settled (of one channel, or all). */
  heldPosts(channelId?: string): HeldPost[];
  /** The first unsettled held post of a channel, now or when it arrives. */
  waitForHeldPost(channelId: string, timeoutMs?: number): Promise<HeldPost>;
  /** Every message created, guild and DM, in order. */
  postedMessages(): PostedMessage[];
  /** Lets go of the messages created before `receivedAt` (Date.now()); returns them (a long benchmark's trim). */
  forgetMessagesBefore(receivedAt: number): PostedMessage[];
  /** Messages created in a channel (guild or DM), deleted ones too (with `deletedAt`). */
  channelMessages(channelId: string): PostedMessage[];
  /** The messages a channel shows now: those created there and not deleted. */
  liveMessages(channelId: string): PostedMessage[];
  /** Messages created in the user's DM channel. */
  dmMessages(userId: string): PostedMessage[];
  /** The first message of the channel matching `pred` (default: any): one already there, else the next. */
  waitForMessage(
    channelId: string,
    pred?: (m: PostedMessage) => boolean,
    timeoutMs?: number,
  ): Promise<PostedMessage>;
  /** The same for the user's DMs. */
  waitForDm(userId: string, pred?: (m: PostedMessage) => boolean, timeoutMs?: number): Promise<PostedMessage>;
}
