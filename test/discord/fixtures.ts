// Builders for the JSON payloads a Discord stand-in sends: users, roles, channels, members, guilds
// (GUILD_CREATE as Discord sends it to a bot with only the Guilds intent), messages and interactions.
// Everything here is plain data; nothing talks to the network.

import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import {
  ALL_PERMISSIONS,
  channelPermissions,
  makeOverwrite,
  type OverwriteFixture,
  type OverwriteInput,
  Permission,
  permissionString,
} from './permissions.js';

export { ALL_PERMISSIONS, Permission } from './permissions.js';

/** Discord epoch (2015-01-01T00:00:00.000Z) in milliseconds. */
export const DISCORD_EPOCH = 1_420_070_400_000;

let lastSnowflakeMs = 0;
let snowflakeIncrement = 0;

/**
 * A fresh snowflake, unique within this process. With `timestampMs` the id encodes that time
 * (ids built from distinct timestamps never collide with each other).
 */
export function snowflake(timestampMs?: number): string {
  if (timestampMs !== undefined) {
    snowflakeIncrement = (snowflakeIncrement + 1) & 0xfff;
    return composeSnowflake(timestampMs, 2, snowflakeIncrement);
  }
  let ms = Date.now();
  if (ms <= lastSnowflakeMs) {
    ms = lastSnowflakeMs;
    snowflakeIncrement += 1;
    if (snowflakeIncrement > 0xfff) {
      ms += 1;
      snowflakeIncrement = 0;
    }
  } else {
    snowflakeIncrement = 0;
  }
  lastSnowflakeMs = ms;
  return composeSnowflake(ms, 1, snowflakeIncrement);
}

function composeSnowflake(timestampMs: number, worker: number, increment: number): string {
  const ts = BigInt(Math.floor(timestampMs) - DISCORD_EPOCH);
  return ((ts << 22n) | (BigInt(worker & 0x1f) << 17n) | BigInt(increment & 0xfff)).toString();
}

/** Milliseconds since the Unix epoch encoded in a snowflake. */
export function snowflakeTimestamp(id: string): number {
  return Number(BigInt(id) >> 22n) + DISCORD_EPOCH;
}

/** The shard a guild lives on: `(guild_id >> 22) % shardCount`, as Discord computes it. */
export function shardForGuild(guildId: string, shardCount: number): number {
  if (shardCount <= 1) return 0;
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

/** A random token-ish string of URL-safe characters. */
export function randomToken(length = 64): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[Math.floor(Math.random() * alphabet.length)];
  return out;
}

/** A token shaped like Discord's (three dot-separated parts). */
export function discordLikeToken(): string {
  return `${randomToken(26)}.${randomToken(6)}.${randomToken(38)}`;
}

/** What Discord gives @everyone in a new guild (a plausible subset). */
export const DEFAULT_EVERYONE_PERMISSIONS = (
  Permission.CreateInstantInvite |
  Permission.AddReactions |
  Permission.ViewChannel |
  Permission.SendMessages |
  Permission.EmbedLinks |
  Permission.AttachFiles |
  Permission.ReadMessageHistory |
  Permission.UseExternalEmojis |
  Permission.Connect |
  Permission.Speak |
  Permission.ChangeNickname |
  Permission.UseApplicationCommands |
  Permission.SendMessagesInThreads
).toString();

/** Permissions of the bot's managed role (as requested by a typical invite link). */
export const DEFAULT_BOT_PERMISSIONS = (
  Permission.ViewChannel |
  Permission.SendMessages |
  Permission.EmbedLinks |
  Permission.AttachFiles |
  Permission.ReadMessageHistory |
  Permission.UseExternalEmojis |
  Permission.AddReactions |
  Permission.SendMessagesInThreads
).toString();

// ---------------------------------------------------------------------------------------------
// Users, roles, channels, members

export interface UserFixture {
  id: string;
  username: string;
  discriminator: string;
  global_name: string | null;
  avatar: string | null;
  bot?: boolean;
  system?: boolean;
  public_flags: number;
  flags: number;
  banner: string | null;
  accent_color: number | null;
  avatar_decoration_data: null;
  collectibles: null;
  primary_guild: null;
  /**
   * The stand-in's own flag, never sent: the user does not take DMs from the bot (a post in their
   * DM channel is refused with 50007). Not enumerable, so no payload carries it; read by the
   * stand-in when the user is given to it (options.users, addUser).
   */
  readonly dmsClosed?: boolean;
}

