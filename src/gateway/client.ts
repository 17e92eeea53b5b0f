/**
 * The discord.js client as this bot needs it: the Guilds intent only (no privileged intents),
 * caches trimmed to what the bot reads (the guilds themselves and its own member; no channels,
 * roles, messages, presences, members, emojis, stickers, threads, voice states ...), no mentions
 * parsed in anything it sends, a bounded pool of keep-alive connections to Discord's REST API
 * (rest-agent.ts), and shards on a thread of their own that send each command's deferral from its
 * packet (gateway-thread-strategy.ts). What it needs of channels is kept by ChannelNames.
 *
 * Two addresses: the bot-token requests (look-ups, messages, GET /gateway/bot) go to the REST
 * proxy when there is one (several hosts, one global limit: src/app/rest-proxy.ts), while the
 * interaction answers (answers-rest.ts) and the deferrals (acknowledge.ts, from `directApi`) always
 * go straight to Discord: it does not count them against the global limit, and the proxy would
 * pace them with the rest.
 */
import { DefaultRestOptions, type RESTOptions } from '@discordjs/rest';
import type { IIdentifyThrottler, WebSocketManager } from '@discordjs/ws';
import { Client, GatewayIntentBits, Options } from 'discord.js';
import type { Dispatcher } from 'undici';
import { NO_MENTIONS } from '../render/mentions.js';
import { type AnswersApart, sendAnswersApart } from './answers-rest.js';
import { ChannelNames, type ChannelNamesOptions } from './channel-names.js';
import type { InteractionTap } from './gateway-tap.js';
import { GatewayThreadStrategy } from './gateway-thread-strategy.js';
import { DISCORD_GLOBAL_REQUESTS_PER_SECOND, paceGlobally } from './global-pace.js';
import { createDiscordRestAgent, encodeFormsFirst } from './rest-agent.js';
import type { RestHealth } from './rest-health.js';

export interface DiscordClientOptions {
  /** REST base including /api (Discord's by default); the gateway address comes from GET /gateway/bot through it. */
  apiUrl?: string | undefined;
  /** The shared REST proxy, including /api: every request but the interactions' goes there. */
  restProxyUrl?: string | undefined;
  /** Discord's global limit for the token, requests a second (DISCORD_GLOBAL_RATE_LIMIT; 50). */
  globalPerSecond?: number;
  /**
   * 'auto' (default): as many shards as Discord recommends, all in this process; a number: that
   * many; 'managed': a process spawned by the ShardingManager, which tells discord.js its shards;
   * ids and a count: one host of several (SHARD_IDS of SHARD_COUNT).
   */
  shards?: 'auto' | 'managed' | number | { ids: readonly number[]; count: number };
  /** Where a gateway dispatch ChannelNames could not read is reported. */
  onChannelNamesError?: ChannelNamesOptions['onError'];
  /** Where REST requests go (default: a new createDiscordRestAgent(), left open). */
  restAgent?: Dispatcher;
  /** The IDENTIFY throttle (default: discord.js's, for this process's shards only). */
  identifyThrottler?: (manager: WebSocketManager) => Promise<IIdentifyThrottler>;
  /** Told of every request's end and every 429 (rest-health.ts): the operator's lines and metric. */
  restHealth?: RestHealth;
}

/** The client, what the bot keeps of channels beside it, and where interactions go first. */
export interface DiscordConnection {
  client: Client;
  /** Discord's REST base the interactions' own requests go to: apiUrl, never the proxy. */
  directApi: string;
  channels: ChannelNames;
  /** What the bot hooks into the gateway: the deferral table, the thread's deferrals, the packets, the sessions (gateway-tap.ts). */
  interactions: InteractionTap;
  /** The interaction answers' REST (answers-rest.ts): closed at stop, ending their retries. */
  answers: AnswersApart;
}

/**
 * Caches discord.js does not support limiting ("unsupported and breaks functionality"), turned
 * off: with the Guilds intent, channels and roles were about three quarters of the bot's memory
 * per guild. What breaks, and why the bot does not mind (test/e2e/uncached.test.ts holds it to
 * that, test/unit/uncached-reads.test.ts keeps the code from reading them):
 * - `interaction.channel` is null (it reads the channel cache): /up takes the channel's name from
 *   the interaction's own payload (ChannelNames).
 * - `guild.channels`, `guild.systemChannel` and the other channel getters, `guild.roles` are empty
 *   or null, and so `roles.everyone`, `member.permissions` and `channel.permissionsFor()` cannot
 *   work: the bot computes no permissions (each interaction carries `appPermissions` and
 *   `memberPermissions`), and the channel a server report names comes from ChannelNames.
 * - Events that need the cached object are not emitted (channelUpdate, channelDelete,
 *   channelPinsUpdate, threadUpdate, threadDelete, the thread member and stage instance events,
 *   roleUpdate, roleDelete), and channelCreate, threadCreate and roleCreate fire for every
 *   create: the bot listens to none of them, and discord.js handles them all without an error.
 * PermissionOverwriteManager stays as it is: overwrites live on channels, so with no channel kept
 * none is kept either; limiting it as well changes nothing measurable and adds a warning.
 * Not in discord.js's CacheWithLimitsOptions type, which lists only the caches it supports limiting.
 */
const UNSUPPORTED_LIMITS: Record<string, number> = {
  ChannelManager: 0,
  GuildChannelManager: 0,
  RoleManager: 0,
};

