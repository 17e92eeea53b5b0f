// A local Discord stand-in: a real HTTP + WebSocket server on 127.0.0.1 speaking enough of Discord API v10
// for an unmodified discord.js Client to log in, become ready, receive interactions and answer them,
// and post messages of its own in channels and DMs; tests change channels, roles, permissions and
// DMs under it (with the gateway events Discord sends) and fail or hold its posts.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LOCALHOST } from '../support/local.js';
import { ChannelMessages, DEFAULT_NONCE_WINDOW_MS } from './channel-messages.js';
import {
  buttonRow,
  type ChannelFixture,
  type ChannelInput,
  channelPayload,
  type GuildFixture,
  guildCreatePayload,
  type MemberFixture,
  makeBotUser,
  makeCommandInteraction,
  makeComponentInteraction,
  makeMember,
  makeMessage,
  makeRole,
  makeTextChannel,
  makeUser,
  type RoleFixture,
  type RoleInput,
  shardForGuild,
  snowflake,
  type UserFixture,
  withBotMember,
} from './fixtures.js';
import { Gateway } from './gateway.js';
import { GlobalLimiter, rateLimitedBody, rateLimitedHeaders } from './global-limit.js';
import { PostHolds } from './holds.js';
import { type InteractionRecord, InteractionStore, newInteractionRecord } from './interactions.js';
import { makeModalSubmit } from './modals.js';
import { makeOverwrite, permissionString } from './permissions.js';
import { APPLICATION_FLAGS, bucketOf, createRestHandler, type RestHost } from './rest.js';
import { checkRequest, type SpecViolation, warmUp } from './spec/conformance.js';
import type {
  DiscordStandIn,
  GatewayLogEntry,
  InteractionDelivery,
  InteractionHandle,
  PostFailureOptions,
  RecordedRestRequest,
  RestFaultRule,
  SendButtonOptions,
  SendCommandOptions,
  SendModalOptions,
  StandInMessaging,
  StandInOptions,
} from './types.js';
import { WaitList } from './waiters.js';

const DEFAULT_TIMEOUT_MS = 5000;

interface FaultState {
  rule: RestFaultRule;
  remaining: number;
}

/**
 * Copies a fixture (so the stand-in can update its channels and roles without touching the
 * test's objects) and makes sure the bot is a member.
 */
function normalizeGuild(guild: GuildFixture, bot: UserFixture): GuildFixture {
  return withBotMember(
    {
      ...guild,
      roles: guild.roles.map((role) => ({ ...role })),
      members: guild.members.map((member) => ({ ...member, roles: [...member.roles] })),
      channels: guild.channels.map((channel) => ({
        ...channel,
        permission_overwrites: [...channel.permission_overwrites],
      })),
      unavailable: false,
    },
    bot,
  );
}

const DEFAULT_FAILURE_MESSAGES: Record<number, string> = {
  403: 'Missing Permissions',
  404: 'Unknown Channel',
  500: '500: Internal Server Error',
  502: '502: Bad Gateway',
  503: '503: Service Unavailable',
  504: '504: Gateway Timeout',
};

/** The fault a failing Create Message answers with: Discord's error body, or a 429 discord.js waits out. */
function postFailureRule(channelId: string, failure: PostFailureOptions): RestFaultRule {
  const path = `/channels/${channelId}/messages`;
  const rule: RestFaultRule = {
    method: 'POST',
    path: new RegExp(`^${path}$`),
    status: failure.status,
    times: failure.times ?? 1,
  };
  if (failure.status === 429) {
    const retryAfter = failure.retryAfter ?? 0.2;
    const global = failure.global ?? false;
    rule.body = {
      ...rateLimitedBody(retryAfter, global, failure.message),
      ...(failure.code === undefined ? {} : { code: failure.code }),
    };
    rule.headers = {
      ...rateLimitedHeaders(retryAfter, global),
      ...(global
        ? {}
        : {
            'x-ratelimit-bucket': bucketOf(path),
            'x-ratelimit-limit': '5',
            'x-ratelimit-remaining': '0',
            'x-ratelimit-reset': ((Date.now() + retryAfter * 1000) / 1000).toFixed(3),
            'x-ratelimit-reset-after': retryAfter.toFixed(3),
          }),
    };
  } else {
    rule.body = {
      message: failure.message ?? DEFAULT_FAILURE_MESSAGES[failure.status] ?? `${failure.status}`,
      code: failure.code ?? 0,
    };
  }
  return rule;
}