export interface UserInput {
  id?: string;
  username?: string;
  global_name?: string | null;
  avatar?: string | null;
  bot?: boolean;
  /** The user does not take DMs from the bot (see UserFixture.dmsClosed). */
  dmsClosed?: boolean;
}

export function makeUser(input: UserInput = {}): UserFixture {
  const id = input.id ?? snowflake();
  const user: UserFixture = {
    id,
    username: input.username ?? `user_${id.slice(-6)}`,
    discriminator: input.bot ? id.slice(-4).padStart(4, '0') : '0',
    global_name:
      input.global_name !== undefined ? input.global_name : input.bot ? null : `User ${id.slice(-4)}`,
    avatar: input.avatar ?? null,
    public_flags: 0,
    flags: 0,
    banner: null,
    accent_color: null,
    avatar_decoration_data: null,
    collectibles: null,
    primary_guild: null,
  };
  if (input.bot) user.bot = true;
  if (input.dmsClosed) Object.defineProperty(user, 'dmsClosed', { value: true, enumerable: false });
  return user;
}

export function makeBotUser(input: { id?: string; username?: string } = {}): UserFixture {
  return makeUser({ ...input, username: input.username ?? 'Stand-in Bot', bot: true, global_name: null });
}

export interface RoleFixture {
  id: string;
  name: string;
  description: string | null;
  color: number;
  colors: { primary_color: number; secondary_color: number | null; tertiary_color: number | null };
  hoist: boolean;
  icon: string | null;
  unicode_emoji: string | null;
  position: number;
  permissions: string;
  managed: boolean;
  mentionable: boolean;
  flags: number;
  tags?: { bot_id?: string };
}

export interface RoleInput {
  id?: string;
  name?: string;
  color?: number;
  position?: number;
  /** Bits or Discord's decimal string (default none). */
  permissions?: bigint | string;
  managed?: boolean;
  /** Whether anyone may ping the role (default false: only members with Mention Everyone can). */
  mentionable?: boolean;
  botId?: string;
}

export function makeRole(input: RoleInput = {}): RoleFixture {
  const color = input.color ?? 0;
  const role: RoleFixture = {
    id: input.id ?? snowflake(),
    name: input.name ?? 'role',
    description: null,
    color,
    colors: { primary_color: color, secondary_color: null, tertiary_color: null },
    hoist: false,
    icon: null,
    unicode_emoji: null,
    position: input.position ?? 1,
    permissions: permissionString(input.permissions ?? 0n),
    managed: input.managed ?? input.botId !== undefined,
    mentionable: input.mentionable ?? false,
    flags: 0,
  };
  if (input.botId !== undefined) role.tags = { bot_id: input.botId };
  return role;
}

/** The @everyone role of a guild: same id as the guild, position 0. */
export function makeEveryoneRole(guildId: string, permissions = DEFAULT_EVERYONE_PERMISSIONS): RoleFixture {
  return makeRole({ id: guildId, name: '@everyone', position: 0, permissions, managed: false });
}

/** Channel types used by fixtures (subset of Discord's ChannelType). */
export const ChannelKind = {
  GuildText: 0,
  DM: 1,
  GuildVoice: 2,
  GuildCategory: 4,
  GuildAnnouncement: 5,
} as const;

export interface ChannelFixture {
  id: string;
  type: number;
  name: string;
  position: number;
  parent_id: string | null;
  topic: string | null;
  nsfw: boolean;
  permission_overwrites: OverwriteFixture[];
  rate_limit_per_user: number;
  last_message_id: string | null;
  flags: number;
  /** Present in REST answers and interaction payloads; absent inside GUILD_CREATE. */
  guild_id?: string;
}

export interface ChannelInput {
  id?: string;
  name?: string;
  type?: number;
  position?: number;
  parentId?: string | null;
  topic?: string | null;
  nsfw?: boolean;
  /** Overwrites for roles (the guild id for @everyone) and members. */
  permissionOverwrites?: OverwriteInput[];
}

export function makeTextChannel(input: ChannelInput = {}): ChannelFixture {
  return {
    id: input.id ?? snowflake(),
    type: input.type ?? ChannelKind.GuildText,
    name: input.name ?? 'general',
    position: input.position ?? 0,
    parent_id: input.parentId ?? null,
    topic: input.topic ?? null,
    nsfw: input.nsfw ?? false,
    permission_overwrites: (input.permissionOverwrites ?? []).map(makeOverwrite),
    rate_limit_per_user: 0,
    last_message_id: null,
    flags: 0,
  };
}

