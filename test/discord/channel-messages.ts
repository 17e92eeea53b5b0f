// Messages the bot posts on its own: Create Message in guild channels and DM channels, Create DM,
// Get Channel. Checks as Discord makes them (unknown channel, access, Send Messages, Embed Links,
// closed DMs, the body's limits), `nonce` with `enforce_nonce`, and who a message would ping.
// Operations return { status, body } like the REST route would answer; rest.ts does the HTTP part.

import { IS_COMPONENTS_V2, textDisplayContents } from './components-v2.js';
import {
  type ChannelFixture,
  channelPayload,
  dmChannelPayload,
  type GuildFixture,
  makeMessage,
  snowflake,
  type UserFixture,
} from './fixtures.js';
import {
  attachmentsFor,
  type ErrorTree,
  errors,
  type FileInfo,
  fieldError,
  hasVisibleContent,
  isRecord,
  MessageFlag,
  normalizeEmbed,
  type RouteResult,
  validateMessage,
} from './interactions.js';
import { canPingRole, channelPermissions, hasPermission, Permission, rolesOf } from './permissions.js';
import type { MessagePings, PostedMessage } from './types.js';
import { WaitList } from './waiters.js';

export const DEFAULT_NONCE_WINDOW_MS = 5 * 60_000;

const unknownChannel = (): RouteResult => ({
  status: 404,
  body: { message: 'Unknown Channel', code: 10003 },
});
const unknownMessage = (): RouteResult => ({
  status: 404,
  body: { message: 'Unknown Message', code: 10008 },
});
const missingAccess = (): RouteResult => ({ status: 403, body: { message: 'Missing Access', code: 50001 } });
const missingPermissions = (): RouteResult => ({
  status: 403,
  body: { message: 'Missing Permissions', code: 50013 },
});
const cannotMessageUser = (): RouteResult => ({
  status: 403,
  body: { message: 'Cannot send messages to this user', code: 50007 },
});
const nonTextChannel = (): RouteResult => ({
  status: 400,
  body: { message: 'Cannot send messages in a non-text channel', code: 50008 },
});

/** Channel types without messages: categories (4), directories (14), forums (15) and media channels (16). */
const TEXTLESS = new Set([4, 14, 15, 16]);
/** Flags a Create Message may set: SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS, IS_COMPONENTS_V2. */
const CREATE_FLAGS =
  MessageFlag.SuppressEmbeds | MessageFlag.SuppressNotifications | MessageFlag.IsComponentsV2;

export interface ChannelMessagesHost {
  readonly guilds: Map<string, GuildFixture>;
  readonly users: Map<string, UserFixture>;
  readonly botUser: UserFixture;
  readonly nonceWindowMs: number;
}

type ChannelRef =
  | { kind: 'guild'; guild: GuildFixture; channel: ChannelFixture }
  | { kind: 'dm'; id: string; recipient: UserFixture };

export interface PostContext {
  /** performance.now() when the request arrived. */
  at: number;
  /** Date.now() when the request arrived. */
  receivedAt: number;
  files: FileInfo[];
}

interface NonceEntry {
  posted: PostedMessage;
  createdAt: number;
}

export class ChannelMessages {
  readonly posted: PostedMessage[] = [];
  readonly #host: ChannelMessagesHost;
  readonly #byChannel = new Map<string, PostedMessage[]>();
  readonly #dmOfUser = new Map<string, string>();
  readonly #recipientOfDm = new Map<string, string>();
  readonly #closedDms = new Set<string>();
  /** Channels of guilds the bot left: Discord answers Missing Access there, not Unknown Channel. */
  readonly #formerChannels = new Set<string>();
  readonly #nonces = new Map<string, NonceEntry>();
  readonly #waiters = new WaitList<PostedMessage>();

  constructor(host: ChannelMessagesHost) {
    this.#host = host;
  }

  setDmsClosed(userId: string, closed: boolean): void {
    if (closed) this.#closedDms.add(userId);
    else this.#closedDms.delete(userId);
  }

  dmChannelId(userId: string): string | undefined {
    return this.#dmOfUser.get(userId);
  }

  /** The guild channel with this id, if any guild has it. */
  findGuildChannel(id: string): { guild: GuildFixture; channel: ChannelFixture } | undefined {
    for (const guild of this.#host.guilds.values()) {
      const channel = guild.channels.find((c) => c.id === id);
      if (channel) return { guild, channel };
    }
    return undefined;
  }

  /** The bot left this guild: its channels now answer Missing Access. */
  guildLeft(guild: GuildFixture): void {
    for (const channel of guild.channels) this.#formerChannels.add(channel.id);
  }

