/**
 * The discord.js client as this bot needs it: the Guilds intent only (no privileged intents),
 * caches trimmed to what the bot reads (guilds and their channels; no messages, presences,
 * members beyond its own, emojis, stickers, threads, voice states ...), and no mentions parsed
 * in anything it sends. The channels a report or /up names are kept by ChannelNames.
 */
import { Client, GatewayIntentBits, Options } from 'discord.js';
import { ChannelNames, type ChannelNamesOptions } from './channel-names.js';
import { NO_MENTIONS } from './respond.js';

export interface DiscordClientOptions {
  /** REST base including /api (Discord's by default); the gateway address comes from GET /gateway/bot through it. */
  apiUrl?: string | undefined;
  /**
   * 'auto' (default): as many shards as Discord recommends, all in this process; a number: that
   * many; 'managed': a process spawned by the ShardingManager, which tells discord.js its shards.
   */
  shards?: 'auto' | 'managed' | number;
  /** Where a gateway dispatch ChannelNames could not read is reported. */
  onChannelNamesError?: ChannelNamesOptions['onError'];
}

/** The client and what the bot keeps of channels beside it. */
export interface DiscordConnection {
  client: Client;
  channels: ChannelNames;
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

export function createDiscordClient(options: DiscordClientOptions = {}): DiscordConnection {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds],
    makeCache: trimmedCache(),
    allowedMentions: NO_MENTIONS,
    ...(options.shards === 'managed'
      ? {}
      : typeof options.shards === 'number'
        ? { shardCount: options.shards }
        : { shards: 'auto' as const }),
    ...(options.apiUrl ? { rest: { api: options.apiUrl } } : {}),
  });
  const channels = new ChannelNames(
    options.onChannelNamesError ? { onError: options.onChannelNamesError } : {},
  );
  channels.listen(client);
  return { client, channels };
}