export interface MemberFixture {
  user: UserFixture;
  nick: string | null;
  avatar: string | null;
  banner: string | null;
  roles: string[];
  joined_at: string;
  premium_since: string | null;
  deaf: boolean;
  mute: boolean;
  flags: number;
  pending: boolean;
  communication_disabled_until: string | null;
  /** Only in interaction payloads: the member's computed permissions in the channel. */
  permissions?: string;
}

export function makeMember(
  user: UserFixture,
  input: { roles?: string[]; joinedAt?: string } = {},
): MemberFixture {
  return {
    user,
    nick: null,
    avatar: null,
    banner: null,
    roles: input.roles ?? [],
    joined_at: input.joinedAt ?? new Date(Date.now() - 86_400_000).toISOString(),
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
    communication_disabled_until: null,
  };
}

// ---------------------------------------------------------------------------------------------
// Guilds

/** A guild as Discord sends it in GUILD_CREATE (Guilds intent only), plus the REST approximate counts. */
export interface GuildFixture {
  id: string;
  name: string;
  icon: string | null;
  splash: string | null;
  discovery_splash: string | null;
  banner: string | null;
  description: string | null;
  home_header: string | null;
  owner_id: string;
  application_id: string | null;
  region: string;
  afk_channel_id: string | null;
  afk_timeout: number;
  system_channel_id: string | null;
  system_channel_flags: number;
  widget_enabled: boolean;
  widget_channel_id: string | null;
  verification_level: number;
  default_message_notifications: number;
  mfa_level: number;
  explicit_content_filter: number;
  max_presences: number | null;
  max_members: number;
  max_video_channel_users: number;
  max_stage_video_channel_users: number;
  vanity_url_code: string | null;
  premium_tier: number;
  premium_subscription_count: number;
  preferred_locale: string;
  rules_channel_id: string | null;
  public_updates_channel_id: string | null;
  safety_alerts_channel_id: string | null;
  hub_type: number | null;
  premium_progress_bar_enabled: boolean;
  latest_onboarding_question_id: string | null;
  nsfw: boolean;
  nsfw_level: number;
  incidents_data: null;
  inventory_settings: null;
  features: string[];
  roles: RoleFixture[];
  emojis: unknown[];
  stickers: unknown[];
  soundboard_sounds: unknown[];
  embedded_activities: unknown[];
  activity_instances: unknown[];
  application_command_counts: Record<string, number>;
  version: number;
  lazy: boolean;
  // GUILD_CREATE-only fields
  joined_at: string;
  large: boolean;
  unavailable: boolean;
  member_count: number;
  members: MemberFixture[];
  channels: ChannelFixture[];
  threads: unknown[];
  presences: unknown[];
  voice_states: unknown[];
  stage_instances: unknown[];
  guild_scheduled_events: unknown[];
  // REST (GET /guilds/:id?with_counts=true) only; stripped from GUILD_CREATE
  approximate_member_count: number;
  approximate_presence_count: number;
}

export interface GuildInput {
  id?: string;
  name?: string;
  icon?: string | null;
  owner_id?: string;
  memberCount?: number;
  presenceCount?: number;
  /** Text channels: names (ids are generated) or full channel fixtures. Default: ['general']. */
  channels?: Array<string | ChannelFixture>;
  /** Extra roles besides @everyone (and the bot's managed role when botUser is given). */
  roles?: RoleFixture[];
  features?: string[];
  preferredLocale?: string;
  description?: string | null;
  premiumTier?: number;
  vanityUrlCode?: string | null;
  /** When given, the bot's member and managed role are included (the stand-in adds them otherwise). */
  botUser?: UserFixture;
  joinedAt?: string;
}