  #find(id: string): ChannelRef | undefined {
    const found = this.findGuildChannel(id);
    if (found) return { kind: 'guild', ...found };
    const userId = this.#recipientOfDm.get(id);
    const recipient = userId === undefined ? undefined : this.#host.users.get(userId);
    return recipient ? { kind: 'dm', id, recipient } : undefined;
  }

  #botBits(guild: GuildFixture, channel: ChannelFixture): bigint {
    const botId = this.#host.botUser.id;
    return channelPermissions(guild, channel, { userId: botId, roles: rolesOf(guild, botId) });
  }

  // -- routes ------------------------------------------------------------------------------------

  /** The DM channel with a known user, opened if need be. */
  openDm(userId: string): string | undefined {
    const user = this.#host.users.get(userId);
    if (!user) return undefined;
    let id = this.#dmOfUser.get(user.id);
    if (id === undefined) {
      id = snowflake();
      this.#dmOfUser.set(user.id, id);
      this.#recipientOfDm.set(id, user.id);
    }
    return id;
  }

  /** POST /users/@me/channels: the DM channel with a user, the same one every time. */
  createDm(body: unknown): RouteResult {
    const recipientId = isRecord(body) ? body.recipient_id : undefined;
    if (typeof recipientId !== 'string' || !/^\d{1,20}$/.test(recipientId)) {
      return errors.invalidForm({
        recipient_id: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] },
      });
    }
    const user = this.#host.users.get(recipientId);
    const id = this.openDm(recipientId);
    if (!user || id === undefined) return { status: 404, body: { message: 'Unknown User', code: 10013 } };
    return { status: 200, body: this.#dmPayload(id, user) };
  }

  #dmPayload(id: string, user: UserFixture): Record<string, unknown> {
    const last = this.#byChannel.get(id)?.at(-1);
    return { ...dmChannelPayload(id, user), last_message_id: last?.id ?? null };
  }

  /** GET /channels/{id}: a guild channel the bot can see (with its overwrites), or a DM channel. */
  getChannel(id: string): RouteResult {
    const ref = this.#find(id);
    if (!ref) return this.#formerChannels.has(id) ? missingAccess() : unknownChannel();
    if (ref.kind === 'dm') return { status: 200, body: this.#dmPayload(ref.id, ref.recipient) };
    if (!hasPermission(this.#botBits(ref.guild, ref.channel), Permission.ViewChannel)) return missingAccess();
    return { status: 200, body: channelPayload(ref.channel, ref.guild.id) };
  }

  /** POST /channels/{id}/messages. */
  post(channelId: string, rawBody: unknown, ctx: PostContext): RouteResult {
    const ref = this.#find(channelId);
    if (!ref) return this.#formerChannels.has(channelId) ? missingAccess() : unknownChannel();
    let bits: bigint | undefined;
    if (ref.kind === 'guild') {
      bits = this.#botBits(ref.guild, ref.channel);
      if (!hasPermission(bits, Permission.ViewChannel)) return missingAccess();
      if (TEXTLESS.has(ref.channel.type)) return nonTextChannel();
      if (!hasPermission(bits, Permission.SendMessages)) return missingPermissions();
    } else if (this.#closedDms.has(ref.recipient.id) || ref.recipient.bot) {
      return cannotMessageUser();
    }

    const body = isRecord(rawBody) ? rawBody : {};
    const invalid = validateCreate(body, ctx.files);
    if (invalid) return invalid;
    const embeds = Array.isArray(body.embeds) ? body.embeds : [];
    if (bits !== undefined) {
      if (embeds.length > 0 && !hasPermission(bits, Permission.EmbedLinks)) return missingPermissions();
      if (ctx.files.length > 0 && !hasPermission(bits, Permission.AttachFiles)) return missingPermissions();
    }
    const attachments = attachmentsFor(ctx.files);
    if (!hasVisibleContent({ ...body, attachments })) return errors.emptyMessage();

    const authorId = this.#host.botUser.id;
    const nonce = typeof body.nonce === 'string' || typeof body.nonce === 'number' ? body.nonce : undefined;
    const nonceKey = nonce === undefined ? undefined : `${channelId}\u0000${authorId}\u0000${String(nonce)}`;
    const now = Date.now();
    if (nonceKey !== undefined && body.enforce_nonce === true) {
      const earlier = this.#nonces.get(nonceKey);
      if (earlier && now - earlier.createdAt <= this.#host.nonceWindowMs) {
        earlier.posted.repeats += 1;
        return { status: 200, body: structuredClone(earlier.posted.message) };
      }
    }

    const content = typeof body.content === 'string' ? body.content : '';
    // What a reader sees: the content, or a V2 layout's texts (mentions there ping as in content).
    const text =
      typeof body.flags === 'number' && (body.flags & IS_COMPONENTS_V2) !== 0
        ? textDisplayContents(body.components).join('\n')
        : content;
    const guild = ref.kind === 'guild' ? ref.guild : undefined;
    const pings = pingsOf(text, body.allowed_mentions, guild, bits);
    const message = makeMessage({
      channelId,
      author: this.#host.botUser,
      content,
      embeds: embeds.map(normalizeEmbed),
      components: Array.isArray(body.components) ? structuredClone(body.components) : [],
      flags: typeof body.flags === 'number' ? body.flags & CREATE_FLAGS : 0,
    });
    message.attachments = attachments;
    if (body.tts === true && (bits === undefined || hasPermission(bits, Permission.SendTTSMessages))) {
      message.tts = true;
    }
    message.mention_everyone = pings.everyone;
    message.mention_roles = [...pings.roles];
    message.mentions = pings.users.flatMap((id) => {
      const user = this.#host.users.get(id);
      return user ? [user] : [];
    });
    if (nonce !== undefined) message.nonce = nonce;

    const posted: PostedMessage = {
      id: message.id,
      channelId,
      content,
      text,
      embeds: structuredClone(message.embeds),
      ...(nonce === undefined ? {} : { nonce }),
      enforceNonce: body.enforce_nonce === true,
      body: structuredClone(body),
      pings,
      at: ctx.at,
      receivedAt: ctx.receivedAt,
      repeats: 0,
      message,
      edits: [],
    };
    if (ref.kind === 'guild') {
      posted.guildId = ref.guild.id;
      ref.channel.last_message_id = message.id;
    } else {
      posted.recipientId = ref.recipient.id;
    }
    if (body.allowed_mentions !== undefined) posted.allowedMentions = structuredClone(body.allowed_mentions);
    if (nonceKey !== undefined) this.#remember(nonceKey, { posted, createdAt: now });
    this.posted.push(posted);
    let list = this.#byChannel.get(channelId);
    if (!list) {
      list = [];
      this.#byChannel.set(channelId, list);
    }
    list.push(posted);
    this.#waiters.notify(posted);
    return { status: 200, body: structuredClone(message) };
  }

  /**
   * PATCH /channels/{id}/messages/{id}: a message the bot posted, edited as Discord does (only
   * its author may; the V2 flag set by an edit stays, and its rules hold on the merged message).
   */
  edit(channelId: string, messageId: string, rawBody: unknown): RouteResult {
    const posted = this.#live(channelId, messageId);
    if (!posted) return unknownMessage();
    const patch = isRecord(rawBody) ? rawBody : {};
    const invalid = validateMessage(patch, [], { existing: posted.message });
    if (invalid) return invalid;
    const next = posted.message;
    if ('content' in patch) next.content = typeof patch.content === 'string' ? patch.content : '';
    if ('embeds' in patch) next.embeds = Array.isArray(patch.embeds) ? patch.embeds.map(normalizeEmbed) : [];
    if ('components' in patch)
      next.components = Array.isArray(patch.components) ? structuredClone(patch.components) : [];
    if (typeof patch.flags === 'number')
      next.flags = (next.flags & ~IS_COMPONENTS_V2) | (patch.flags & IS_COMPONENTS_V2);
    next.edited_timestamp = new Date().toISOString();
    posted.edits.push(structuredClone(patch));
    return { status: 200, body: structuredClone(next) };
  }

  /**
   * DELETE /channels/{id}/messages/{id}: a message the bot posted (its own: no permission needed),
   * once; a message already deleted, or never posted there, is Discord's 10008.
   */
  delete(channelId: string, messageId: string): RouteResult {
    const posted = this.#live(channelId, messageId);
    if (!posted) return unknownMessage();
    posted.deletedAt = Date.now();
    return { status: 204 };
  }

  #live(channelId: string, messageId: string): PostedMessage | undefined {
    const posted = this.#byChannel.get(channelId)?.find((p) => p.id === messageId);
    return posted?.deletedAt === undefined ? posted : undefined;
  }

  #remember(key: string, entry: NonceEntry): void {
    // Forget what fell out of the window, so a long run's map stays small.
    if (this.#nonces.size > 1000) {
      const cutoff = entry.createdAt - this.#host.nonceWindowMs;
      for (const [k, e] of this.#nonces) if (e.createdAt < cutoff) this.#nonces.delete(k);
    }
    this.#nonces.set(key, entry);
  }

  /**
   * Lets go of the messages created before `receivedAt` (Date.now()), with their nonces: a long
   * benchmark keeps the stand-in's heap that of a short run. Returns those let go, in order.
   */
  forgetBefore(receivedAt: number): PostedMessage[] {
    let cut = 0;
    while (cut < this.posted.length && (this.posted[cut] as PostedMessage).receivedAt < receivedAt) cut++;
    if (cut === 0) return [];
    const gone = this.posted.splice(0, cut);
    const goneSet = new Set(gone);
    for (const [channelId, list] of this.#byChannel) {
      const kept = list.filter((m) => !goneSet.has(m));
      if (kept.length === 0) this.#byChannel.delete(channelId);
      else if (kept.length !== list.length) this.#byChannel.set(channelId, kept);
    }
    for (const [key, entry] of this.#nonces) if (goneSet.has(entry.posted)) this.#nonces.delete(key);
    return gone;
  }

  // -- views ---------------------------------------------------------------------------------------

  inChannel(channelId: string): PostedMessage[] {
    return [...(this.#byChannel.get(channelId) ?? [])];
  }

  toUser(userId: string): PostedMessage[] {
    const id = this.#dmOfUser.get(userId);
    return id === undefined ? [] : this.inChannel(id);
  }

  waitFor(pred: (m: PostedMessage) => boolean, timeoutMs: number, what: string): Promise<PostedMessage> {
    return this.#waiters.wait(pred, timeoutMs, what, this.posted);
  }

  close(): void {
    this.#waiters.close();
  }
}

/** A Create Message body's limits: the message's (validateMessage), then the nonce's. */
function validateCreate(body: Record<string, unknown>, files: FileInfo[]): RouteResult | null {
  const invalid = validateMessage(body, [], { files });
  const tree: ErrorTree = invalid && isRecord(invalid.body) ? (invalid.body.errors as ErrorTree) : {};
  const { nonce } = body;
  if (typeof nonce === 'string') {
    if (nonce.length > 25)
      fieldError(tree, ['nonce'], 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
  } else if (typeof nonce === 'number') {
    if (!Number.isSafeInteger(nonce))
      fieldError(tree, ['nonce'], 'NUMBER_TYPE_COERCE', 'Value must be an integer.');
  } else if (nonce !== undefined && nonce !== null) {
    fieldError(tree, ['nonce'], 'BASE_TYPE_STRING', 'Must be a string.');
  }
  const enforce = body.enforce_nonce;
  if (enforce !== undefined && enforce !== null && typeof enforce !== 'boolean') {
    fieldError(tree, ['enforce_nonce'], 'BASE_TYPE_BOOLEAN', 'Must be either true or false.');
  }
  return Object.keys(tree).length > 0 ? errors.invalidForm(tree) : null;
}

const USER_MENTION = /<@!?(\d{15,21})>/g;
const ROLE_MENTION = /<@&(\d{15,21})>/g;
const EVERYONE_MENTION = /@(?:everyone|here)/;

/**
 * Whom a message notifies, as Discord decides it: mentions in the content, kept when
 * allowed_mentions allows them (absent: all types parsed, as for a bot's channel message), a role
 * only if mentionable or the author has Mention Everyone, @everyone/@here only with Mention
 * Everyone. `bits` are the author's permissions in the channel (undefined: a DM, no roles there).
 */
export function pingsOf(
  content: string,
  allowedMentions: unknown,
  guild: GuildFixture | undefined,
  bits: bigint | undefined,
): MessagePings {
  const allowed = isRecord(allowedMentions)
    ? allowedMentions
    : { parse: ['users', 'roles', 'everyone'] as unknown[] };
  const parse = Array.isArray(allowed.parse) ? allowed.parse : [];
  const listed = (kind: 'users' | 'roles') =>
    Array.isArray(allowed[kind]) ? (allowed[kind] as unknown[]) : [];
  const users = unique([...content.matchAll(USER_MENTION)].map((m) => m[1]!)).filter(
    (id) => parse.includes('users') || listed('users').includes(id),
  );
  const roles = guild
    ? unique([...content.matchAll(ROLE_MENTION)].map((m) => m[1]!)).filter((id) => {
        const role = guild.roles.find((r) => r.id === id);
        if (!role || role.id === guild.id) return false;
        if (!parse.includes('roles') && !listed('roles').includes(id)) return false;
        return canPingRole(role, bits ?? 0n);
      })
    : [];
  const everyone =
    guild !== undefined &&
    EVERYONE_MENTION.test(content) &&
    parse.includes('everyone') &&
    hasPermission(bits ?? 0n, Permission.MentionEveryone);
  return { everyone, users, roles };
}

function unique(ids: string[]): string[] {
  return [...new Set(ids)];
}