export async function startDiscordStandIn(options: StandInOptions = {}): Promise<DiscordStandIn> {
  const token = options.token ?? 'stand-in-token';
  const applicationId = options.applicationId ?? snowflake();
  const botUser = makeBotUser(options.botUser ?? { id: applicationId, username: 'Stand-in Bot' });
  const shardCount = Math.max(1, Math.floor(options.shards ?? 1));
  const maxConcurrency = Math.max(1, options.maxConcurrency ?? shardCount);
  const heartbeatIntervalMs = options.heartbeatIntervalMs ?? 41_250;
  const deadlineMs = options.interactionDeadlineMs ?? 3000;
  const restLatencyMs = options.restLatencyMs ?? 0;
  const nonceWindowMs = options.nonceWindowMs ?? DEFAULT_NONCE_WINDOW_MS;
  const defaultUser = makeUser({ id: snowflake(), username: 'stand_in_user', global_name: 'Stand-in User' });
  warmUp();

  const guilds = new Map<string, GuildFixture>();
  const users = new Map<string, UserFixture>();
  const requests: RecordedRestRequest[] = [];
  const specViolations: SpecViolation[] = [];
  const requestWaiters = new WaitList<RecordedRestRequest>();
  const gatewayLog: GatewayLogEntry[] = [];
  const heartbeats: Array<{ shardId: number | null; at: number }> = [];
  const faults: FaultState[] = [];
  const commands = new Map<string, Map<string, Record<string, unknown>>>();
  const store = new InteractionStore(applicationId, botUser, deadlineMs);
  const messages = new ChannelMessages({ guilds, users, botUser, nonceWindowMs });
  const holds = new PostHolds();
  const globalLimit = options.globalRateLimit ? new GlobalLimiter(options.globalRateLimit, token) : undefined;
  let sessionStarts = 0;
  let port = 0;

  const addUser = (user: UserFixture): void => {
    users.set(user.id, user);
    if (user.dmsClosed) messages.setDmsClosed(user.id, true);
  };
  const ensureOwner = (guild: GuildFixture): void => {
    if (!users.has(guild.owner_id)) {
      users.set(
        guild.owner_id,
        makeUser({ id: guild.owner_id, username: `owner_${guild.owner_id.slice(-6)}` }),
      );
    }
    for (const member of guild.members) if (!users.has(member.user.id)) addUser(member.user);
  };
  addUser(botUser);
  addUser(defaultUser);
  for (const user of options.users ?? []) addUser(user);
  for (const guild of options.guilds ?? []) {
    const normalized = normalizeGuild(guild, botUser);
    guilds.set(normalized.id, normalized);
    ensureOwner(normalized);
  }

  const guildsOfShard = (shardId: number, count: number): GuildFixture[] => {
    const out: GuildFixture[] = [];
    for (const guild of guilds.values()) if (shardForGuild(guild.id, count) === shardId) out.push(guild);
    return out;
  };

  const gateway = new Gateway({
    token,
    shardCount,
    heartbeatIntervalMs,
    sessionReplayMax: options.sessionReplayMax ?? 50_000,
    resumeUrl: () => `ws://${LOCALHOST}:${port}/gateway/resume`,
    readyData: (shardId, count, sessionId) => ({
      v: 10,
      user_settings: {},
      user: { ...botUser, bot: true, verified: true, mfa_enabled: false, email: null },
      guilds: guildsOfShard(shardId, count).map((g) => ({ id: g.id, unavailable: true })),
      session_id: sessionId,
      session_type: 'normal',
      resume_gateway_url: `ws://${LOCALHOST}:${port}/gateway/resume`,
      shard: [shardId, count],
      application: { id: applicationId, flags: APPLICATION_FLAGS },
      private_channels: [],
      relationships: [],
      presences: [],
      guild_join_requests: [],
      geo_ordered_rtc_regions: ['stand-in'],
      auth: {},
      _trace: ['["gateway-stand-in",{"micros":0}]'],
    }),
    guildCreates: (shardId, count, largeThreshold) =>
      guildsOfShard(shardId, count)
        .filter((g) => !g.unavailable)
        .map((g) => guildCreatePayload(g, largeThreshold)),
    log: (entry) => {
      if (entry.kind === 'identify') sessionStarts += 1;
      gatewayLog.push(entry);
    },
    heartbeat: (shardId, at) => {
      heartbeats.push({ shardId, at });
    },
  });

  const restHost: RestHost = {
    token,
    applicationId,
    botUser,
    shardCount,
    maxConcurrency,
    restLatencyMs,
    guilds,
    users,
    interactions: store,
    messages,
    holds,
    commands,
    gatewayUrl: () => `ws://${LOCALHOST}:${port}/gateway`,
    sessionStarted: () => sessionStarts,
    sessionStartLimit: options.sessionStartLimit ?? 1000,
    record: (request: RecordedRestRequest, interaction: InteractionRecord | undefined) => {
      requests.push(request);
      // After the answer is written: Discord does not refuse an undeclared field, it drops it.
      specViolations.push(...checkRequest(request.method, request.path, request.body));
      if (interaction) {
        interaction.requests.push(request);
        interaction.waiters.notify(request);
      }
      requestWaiters.notify(request);
    },
    takeGlobal: (authorization, path) => globalLimit?.take(authorization, path),
    takeFault: (method, path) => {
      for (const state of faults) {
        const { rule } = state;
        if (rule.method !== undefined && rule.method.toUpperCase() !== method) continue;
        rule.path.lastIndex = 0;
        if (!rule.path.test(path)) continue;
        state.remaining -= 1;
        if (state.remaining <= 0) faults.splice(faults.indexOf(state), 1);
        return rule;
      }
      return undefined;
    },
  };

  const restHandler = createRestHandler(restHost);
  const server: Server = createServer(restHandler);
  // Like Discord's edge (Cloudflare: an idle HTTP/1.1 connection is kept 400 s, and no Keep-Alive
  // header says so): idle connections stay open, and the client's own keep-alive policy decides.
  // Node's default (5 s, announced in every answer) would have every client drop its idle
  // connections after about 3 s. close() still ends them all.
  server.keepAliveTimeout = 0;
  // Connections opened to the REST API: every one accepted but those upgraded to the gateway,
  // whether or not a request came on it (undici opens some only to close them unused). Tells a
  // client that reuses warm connections from one that opens one per request.
  let accepted = 0;
  let upgraded = 0;
  server.on('connection', () => {
    accepted += 1;
  });
  server.on('upgrade', (req, socket, head) => {
    upgraded += 1;
    gateway.handleUpgrade(req, socket, head);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, LOCALHOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;

  // -- interactions ------------------------------------------------------------------------------

  const resolveTarget = (opts: { guildId?: string; channelId?: string }, messageChannelId?: string) => {
    if (opts.guildId === undefined) {
      const channel = makeTextChannel({
        id: opts.channelId ?? messageChannelId ?? snowflake(),
        type: 1,
        name: '',
      });
      return { guild: undefined, channel, shardId: 0 };
    }
    const guild = guilds.get(opts.guildId);
    if (!guild) throw new Error(`Discord stand-in: unknown guild ${opts.guildId}`);
    const wanted = opts.channelId ?? messageChannelId;
    let channel: ChannelFixture | undefined =
      wanted === undefined
        ? guild.channels.find((c) => c.type === 0 || c.type === 5)
        : guild.channels.find((c) => c.id === wanted);
    if (!channel) {
      if (wanted !== undefined)
        throw new Error(`Discord stand-in: unknown channel ${wanted} in guild ${guild.id}`);
      throw new Error(`Discord stand-in: guild ${guild.id} has no text channel`);
    }
    channel = { ...channel };
    return { guild, channel, shardId: shardForGuild(guild.id, shardCount) };
  };

  const resolveUser = (input: SendCommandOptions['user']): UserFixture => {
    if (!input) return defaultUser;
    const known = users.get(input.id);
    const user = makeUser({
      id: input.id,
      username: input.username,
      global_name: input.global_name !== undefined ? input.global_name : (known?.global_name ?? null),
    });
    users.set(user.id, user);
    return user;
  };

  const commandIdFor = (name: string, type: number, guildId: string | undefined): string | undefined => {
    const lists = [guildId === undefined ? undefined : commands.get(guildId), commands.get('')];
    for (const list of lists) {
      for (const cmd of list?.values() ?? []) {
        if (cmd.name === name && cmd.type === type && typeof cmd.id === 'string') return cmd.id;
      }
    }
    return undefined;
  };

  /** Writes the INTERACTION_CREATE; its time is the interaction's sentAt. `json` is `payload` serialized beforehand. */
  const dispatchRecord = (record: InteractionRecord, json?: string): void => {
    store.register(record);
    record.sentAt = performance.now();
    record.delivery = gateway.dispatch(record.shardId, 'INTERACTION_CREATE', record.payload, json);
  };

  const deliver = (record: InteractionRecord): InteractionHandle => {
    dispatchRecord(record);
    return store.handle(record, DEFAULT_TIMEOUT_MS);
  };

  /** What every interaction payload holds of where it comes from: guild, channel, user, roles, locale. */
  const origin = (
    opts: SendCommandOptions | SendButtonOptions | SendModalOptions,
    target: ReturnType<typeof resolveTarget>,
    user: UserFixture,
  ) => ({
    applicationId,
    botId: botUser.id,
    ...(target.guild ? { guild: target.guild } : {}),
    channel: target.channel,
    user,
    ...(opts.roles ? { roles: opts.roles } : {}),
    ...(opts.locale ? { locale: opts.locale } : {}),
    ...('permissions' in opts && opts.permissions !== undefined ? { permissions: opts.permissions } : {}),
    ...('appPermissions' in opts && opts.appPermissions !== undefined
      ? { appPermissions: opts.appPermissions }
      : {}),
    ...('externalGuild' in opts && opts.externalGuild
      ? {
          externalGuild: { id: opts.externalGuild.id, locale: opts.externalGuild.locale ?? 'en-US' },
          userInstalled: true,
        }
      : {}),
    ...('privateChannel' in opts && opts.privateChannel ? { privateChannel: true } : {}),
  });

  /** A server the bot is not in (a user-installed command there): a text channel of it, its shard. */
  const externalTarget = (guildId: string, channelId: string | undefined) => ({
    guild: undefined,
    channel: makeTextChannel({ id: channelId ?? snowflake() }),
    shardId: shardForGuild(guildId, shardCount),
  });

  const buildCommand = (opts: SendCommandOptions): InteractionRecord => {
    if (opts.externalGuild && opts.guildId !== undefined) {
      throw new Error(
        'Discord stand-in: a command is in a guild of the stand-in or an external one, not both',
      );
    }
    const target = opts.externalGuild
      ? externalTarget(opts.externalGuild.id, opts.channelId)
      : resolveTarget(opts);
    const { guild, shardId } = target;
    const user = resolveUser(opts.user);
    const commandType = opts.type ?? 1;
    const registered = commandIdFor(opts.name, commandType, guild?.id);
    const payload = makeCommandInteraction({
      ...origin(opts, target, user),
      name: opts.name,
      commandType,
      lookupUser: (id) => users.get(id),
      ...(registered ? { commandId: registered } : {}),
      ...(opts.options ? { options: opts.options } : {}),
      ...(opts.resolved ? { resolved: opts.resolved } : {}),
      ...(opts.targetId !== undefined ? { targetId: opts.targetId } : {}),
      ...(opts.autocomplete ? { autocomplete: true } : {}),
      ...(guild && commands.get(guild.id)?.has(registered ?? '') ? { commandGuildId: guild.id } : {}),
    });
    return newInteractionRecord(payload, user, shardId);
  };

  const sendCommand = (opts: SendCommandOptions): InteractionHandle => deliver(buildCommand(opts));

  // A burst as Discord's gateway delivers one: every payload is built and serialized first, then
  // the dispatches are written back to back, so the stand-in's own work of making them is not
  // counted in any interaction's time (sentAt) nor spread between the dispatches.
  const sendCommands = (list: readonly SendCommandOptions[]): InteractionHandle[] => {
    const records = list.map(buildCommand);
    const json = records.map((record) => JSON.stringify(record.payload));
    records.forEach((record, i) => {
      dispatchRecord(record, json[i]);
    });
    return records.map((record) => store.handle(record, DEFAULT_TIMEOUT_MS));
  };

  const sendButton = (opts: SendButtonOptions): InteractionHandle => {
    // A message of an interaction's, or one the bot posted in a channel or a DM (a reminder).
    const posted =
      opts.messageId === undefined
        ? undefined
        : messages.posted.find((p) => p.id === opts.messageId)?.message;
    const known =
      opts.messageId === undefined
        ? undefined
        : (store.getMessage(opts.messageId) ?? structuredClone(posted));
    if (posted && known && !store.getMessage(known.id)) store.putMessage(known);
    const target = resolveTarget(opts, known?.channel_id);
    const { channel, shardId } = target;
    const user = resolveUser(opts.user);
    let message = known;
    if (!message) {
      message = makeMessage({
        id: opts.messageId ?? snowflake(),
        channelId: channel.id,
        author: botUser,
        content: 'Stand-in message with a component',
        components: [buttonRow(opts.customId)],
        applicationId,
      });
      store.putMessage(message);
    }
    const payload = makeComponentInteraction({
      ...origin(opts, target, user),
      customId: opts.customId,
      message: structuredClone(message),
      ...(opts.componentType !== undefined ? { componentType: opts.componentType } : {}),
      ...(opts.values ? { values: opts.values } : {}),
    });
    const record = newInteractionRecord(payload, user, shardId);
    record.componentMessageId = message.id;
    return deliver(record);
  };

  const sendModal = (opts: SendModalOptions): InteractionHandle => {
    const target = resolveTarget(opts);
    const user = resolveUser(opts.user);
    const payload = makeModalSubmit({
      ...origin(opts, target, user),
      modal: opts.modal,
      answers: opts.answers,
    });
    return deliver(newInteractionRecord(payload, user, target.shardId));
  };

  // -- guild control -------------------------------------------------------------------------------

  const addGuild = (guild: GuildFixture): void => {
    const normalized = normalizeGuild(guild, botUser);
    guilds.set(normalized.id, normalized);
    ensureOwner(normalized);
    gateway.dispatch(
      shardForGuild(normalized.id, shardCount),
      'GUILD_CREATE',
      guildCreatePayload(normalized),
    );
  };

  const removeGuild = (id: string, unavailable = false): void => {
    const guild = guilds.get(id);
    if (!guild) return;
    if (unavailable) guild.unavailable = true;
    else {
      guilds.delete(id);
      messages.guildLeft(guild);
    }
    gateway.dispatch(
      shardForGuild(id, shardCount),
      'GUILD_DELETE',
      unavailable ? { id, unavailable: true } : { id },
    );
  };

  const messaging = messagingControls({
    guilds,
    users,
    messages,
    holds,
    dispatch: (guild, event, data) => gateway.dispatch(shardForGuild(guild.id, shardCount), event, data),
    addFault: (rule) => faults.push({ rule, remaining: rule.times ?? 1 }),
  });

  const standIn: DiscordStandIn = {
    ...messaging,
    restUrl: `http://${LOCALHOST}:${port}/api`,
    gatewayUrl: `ws://${LOCALHOST}:${port}/gateway`,
    applicationId,
    token,
    botUser,
    shardCount,
    requests,
    guilds,
    gatewayLog,
    heartbeats,
    restConnections: () => accepted - upgraded,
    globalRateLimited: () => globalLimit?.limited ?? 0,
    globalCounted: () => globalLimit?.counted ?? 0,
    connectedShards: () => gateway.connectedShards(),
    waitForShards: (n, timeoutMs = DEFAULT_TIMEOUT_MS) => gateway.waitForShards(n, timeoutMs),
    disconnectShard: (shardId, closeCode) => gateway.disconnect(shardId, closeCode),
    setIdentifyDelay: (shardId, ms) => gateway.setIdentifyDelay(shardId, ms),
    requestReconnect: (shardId) => gateway.requestReconnect(shardId),
    invalidateSession: (shardId) => gateway.invalidateSession(shardId),
    dropHeartbeatAcks: (shardId, on) => gateway.dropHeartbeatAcks(shardId, on),
    expireDroppedSessions: () => gateway.expireDroppedSessions(),
    addGuild,
    removeGuild,
    addUser,
    dispatch: (shardId: number, event: string, data: unknown): InteractionDelivery =>
      gateway.dispatch(shardId, event, data),
    sendCommand,
    sendCommands,
    sendButton,
    sendModal,
    gatewayBacklog: () => gateway.backlog(),
    restSettled: async () => {
      // A request whose bytes came in before now is read at the next turns of the loop.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await restHandler.idle();
    },
    forget: (ids) => {
      const gone = store.forget(new Set(ids));
      if (gone.length === 0) return;
      const theirs = new Set(gone.flatMap((record) => record.requests));
      let kept = 0;
      for (const request of requests) if (!theirs.has(request)) requests[kept++] = request;
      requests.length = kept;
    },
    injectRestFault: (rule) => {
      faults.push({ rule, remaining: rule.times ?? 1 });
    },
    clearRestFaults: () => {
      faults.length = 0;
    },
    waitForRequest: (pred, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      requestWaiters.wait(pred, timeoutMs, 'a matching REST request', requests),
    commands: (guildId?: string) => [...(commands.get(guildId ?? '')?.values() ?? [])],
    specViolations: () => [...specViolations],
    close: async () => {
      requestWaiters.close();
      store.close();
      holds.close();
      messages.close();
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return standIn;
}

// -- channels, roles, members, DMs and messages ------------------------------------------------------

interface MessagingHost {
  guilds: Map<string, GuildFixture>;
  users: Map<string, UserFixture>;
  messages: ChannelMessages;
  holds: PostHolds;
  /** Dispatches an event on the guild's shard. */
  dispatch(guild: GuildFixture, event: string, data: unknown): void;
  addFault(rule: RestFaultRule): void;
}

function messagingControls(host: MessagingHost): StandInMessaging {
  const { guilds, messages, holds } = host;
  const guildOf = (guildId: string): GuildFixture => {
    const guild = guilds.get(guildId);
    if (!guild) throw new Error(`Discord stand-in: unknown guild ${guildId}`);
    return guild;
  };
  const channelOf = (channelId: string) => {
    const found = messages.findGuildChannel(channelId);
    if (!found) throw new Error(`Discord stand-in: unknown guild channel ${channelId}`);
    return found;
  };
  const roleOf = (guild: GuildFixture, roleId: string): RoleFixture => {
    const role = guild.roles.find((r) => r.id === roleId);
    if (!role) throw new Error(`Discord stand-in: unknown role ${roleId} in guild ${guild.id}`);
    return role;
  };
  const channelUpdate = (guild: GuildFixture, channel: ChannelFixture): void =>
    host.dispatch(guild, 'CHANNEL_UPDATE', channelPayload(channel, guild.id));
  const roleUpdate = (guild: GuildFixture, role: RoleFixture): void =>
    host.dispatch(guild, 'GUILD_ROLE_UPDATE', { guild_id: guild.id, role: { ...role } });
  const memberUpdate = (guild: GuildFixture, member: MemberFixture): void => {
    const { permissions: _p, ...rest } = member;
    host.dispatch(guild, 'GUILD_MEMBER_UPDATE', { ...rest, guild_id: guild.id });
  };
  const isChannelFixture = (c: ChannelFixture | ChannelInput): c is ChannelFixture =>
    'permission_overwrites' in c;
  const isRoleFixture = (r: RoleFixture | RoleInput): r is RoleFixture => 'colors' in r;

  return {
    addChannel: (guildId, input = {}) => {
      const guild = guildOf(guildId);
      const channel = isChannelFixture(input)
        ? { ...input, permission_overwrites: [...input.permission_overwrites] }
        : makeTextChannel({ position: guild.channels.length, ...input });
      guild.channels.push(channel);
      host.dispatch(guild, 'CHANNEL_CREATE', channelPayload(channel, guild.id));
      return channel;
    },
    deleteChannel: (channelId) => {
      const { guild, channel } = channelOf(channelId);
      guild.channels.splice(guild.channels.indexOf(channel), 1);
      host.dispatch(guild, 'CHANNEL_DELETE', channelPayload(channel, guild.id));
    },
    setChannelOverwrites: (channelId, overwrites) => {
      const { guild, channel } = channelOf(channelId);
      channel.permission_overwrites = overwrites.map(makeOverwrite);
      channelUpdate(guild, channel);
    },
    addRole: (guildId, input = {}) => {
      const guild = guildOf(guildId);
      const role = isRoleFixture(input) ? { ...input } : makeRole({ position: guild.roles.length, ...input });
      guild.roles.push(role);
      host.dispatch(guild, 'GUILD_ROLE_CREATE', { guild_id: guild.id, role: { ...role } });
      return role;
    },
    updateRole: (guildId, roleId, patch) => {
      const guild = guildOf(guildId);
      const role = roleOf(guild, roleId);
      if (patch.permissions !== undefined) role.permissions = permissionString(patch.permissions);
      if (patch.mentionable !== undefined) role.mentionable = patch.mentionable;
      if (patch.name !== undefined) role.name = patch.name;
      roleUpdate(guild, role);
    },
    setRolePermissions: (guildId, roleId, permissions) => {
      const guild = guildOf(guildId);
      const role = roleOf(guild, roleId);
      role.permissions = permissionString(permissions);
      roleUpdate(guild, role);
    },
    deleteRole: (guildId, roleId) => {
      const guild = guildOf(guildId);
      if (roleId === guild.id) throw new Error('Discord stand-in: @everyone cannot be deleted');
      const role = roleOf(guild, roleId);
      guild.roles.splice(guild.roles.indexOf(role), 1);
      for (const member of guild.members) member.roles = member.roles.filter((id) => id !== roleId);
      host.dispatch(guild, 'GUILD_ROLE_DELETE', { guild_id: guild.id, role_id: roleId });
      for (const channel of guild.channels) {
        const kept = channel.permission_overwrites.filter((o) => o.id !== roleId);
        if (kept.length === channel.permission_overwrites.length) continue;
        channel.permission_overwrites = kept;
        channelUpdate(guild, channel);
      }
    },
    setMemberRoles: (guildId, userId, roles) => {
      const guild = guildOf(guildId);
      let member = guild.members.find((m) => m.user.id === userId);
      if (!member) {
        const user = host.users.get(userId);
        if (!user) throw new Error(`Discord stand-in: unknown user ${userId}`);
        member = makeMember(user);
        guild.members.push(member);
      }
      member.roles = [...roles];
      memberUpdate(guild, member);
    },
    setDmsClosed: (userId, closed = true) => messages.setDmsClosed(userId, closed),
    dmChannelId: (userId) => messages.dmChannelId(userId),
    openDmChannel: (userId) => {
      const id = messages.openDm(userId);
      if (id === undefined) throw new Error(`Discord stand-in: unknown user ${userId}`);
      return id;
    },
    failPosts: (channelId, failure) => host.addFault(postFailureRule(channelId, failure)),
    holdPosts: (channelId) => holds.hold(channelId),
    releasePosts: (channelId, how = 'complete') => holds.release(channelId, how),
    heldPosts: (channelId) => holds.list(channelId),
    waitForHeldPost: (channelId, timeoutMs = DEFAULT_TIMEOUT_MS) => holds.waitFor(channelId, timeoutMs),
    postedMessages: () => [...messages.posted],
    forgetMessagesBefore: (receivedAt) => messages.forgetBefore(receivedAt),
    channelMessages: (channelId) => messages.inChannel(channelId),
    liveMessages: (channelId) => messages.inChannel(channelId).filter((m) => m.deletedAt === undefined),
    dmMessages: (userId) => messages.toUser(userId),
    waitForMessage: (channelId, pred = () => true, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      messages.waitFor(
        (m) => m.channelId === channelId && pred(m),
        timeoutMs,
        `a message in channel ${channelId}`,
      ),
    waitForDm: (userId, pred = () => true, timeoutMs = DEFAULT_TIMEOUT_MS) =>
      messages.waitFor((m) => m.recipientId === userId && pred(m), timeoutMs, `a DM to user ${userId}`),
  };
}
