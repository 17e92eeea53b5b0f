/**
 * The discord.js client as this bot needs it: the Guilds intent only (no privileged intents),
 * caches trimmed to what the bot reads (guilds and their channels; no messages, presences,
 * members beyond its own, emojis, stickers, threads, voice states ...), no mentions parsed
 * in anything it sends, and a bounded pool of keep-alive connections to Discord's REST API
 * (rest-agent.ts).
 */
import type { RESTOptions } from '@discordjs/rest';
import { Client, GatewayIntentBits, Options } from 'discord.js';
import type { Dispatcher } from 'undici';
import { NO_MENTIONS } from './respond.js';
import { createDiscordRestAgent } from './rest-agent.js';

export interface DiscordClientOptions {
  /** REST base including /api (Discord's by default); the gateway address comes from GET /gateway/bot through it. */
  apiUrl?: string | undefined;
  /**
   * 'auto' (default): as many shards as Discord recommends, all in this process; a number: that
   * many; 'managed': a process spawned by the ShardingManager, which tells discord.js its shards.
   */
  shards?: 'auto' | 'managed' | number;
  /** Where REST requests go (default: a new createDiscordRestAgent(), left open). */
  restAgent?: Dispatcher;
}

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
  });
}

export function createDiscordClient(options: DiscordClientOptions = {}): Client {
  return new Client({
    intents: [GatewayIntentBits.Guilds],
    makeCache: trimmedCache(),
    allowedMentions: NO_MENTIONS,
    ...(options.shards === 'managed'
      ? {}
      : typeof options.shards === 'number'
        ? { shardCount: options.shards }
        : { shards: 'auto' as const }),
    rest: {
      ...(options.apiUrl ? { api: options.apiUrl } : {}),
      // Our undici (7) serves @discordjs/rest's own copy (6): undici 7 takes the handlers undici 6's
      // request() hands it as they are (the same dispatcher protocol); only the two copies'
      // FormData typings differ, hence the cast. The end-to-end tests run every request through it.
      agent: (options.restAgent ?? createDiscordRestAgent()) as unknown as RESTOptions['agent'],
    },
  });
}