export function makeGuild(input: GuildInput = {}): GuildFixture {
  const id = input.id ?? snowflake();
  const memberCount = input.memberCount ?? 42;
  const channels = (input.channels ?? ['general']).map((c, position) =>
    typeof c === 'string' ? makeTextChannel({ name: c, position }) : c,
  );
  const roles: RoleFixture[] = [makeEveryoneRole(id), ...(input.roles ?? [])];
  const guild: GuildFixture = {
    id,
    name: input.name ?? `Guild ${id.slice(-6)}`,
    icon: input.icon ?? null,
    splash: null,
    discovery_splash: null,
    banner: null,
    description: input.description ?? null,
    home_header: null,
    owner_id: input.owner_id ?? snowflake(snowflakeTimestamp(id) - 1),
    application_id: null,
    region: 'deprecated',
    afk_channel_id: null,
    afk_timeout: 300,
    system_channel_id: channels[0]?.id ?? null,
    system_channel_flags: 0,
    widget_enabled: false,
    widget_channel_id: null,
    verification_level: 1,
    default_message_notifications: 1,
    mfa_level: 0,
    explicit_content_filter: 2,
    max_presences: null,
    max_members: 500_000,
    max_video_channel_users: 25,
    max_stage_video_channel_users: 50,
    vanity_url_code: input.vanityUrlCode ?? null,
    premium_tier: input.premiumTier ?? 0,
    premium_subscription_count: 0,
    preferred_locale: input.preferredLocale ?? 'en-US',
    rules_channel_id: null,
    public_updates_channel_id: null,
    safety_alerts_channel_id: null,
    hub_type: null,
    premium_progress_bar_enabled: false,
    latest_onboarding_question_id: null,
    nsfw: false,
    nsfw_level: 0,
    incidents_data: null,
    inventory_settings: null,
    features: input.features ?? [],
    roles,
    emojis: [],
    stickers: [],
    soundboard_sounds: [],
    embedded_activities: [],
    activity_instances: [],
    application_command_counts: {},
    version: Date.now(),
    lazy: true,
    joined_at: input.joinedAt ?? new Date(Date.now() - 7 * 86_400_000).toISOString(),
    large: memberCount > 50,
    unavailable: false,
    member_count: memberCount,
    members: [],
    channels,
    threads: [],
    presences: [],
    voice_states: [],
    stage_instances: [],
    guild_scheduled_events: [],
    approximate_member_count: memberCount,
    approximate_presence_count: input.presenceCount ?? Math.floor(memberCount / 3),
  };
  if (input.botUser) withBotMember(guild, input.botUser);
  return guild;
}

export interface GuildsInput extends Omit<GuildInput, 'id' | 'name' | 'channels'> {
  /** Timestamp the first guild id encodes; guild i encodes startMs + i (an even spread over shards). */
  startMs?: number;
  namePrefix?: string;
  memberCount?: number;
  /** Per-guild member count (overrides memberCount). */
  memberCountOf?: (index: number) => number;
  channels?: string[];
}

/** `n` guilds with consecutive-timestamp ids (round-robin over shards). Cheap: thousands in milliseconds. */
export function makeGuilds(n: number, input: GuildsInput = {}): GuildFixture[] {
  const { startMs, namePrefix, memberCountOf, channels, ...rest } = input;
  const base = startMs ?? Date.now() - 365 * 86_400_000 - n;
  const out: GuildFixture[] = [];
  for (let i = 0; i < n; i += 1) {
    const guildInput: GuildInput = {
      ...rest,
      id: composeSnowflake(base + i, 3, i & 0xfff),
      name: `${namePrefix ?? 'Guild'} ${i + 1}`,
    };
    if (memberCountOf) guildInput.memberCount = memberCountOf(i);
    if (channels) guildInput.channels = channels;
    out.push(makeGuild(guildInput));
  }
  return out;
}

/** The bot's managed role in a guild, if any. */
export function botRoleOf(guild: GuildFixture, botId: string): RoleFixture | undefined {
  return guild.roles.find((r) => r.tags?.bot_id === botId);
}

/** Adds the bot's managed role and member to a guild fixture (in place) unless already there. */
export function withBotMember(guild: GuildFixture, bot: UserFixture): GuildFixture {
  let role = botRoleOf(guild, bot.id);
  if (!role) {
    role = makeRole({
      id: snowflake(snowflakeTimestamp(guild.id) + 1),
      name: bot.username,
      position: 1,
      permissions: DEFAULT_BOT_PERMISSIONS,
      botId: bot.id,
    });
    guild.roles.push(role);
  }
  if (!guild.members.some((m) => m.user.id === bot.id)) {
    guild.members.push(makeMember(bot, { roles: [role.id], joinedAt: guild.joined_at }));
  }
  return guild;
}

