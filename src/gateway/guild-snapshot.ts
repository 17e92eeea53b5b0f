/**
 * A guild as this bot knows it, written back as the GUILD_CREATE that would rebuild it: what a
 * gateway session kept in the store restores before it resumes (gateway-sessions.ts).
 *
 * Only what the bot keeps (client.ts trims discord.js's caches to the guilds themselves): the
 * guild's own fields from discord.js, and the channels from ChannelNames, which keeps what the
 * bot reads of them. No roles, emojis, stickers or members: none is kept, and a list given empty
 * would say they were all deleted (features/reminders/roles.ts reads a GUILD_CREATE's roles).
 * Written by hand and not from discord.js's `toJSON()`, which gives discord.js's own field names
 * and not the gateway's that `Guild._patch` reads back.
 */
import type { Guild } from 'discord.js';
import type { ChannelNames } from './channel-names.js';

/** A GUILD_CREATE's `d`, as far as the bot keeps it. */
export type GuildPacket = Record<string, unknown> & { id: string };

/** The packet of an unavailable guild: Discord's outage, not a leave. */
export function unavailablePacket(guildId: string): GuildPacket {
  return { id: guildId, unavailable: true };
}

export function guildPacket(guild: Guild, channels: Pick<ChannelNames, 'guildChannels'>): GuildPacket {
  if (!guild.available) return unavailablePacket(guild.id);
  const kept = channels.guildChannels(guild.id);
  return {
    id: guild.id,
    // Said, as Discord says it: discord.js keeps a guild the READY listed as unavailable otherwise.
    unavailable: false,
    name: guild.name,
    icon: guild.icon,
    splash: guild.splash,
    discovery_splash: guild.discoverySplash,
    banner: guild.banner,
    description: guild.description,
    features: guild.features,
    owner_id: guild.ownerId,
    member_count: guild.memberCount,
    large: guild.large,
    ...(Number.isFinite(guild.joinedTimestamp)
      ? { joined_at: new Date(guild.joinedTimestamp).toISOString() }
      : {}),
    preferred_locale: guild.preferredLocale,
    verification_level: guild.verificationLevel,
    nsfw_level: guild.nsfwLevel,
    premium_tier: guild.premiumTier,
    premium_subscription_count: guild.premiumSubscriptionCount,
    premium_progress_bar_enabled: guild.premiumProgressBarEnabled,
    vanity_url_code: guild.vanityURLCode,
    application_id: guild.applicationId,
    afk_channel_id: guild.afkChannelId,
    afk_timeout: guild.afkTimeout,
    // Absent from a guild Discord sent without it (discord.js's type says otherwise).
    system_channel_flags: (guild.systemChannelFlags as typeof guild.systemChannelFlags | undefined)?.bitfield,
    rules_channel_id: guild.rulesChannelId,
    public_updates_channel_id: guild.publicUpdatesChannelId,
    safety_alerts_channel_id: guild.safetyAlertsChannelId,
    explicit_content_filter: guild.explicitContentFilter,
    mfa_level: guild.mfaLevel,
    default_message_notifications: guild.defaultMessageNotifications,
    max_members: guild.maximumMembers,
    max_video_channel_users: guild.maxVideoChannelUsers,
    max_stage_video_channel_users: guild.maxStageVideoChannelUsers,
    widget_enabled: guild.widgetEnabled,
    widget_channel_id: guild.widgetChannelId,
    // What ChannelNames keeps; without it (never seen whole), the system channel as discord.js has it.
    system_channel_id: kept?.system_channel_id ?? guild.systemChannelId,
    channels: kept?.channels ?? [],
  };
}