/** Cache limits: 0 means "never cache"; `keepOverLimit` keeps the bot's own member and user. */
export function trimmedCache(): ReturnType<typeof Options.cacheWithLimits> {
  return Options.cacheWithLimits({
    ApplicationCommandManager: 0,
    ApplicationEmojiManager: 0,
    AutoModerationRuleManager: 0,
    BaseGuildEmojiManager: 0,
    DMMessageManager: 0,
    EntitlementManager: 0,
    GuildBanManager: 0,
    GuildEmojiManager: 0,
    GuildForumThreadManager: 0,
    GuildInviteManager: 0,
    GuildMemberManager: { maxSize: 0, keepOverLimit: (member) => member.id === member.client.user.id },
    GuildMessageManager: 0,
    GuildScheduledEventManager: 0,
    GuildStickerManager: 0,
    GuildTextThreadManager: 0,
    MessageManager: 0,
    PresenceManager: 0,
    ReactionManager: 0,
    ReactionUserManager: 0,
    StageInstanceManager: 0,
    ThreadManager: 0,
    ThreadMemberManager: 0,
    UserManager: { maxSize: 0, keepOverLimit: (user) => user.id === user.client.user.id },
    VoiceStateManager: 0,
    ...UNSUPPORTED_LIMITS,
  });
}

const UNSUPPORTED_WARNING = 'UnsupportedCacheOverwriteWarning';
let warningsFiltered = false;

/**
 * discord.js warns once per process for each cache above, at the first guild, that overriding it
 * "breaks functionality". The override is deliberate and what it breaks is covered by tests, so
 * these three warnings would only alarm whoever reads the output; every other warning, this type
 * for any other manager included, still goes out.
 */
function filterExpectedCacheWarnings(): void {
  if (warningsFiltered) return;
  warningsFiltered = true;
  const expected = Object.keys(UNSUPPORTED_LIMITS).map(
    (manager) => `Overriding the cache handling for ${manager} is unsupported`,
  );
  const emitWarning = process.emitWarning.bind(process) as (
    warning: string | Error,
    ...rest: unknown[]
  ) => void;
  const filtered = (warning: string | Error, ...rest: unknown[]): void => {
    const [typeOrOptions] = rest;
    const type = typeof typeOrOptions === 'string' ? typeOrOptions : undefined;
    if (type === UNSUPPORTED_WARNING && typeof warning === 'string') {
      if (expected.some((text) => warning.startsWith(text))) return;
    }
    emitWarning(warning, ...rest);
  };
  process.emitWarning = filtered as typeof process.emitWarning;
}

export function createDiscordClient(options: DiscordClientOptions = {}): DiscordConnection {
  filterExpectedCacheWarnings();
  const directApi = options.apiUrl || DefaultRestOptions.api;
  const restOptions: Partial<RESTOptions> = {
    api: directApi,
    // Our undici (7) serves @discordjs/rest's own copy (6): undici 7 takes the handlers undici 6's
    // request() hands it as they are (the same dispatcher protocol); only the two copies'
    // FormData typings differ, hence the cast. The end-to-end tests run every request through it.
    agent: (options.restAgent ?? createDiscordRestAgent()) as unknown as RESTOptions['agent'],
    // Except a FormData body, which its undici cannot stream to ours: encoded to bytes first.
    makeRequest: options.restHealth ? options.restHealth.attempts(encodeFormsFirst) : encodeFormsFirst,
    // Alone, @discordjs/rest's own window behind the pace (below) at the same limit; with a proxy,
    // the proxy keeps it.
    globalRequestsPerSecond: options.globalPerSecond ?? DISCORD_GLOBAL_REQUESTS_PER_SECOND,
  };
  const interactions: InteractionTap = {};
  const client = new Client({
    intents: [GatewayIntentBits.Guilds],
    makeCache: trimmedCache(),
    allowedMentions: NO_MENTIONS,
    ws: {
      buildStrategy: (manager) => new GatewayThreadStrategy(manager, interactions),
      ...(options.identifyThrottler ? { buildIdentifyThrottler: options.identifyThrottler } : {}),
    },
    ...(options.shards === 'managed'
      ? {}
      : typeof options.shards === 'number'
        ? { shardCount: options.shards }
        : typeof options.shards === 'object'
          ? // Both, always: an id list without the count routes guilds to the wrong shards.
            { shards: [...options.shards.ids], shardCount: options.shards.count }
          : { shards: 'auto' as const }),
    rest: options.restProxyUrl ? { ...restOptions, api: options.restProxyUrl } : restOptions,
  });
  // Alone, the bot keeps Discord's global limit itself (global-pace.ts); with a REST proxy, the
  // proxy keeps it for every host.
  if (!options.restProxyUrl) paceGlobally(client.rest, options.globalPerSecond);
  // Edits of the original answer and follow-ups never wait behind the look-ups (answers-rest.ts),
  // nor at the proxy, nor behind the pacing: their REST has the direct address, and this wraps the
  // pacing.
  const answers = sendAnswersApart(client.rest, restOptions, () => client.application?.id ?? client.user?.id);
  // Outermost: what every caller got, the interaction answers sent apart included.
  options.restHealth?.watch(client.rest);
  const channels = new ChannelNames(
    options.onChannelNamesError ? { onError: options.onChannelNamesError } : {},
  );
  channels.listen(client);
  return { client, directApi, channels, interactions, answers };
}