/** GUILD_CREATE payload for a fixture (drops the REST-only approximate counts). */
export function guildCreatePayload(guild: GuildFixture, largeThreshold = 50): Record<string, unknown> {
  const { approximate_member_count: _m, approximate_presence_count: _p, ...payload } = guild;
  return { ...payload, large: guild.member_count > largeThreshold };
}

/** GET /guilds/:id body (no GUILD_CREATE-only fields; counts only with with_counts=true). */
export function restGuildPayload(guild: GuildFixture, withCounts: boolean): Record<string, unknown> {
  const {
    joined_at: _j,
    large: _l,
    unavailable: _u,
    member_count: _mc,
    members: _mem,
    channels: _c,
    threads: _t,
    presences: _p,
    voice_states: _v,
    stage_instances: _s,
    guild_scheduled_events: _g,
    soundboard_sounds: _sb,
    embedded_activities: _ea,
    activity_instances: _ai,
    application_command_counts: _acc,
    version: _ver,
    lazy: _lazy,
    approximate_member_count,
    approximate_presence_count,
    ...rest
  } = guild;
  const body: Record<string, unknown> = { ...rest, icon_hash: guild.icon, widget_enabled: false };
  if (withCounts) {
    body.approximate_member_count = approximate_member_count;
    body.approximate_presence_count = approximate_presence_count;
  }
  return body;
}

/** A channel as REST and interaction payloads show it (with guild_id). */
export function channelPayload(channel: ChannelFixture, guildId: string): ChannelFixture {
  return { ...channel, guild_id: guildId };
}

/** Permissions of a member computed from @everyone and their roles (Administrator → all). */
export function memberPermissions(guild: GuildFixture, roleIds: readonly string[]): string {
  let bits = 0n;
  for (const role of guild.roles) {
    if (role.id === guild.id || roleIds.includes(role.id)) bits |= BigInt(role.permissions);
  }
  return (bits & Permission.Administrator) !== 0n ? ALL_PERMISSIONS : bits.toString();
}

// ---------------------------------------------------------------------------------------------
// Messages and interactions

export interface MessagePayload {
  id: string;
  type: number;
  channel_id: string;
  author: UserFixture;
  content: string;
  timestamp: string;
  edited_timestamp: string | null;
  tts: boolean;
  mention_everyone: boolean;
  mentions: unknown[];
  mention_roles: string[];
  attachments: unknown[];
  embeds: unknown[];
  components: unknown[];
  pinned: boolean;
  flags: number;
  position?: number;
  /** Echoed from the request (Create Message). */
  nonce?: string | number;
  webhook_id?: string;
  application_id?: string;
  interaction_metadata?: Record<string, unknown>;
  interaction?: Record<string, unknown>;
}

export interface MessageInput {
  id?: string;
  channelId: string;
  author: UserFixture;
  content?: string;
  embeds?: unknown[];
  components?: unknown[];
  flags?: number;
  type?: number;
  applicationId?: string;
}

export function makeMessage(input: MessageInput): MessagePayload {
  const id = input.id ?? snowflake();
  const message: MessagePayload = {
    id,
    type: input.type ?? 0,
    channel_id: input.channelId,
    author: input.author,
    content: input.content ?? '',
    timestamp: new Date(snowflakeTimestamp(id)).toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: input.embeds ?? [],
    components: input.components ?? [],
    pinned: false,
    flags: input.flags ?? 0,
  };
  if (input.applicationId !== undefined) {
    message.webhook_id = input.applicationId;
    message.application_id = input.applicationId;
  }
  return message;
}

/** An action row with one primary button (component JSON as Discord echoes it). */
export function buttonRow(customId: string, label = 'Click'): Record<string, unknown> {
  return {
    type: 1,
    id: 1,
    components: [{ type: 2, id: 2, style: 1, label, custom_id: customId }],
  };
}

/** Interaction types and contexts used by the builders. */
export const InteractionKind = {
  Ping: 1,
  ApplicationCommand: 2,
  MessageComponent: 3,
  Autocomplete: 4,
  Modal: 5,
} as const;

