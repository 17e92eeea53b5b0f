/**
 * Guild joins and leaves: each is logged, and reported to the directory (as the directory's
 * service bot does) when there is a reporter, that is with a directory token. A leave also deletes
 * what the store keeps about the server (its settings and reminders).
 */
import { type Client, Events, type Guild } from 'discord.js';
import type { DiscordLookups } from '../discord/lookups.js';
import type { ChannelNames, ReportChannel } from '../gateway/channel-names.js';
import type { Logger } from '../log/logger.js';
import type { SettingsRepository } from '../store/index.js';
import type { GuildReport, ServerReporter } from '../tasks/server-reports.js';

export interface GuildEventsOptions {
  client: Client;
  channels: ChannelNames;
  discord: Pick<DiscordLookups, 'guildStats'>;
  /** Where reports go; undefined: none are sent. */
  reporter: Pick<ServerReporter, 'report'> | undefined;
  /** Forgets a server left: its settings and reminders go with the bot. */
  settings: Pick<SettingsRepository, 'deleteGuild'>;
  logger: Logger;
}

/**
 * A server report. `channel` is the one the report names (the system channel, else the first text
 * channel: ChannelNames); without one the report names the guild itself.
 */
export function guildReport(
  guild: Guild,
  botPresent: boolean,
  botUserId: string,
  channel: ReportChannel | undefined,
): GuildReport {
  const icon = guild.iconURL({ size: 512, extension: 'webp' });
  return {
    guildId: guild.id,
    botPresent,
    name: guild.name,
    ...(icon ? { avatar: icon } : {}),
    ...(guild.memberCount ? { membersAll: guild.memberCount } : {}),
    ownerId: guild.ownerId,
    reporterUserId: botUserId,
    channelId: channel?.id ?? guild.id,
    channelName: channel?.name ?? guild.name,
  };
}

export function watchGuilds(options: GuildEventsOptions): void {
  const { client, channels, discord, reporter, settings, logger } = options;
  /** Joins whose statistics are being gathered; a leave (or a newer join) takes the entry away. */
  const joining = new Map<string, symbol>();
  client.on(Events.GuildCreate, (guild) => {
    logger.info({ guildId: guild.id, members: guild.memberCount }, 'joined a guild');
    if (!reporter) return;
    const botUserId = client.user?.id ?? guild.client.user.id;
    // Read now: a leave while the statistics are gathered makes ChannelNames forget the guild.
    const report = guildReport(guild, true, botUserId, channels.reportChannel(guild.id));
    const join = Symbol(guild.id);
    joining.set(guild.id, join);
    // The same statistics an up sends (approximate counts, icon, owner tag), bounded in time.
    void discord
      .guildStats(guild.id, (err) =>
        logger.debug({ err, guildId: guild.id }, 'guild statistics not gathered for the report'),
      )
      .then((stats) => {
        if (joining.get(guild.id) !== join) {
          // Left (or joined again) meanwhile: this report would follow the leave and undo it.
          logger.debug({ guildId: guild.id }, 'join report dropped: the guild was left meanwhile');
          return;
        }
        joining.delete(guild.id);
        reporter.report({ ...report, ...stats });
      });
  });
  client.on(Events.GuildDelete, (guild) => {
    // discord.js emits GuildUnavailable, not GuildDelete, for an outage: this is a real leave.
    logger.info({ guildId: guild.id }, 'left a guild');
    // discord.js has dropped the guild's channels by now; ChannelNames still knows its channel.
    const channel = channels.reportChannel(guild.id);
    channels.forget(guild.id);
    joining.delete(guild.id);
    reporter?.report(guildReport(guild, false, client.user?.id ?? guild.client.user.id, channel));
    void settings.deleteGuild(guild.id).then(
      () => logger.debug({ guildId: guild.id }, "deleted the left guild's settings and reminders"),
      (err: unknown) =>
        logger.warn({ err, guildId: guild.id }, "could not delete the left guild's settings and reminders"),
    );
  });
}