export interface InteractionPayload {
  id: string;
  application_id: string;
  type: number;
  token: string;
  version: 1;
  guild_id?: string;
  guild?: { id: string; locale: string; features: string[] };
  channel_id: string;
  /** Guild: the channel's fields without its overwrites, plus the member's `permissions` there. */
  channel: ChannelFixture | Record<string, unknown>;
  member?: MemberFixture;
  user?: UserFixture;
  locale: string;
  guild_locale?: string;
  app_permissions: string;
  entitlements: unknown[];
  authorizing_integration_owners: Record<string, string>;
  context: number;
  attachment_size_limit: number;
  data: Record<string, unknown>;
  message?: MessagePayload;
}

export interface InteractionBaseInput {
  applicationId: string;
  id?: string;
  token?: string;
  guild?: GuildFixture;
  channel: ChannelFixture;
  user: UserFixture;
  /** Member roles in the guild (default none). */
  roles?: string[];
  locale?: string;
  botId?: string;
  /**
   * The member's permissions as the payload states them (`member.permissions`, and the
   * `permissions` of resolved channels). Default: computed as Discord does, from the guild's roles
   * and the channel's overwrites (everything for the owner).
   */
  permissions?: bigint | string;
  /** `app_permissions`. Default: the bot member's permissions in the channel, computed likewise. */
  appPermissions?: bigint | string;
  /**
   * The app installed by the user too (`authorizing_integration_owners` names the user beside the
   * server). A server the bot is not in is `externalGuild`; outside a server the user's install is
   * the only one.
   */
  userInstalled?: boolean;
  /** A server the bot is not in (user-installed): only what Discord sends of it. */
  externalGuild?: { id: string; locale: string };
  /** Outside a server: a private channel between users (context 2), not the bot's DM (1). */
  privateChannel?: boolean;
}

/** INTERACTION_CONTEXT_TYPE: a server, the bot's DM, a DM or group DM between users. */
const Context = { Guild: 0, BotDM: 1, PrivateChannel: 2 } as const;

/**
 * An interaction of a user-installed app in a server the bot is not in: the user's install alone
 * (as outside a server), and of the server only what Discord sends: its id and locale, a partial
 * channel with the member's permissions, the member. The app's permissions are those of an
 * external app (Discord computes them; here the default set).
 */
function inExternalGuild(
  payload: InteractionPayload,
  input: InteractionBaseInput,
  external: { id: string; locale: string },
): InteractionPayload {
  const permissions =
    input.permissions !== undefined ? permissionString(input.permissions) : DEFAULT_EVERYONE_PERMISSIONS;
  const { id, type, name } = input.channel;
  return {
    ...payload,
    guild_id: external.id,
    guild: { id: external.id, locale: external.locale, features: [] },
    guild_locale: external.locale,
    channel: { id, type, name, guild_id: external.id, flags: 0, permissions },
    member: { ...makeMember(input.user, { roles: input.roles ?? [] }), permissions },
    context: Context.Guild,
  };
}

export function interactionBase(
  input: InteractionBaseInput,
  type: number,
  data: Record<string, unknown>,
): InteractionPayload {
  const { guild, user } = input;
  const payload: InteractionPayload = {
    id: input.id ?? snowflake(),
    application_id: input.applicationId,
    type,
    token: input.token ?? `aW50ZXJhY3Rpb246${randomToken(120)}`,
    version: 1,
    channel_id: input.channel.id,
    channel: guild ? interactionChannel(input, guild) : dmChannelPayload(input.channel.id, user),
    locale: input.locale ?? 'en-US',
    app_permissions:
      input.appPermissions !== undefined
        ? permissionString(input.appPermissions)
        : guild
          ? appPermissions(guild, input.channel, input.botId)
          : DEFAULT_BOT_PERMISSIONS,
    entitlements: [],
    // Installed by the server, the user, or both (the server's key is the guild's id).
    authorizing_integration_owners: !guild
      ? { '1': user.id }
      : input.userInstalled
        ? { '0': guild.id, '1': user.id }
        : { '0': guild.id },
    context: guild ? Context.Guild : input.privateChannel ? Context.PrivateChannel : Context.BotDM,
    attachment_size_limit: 10_485_760,
    data,
  };
  if (input.externalGuild) return inExternalGuild(payload, input, input.externalGuild);
  if (guild) {
    const roles = input.roles ?? [];
    const member: MemberFixture = {
      ...makeMember(user, { roles }),
      permissions: invokerPermissions(input, guild, input.channel),
    };
    payload.guild_id = guild.id;
    payload.guild = { id: guild.id, locale: guild.preferred_locale, features: guild.features };
    payload.guild_locale = guild.preferred_locale;
    payload.member = member;
  } else {
    payload.user = user;
  }
  return payload;
}

/** A DM channel as interaction payloads show it. */
export function dmChannelPayload(id: string, recipient: UserFixture): Record<string, unknown> {
  return { id, type: ChannelKind.DM, last_message_id: null, flags: 0, recipients: [recipient] };
}

/** The bot's permissions in a channel: from its member's roles (its managed role when not a member). */
function appPermissions(guild: GuildFixture, channel: ChannelFixture, botId: string | undefined): string {
  if (botId === undefined) return memberPermissions(guild, []);
  const member = guild.members.find((m) => m.user.id === botId);
  const managed = botRoleOf(guild, botId);
  const roles = member ? member.roles : managed ? [managed.id] : [];
  return channelPermissions(guild, channel, { userId: botId, roles }).toString();
}

/**
 * The channel an interaction comes from, as Discord sends it: its fields without the overwrites,
 * with the invoking member's permissions there.
 */
function interactionChannel(input: InteractionBaseInput, guild: GuildFixture): Record<string, unknown> {
  const { permission_overwrites: _o, ...fields } = input.channel;
  return { ...fields, guild_id: guild.id, permissions: invokerPermissions(input, guild, input.channel) };
}

/** The invoking member's permissions in a channel, as the payload states them. */
export function channelPermissionsOf(
  input: InteractionBaseInput,
  guild: GuildFixture,
  channel: ChannelFixture,
): string {
  return invokerPermissions(input, guild, channel);
}

function invokerPermissions(
  input: InteractionBaseInput,
  guild: GuildFixture,
  channel: ChannelFixture,
): string {
  if (input.permissions !== undefined) return permissionString(input.permissions);
  return channelPermissions(guild, channel, { userId: input.user.id, roles: input.roles ?? [] }).toString();
}

export interface CommandInteractionInput extends InteractionBaseInput {
  name: string;
  commandId?: string;
  /** Application command type: 1 chat input (default), 2 user, 3 message. */
  commandType?: number;
  options?: APIApplicationCommandInteractionDataOption[];
  /** Entries of `data.resolved`; those the options name and this lacks are filled in (resolveOptions). */
  resolved?: Record<string, unknown>;
  /** Set when the command is registered to a guild. */
  commandGuildId?: string;
  /** Users the stand-in knows, for user and mentionable options (default: only `user`). */
  lookupUser?: (id: string) => UserFixture | undefined;
  /** A user context menu command's target (`data.target_id`), resolved as a user option is. */
  targetId?: string;
  /** An autocomplete interaction (type 4): the user typing the option marked `focused`. */
  autocomplete?: boolean;
}

export function makeCommandInteraction(input: CommandInteractionInput): InteractionPayload {
  const data: Record<string, unknown> = {
    id: input.commandId ?? snowflake(),
    name: input.name,
    type: input.commandType ?? 1,
  };
  if (input.options) data.options = input.options;
  if (input.targetId !== undefined) data.target_id = input.targetId;
  // The target is resolved as a user option naming it would be.
  const target: CommandOption[] =
    input.targetId === undefined ? [] : [{ type: 6, name: 'target', value: input.targetId }];
  const resolved = resolveOptions(input, [...(input.options ?? []), ...target], input.resolved);
  if (resolved) data.resolved = resolved;
  if (input.commandGuildId) data.guild_id = input.commandGuildId;
  return interactionBase(
    input,
    input.autocomplete ? InteractionKind.Autocomplete : InteractionKind.ApplicationCommand,
    data,
  );
}

export interface ComponentInteractionInput extends InteractionBaseInput {
  customId: string;
  /** The message the component is attached to. */
  message: MessagePayload;
  /** Component type: 2 button (default), 3 string select ... */
  componentType?: number;
  values?: string[];
}

export function makeComponentInteraction(input: ComponentInteractionInput): InteractionPayload {
  const data: Record<string, unknown> = {
    custom_id: input.customId,
    component_type: input.componentType ?? 2,
  };
  if (input.values) data.values = input.values;
  const payload = interactionBase(input, InteractionKind.MessageComponent, data);
  payload.message = input.message;
  return payload;
}

// ---------------------------------------------------------------------------------------------
// Command options and what Discord resolves for them

type CommandOption = APIApplicationCommandInteractionDataOption;

/** Options of a chat-input command as Discord sends them (types 1, 3, 4, 5, 6, 7, 8, 9, 10). */
export const commandOption = {
  subcommand: (name: string, options: CommandOption[] = []): CommandOption =>
    ({ type: 1, name, options }) as CommandOption,
  group: (name: string, options: CommandOption[]): CommandOption =>
    ({ type: 2, name, options }) as CommandOption,
  string: (name: string, value: string): CommandOption => ({ type: 3, name, value }),
  integer: (name: string, value: number): CommandOption => ({ type: 4, name, value }),
  boolean: (name: string, value: boolean): CommandOption => ({ type: 5, name, value }),
  user: (name: string, id: string): CommandOption => ({ type: 6, name, value: id }),
  channel: (name: string, id: string): CommandOption => ({ type: 7, name, value: id }),
  role: (name: string, id: string): CommandOption => ({ type: 8, name, value: id }),
  mentionable: (name: string, id: string): CommandOption => ({ type: 9, name, value: id }),
  number: (name: string, value: number): CommandOption => ({ type: 10, name, value }),
};

type Resolved = Record<string, Record<string, unknown>>;

/**
 * `data.resolved` as Discord sends it for these options: every channel (id, name, type, the
 * invoking member's `permissions` there, and the channel's other fields), role, user and member
 * (with `permissions`) the options name, merged under `given` (whose entries win). An id the
 * guild or the stand-in does not know throws: Discord never sends an option it cannot resolve.
 * Undefined when there is nothing to resolve.
 */
export function resolveOptions(
  input: CommandInteractionInput,
  options: readonly CommandOption[],
  given: Record<string, unknown> | undefined,
): Record<string, unknown> | undefined {
  const out: Resolved = {};
  for (const [kind, entries] of Object.entries(given ?? {})) {
    out[kind] = { ...(entries as Record<string, unknown>) };
  }
  const has = (kind: string, id: string) => out[kind]?.[id] !== undefined;
  const put = (kind: string, id: string, value: unknown) => {
    out[kind] ??= {};
    (out[kind] as Record<string, unknown>)[id] = value;
  };
  const { guild } = input;
  const findUser = (id: string) =>
    id === input.user.id
      ? input.user
      : (input.lookupUser?.(id) ?? guild?.members.find((m) => m.user.id === id)?.user);
  const addUser = (id: string, name: string): void => {
    if (has('users', id)) return;
    const user = findUser(id);
    if (!user) throw new Error(`Discord stand-in: option ${name} names unknown user ${id}`);
    put('users', id, user);
    const member = guild?.members.find((m) => m.user.id === id);
    if (guild && member && !has('members', id)) {
      const { user: _u, deaf: _d, mute: _m, permissions: _p, ...partial } = member;
      const channel = { permission_overwrites: input.channel.permission_overwrites };
      put('members', id, {
        ...partial,
        permissions: channelPermissions(guild, channel, { userId: id, roles: member.roles }).toString(),
      });
    }
  };
  const addRole = (id: string, name: string): void => {
    if (has('roles', id)) return;
    const role = guild?.roles.find((r) => r.id === id);
    if (!role) throw new Error(`Discord stand-in: option ${name} names unknown role ${id}`);
    put('roles', id, { ...role });
  };
  const addChannel = (id: string, name: string): void => {
    if (has('channels', id)) return;
    const channel = guild?.channels.find((c) => c.id === id);
    if (!guild || !channel) throw new Error(`Discord stand-in: option ${name} names unknown channel ${id}`);
    const { permission_overwrites: _o, ...fields } = channel;
    put('channels', id, {
      ...fields,
      guild_id: guild.id,
      permissions: invokerPermissions(input, guild, channel),
    });
  };
  const walk = (list: readonly CommandOption[]): void => {
    for (const option of list) {
      if ('options' in option && Array.isArray(option.options)) walk(option.options as CommandOption[]);
      if (!('value' in option) || typeof option.value !== 'string') continue;
      const id = option.value;
      if (option.type === 6) addUser(id, option.name);
      else if (option.type === 7) addChannel(id, option.name);
      else if (option.type === 8) addRole(id, option.name);
      else if (option.type === 9) {
        if (guild?.roles.some((r) => r.id === id) || has('roles', id)) addRole(id, option.name);
        else addUser(id, option.name);
      }
    }
  };
  walk(options);
  return Object.keys(out).length > 0 ? out : undefined;
}
