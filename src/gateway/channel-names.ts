/**
 * The little the bot needs to know of guild channels, kept here because discord.js keeps no
 * channels (nor roles) for this bot: they were most of its memory (client.ts).
 *
 * - Per guild, the channel a server report names: the system channel, else the first text
 *   channel (in the order Discord listed them, channels created later after them), else none
 *   (the report then names the guild itself). It outlives discord.js's own view of the guild:
 *   discord.js drops a guild's channels before it emits guildDelete, and a leave report still
 *   names the channel.
 * - The names of the channels interactions come from: every INTERACTION_CREATE carries its
 *   channel, and /up sends that name to the directory.
 *
 * Fed straight from the gateway's dispatches (client.ws emits each one before discord.js handles
 * it), so it never depends on a cache that is not there. Per guild it keeps the system channel's
 * id and the ids and names of the text and announcement channels, nothing else.
 */
import { ChannelType, type Client, GatewayDispatchEvents } from 'discord.js';

export interface ReportChannel {
  id: string;
  name: string;
}

/** The dispatches that change what is kept. */
const EVENTS = [
  GatewayDispatchEvents.GuildCreate,
  GatewayDispatchEvents.GuildUpdate,
  GatewayDispatchEvents.ChannelCreate,
  GatewayDispatchEvents.ChannelUpdate,
  GatewayDispatchEvents.ChannelDelete,
  GatewayDispatchEvents.InteractionCreate,
] as const;

/**
 * One guild. The lists are flat (id, name, id, name, ...) to keep a guild to a few small
 * objects: with tens of thousands of guilds, per-channel objects would add up.
 */
interface GuildChannels {
  system: string | null;
  /** Text channels: the first one is the report channel when there is no system channel. */
  text: string[];
  /** Announcement channels: only named when one of them is the system channel. */
  announcement: string[];
}

/** How many channels interactions came from are remembered: far more than are ever in flight. */
const RECENT_LIMIT = 1_000;

export interface ChannelNamesOptions {
  /** A dispatch that could not be read (never thrown: it would stop discord.js handling it). */
  onError?: (err: unknown, event: string) => void;
  recentLimit?: number;
}

type Payload = Record<string, unknown>;

function isPayload(value: unknown): value is Payload {
  return typeof value === 'object' && value !== null;
}

function stringOr<T>(value: unknown, fallback: T): string | T {
  return typeof value === 'string' ? value : fallback;
}

function listFor(guild: GuildChannels, type: unknown): string[] | undefined {
  if (type === ChannelType.GuildText) return guild.text;
  if (type === ChannelType.GuildAnnouncement) return guild.announcement;
  return undefined;
}

/** Index of a channel id in a flat id/name list, or -1. */
function indexOf(list: readonly string[], id: string): number {
  for (let i = 0; i < list.length; i += 2) if (list[i] === id) return i;
  return -1;
}

function named(list: readonly string[], index: number): ReportChannel | undefined {
  const id = list[index];
  const name = list[index + 1];
  return index >= 0 && id !== undefined && name !== undefined ? { id, name } : undefined;
}

export class ChannelNames {
  readonly #guilds = new Map<string, GuildChannels>();
  /** Channel id → name, least recently seen first. */
  readonly #recent = new Map<string, string>();
  readonly #recentLimit: number;
  readonly #onError: ((err: unknown, event: string) => void) | undefined;

  constructor(options: ChannelNamesOptions = {}) {
    this.#recentLimit = Math.max(1, options.recentLimit ?? RECENT_LIMIT);
    this.#onError = options.onError;
  }

  /** Follows the client's gateway dispatches, each before discord.js handles it. */
  listen(client: Client): void {
    for (const event of EVENTS) client.ws.on(event, (data: unknown) => this.handle(event, data));
  }

  /** Applies one dispatch (`t` and `d` of the gateway packet). Never throws. */
  handle(event: string, data: unknown): void {
    try {
      if (!isPayload(data)) return;
      switch (event) {
        case GatewayDispatchEvents.GuildCreate:
          this.#guildCreate(data);
          break;
        case GatewayDispatchEvents.GuildUpdate:
          this.#guildUpdate(data);
          break;
        case GatewayDispatchEvents.ChannelCreate:
        case GatewayDispatchEvents.ChannelUpdate:
          this.#channelUpsert(data);
          break;
        case GatewayDispatchEvents.ChannelDelete:
          this.#channelDelete(data);
          break;
        case GatewayDispatchEvents.InteractionCreate:
          this.#interaction(data);
          break;
      }
    } catch (err) {
      this.#onError?.(err, event);
    }
  }

  /** The channel a report about this guild names; undefined: none known (name the guild). */
  reportChannel(guildId: string): ReportChannel | undefined {
    const guild = this.#guilds.get(guildId);
    if (!guild) return undefined;
    if (guild.system !== null) {
      const system =
        named(guild.text, indexOf(guild.text, guild.system)) ??
        named(guild.announcement, indexOf(guild.announcement, guild.system));
      if (system) return system;
    }
    return named(guild.text, 0);
  }

  /**
   * Where a message to the whole server may go, in order of preference: the system channel, then
   * the text channels in Discord's order; at most `max`. Whether the bot may post there is the
   * caller's to check.
   */
  postCandidates(guildId: string, max: number): ReportChannel[] {
    const guild = this.#guilds.get(guildId);
    if (!guild) return [];
    const found: ReportChannel[] = [];
    const system = this.reportChannel(guildId);
    if (system && guild.system === system.id) found.push(system);
    for (let i = 0; i < guild.text.length && found.length < max; i += 2) {
      const channel = named(guild.text, i);
      if (channel && channel.id !== guild.system) found.push(channel);
    }
    return found.slice(0, max);
  }

  /** Whether the channel is one of the guild's text or announcement channels. */
  isPostable(guildId: string, channelId: string): boolean {
    const guild = this.#guilds.get(guildId);
    return (
      guild !== undefined &&
      (indexOf(guild.text, channelId) >= 0 || indexOf(guild.announcement, channelId) >= 0)
    );
  }

  /** The bot left the guild: nothing of it is kept any longer. */
  forget(guildId: string): void {
    this.#guilds.delete(guildId);
  }

  /** The name of a channel a recent interaction came from. */
  interactionChannelName(channelId: string): string | undefined {
    return this.#recent.get(channelId);
  }

  /**
   * What is kept of a guild, as the channel fields of its GUILD_CREATE (which `handle` reads back
   * as it was): for a snapshot of the guild that outlives the process (gateway-sessions.ts).
   */
  guildChannels(
    guildId: string,
  ):
    | { system_channel_id: string | null; channels: { id: string; name: string; type: ChannelType }[] }
    | undefined {
    const guild = this.#guilds.get(guildId);
    if (!guild) return undefined;
    const channels: { id: string; name: string; type: ChannelType }[] = [];
    const add = (list: readonly string[], type: ChannelType): void => {
      for (let i = 0; i + 1 < list.length; i += 2)
        channels.push({ id: list[i] as string, name: list[i + 1] as string, type });
    };
    add(guild.text, ChannelType.GuildText);
    add(guild.announcement, ChannelType.GuildAnnouncement);
    return { system_channel_id: guild.system, channels };
  }

  /** Guilds known (for checks and tests). */
  get guildCount(): number {
    return this.#guilds.size;
  }

  #guildCreate(data: Payload): void {
    // An unavailable guild carries no channels; what was known of it stays until it is back.
    if (typeof data.id !== 'string' || data.unavailable === true || !Array.isArray(data.channels)) return;
    const guild: GuildChannels = {
      system: stringOr(data.system_channel_id, null),
      text: [],
      announcement: [],
    };
    for (const channel of data.channels as unknown[]) {
      if (!isPayload(channel) || typeof channel.id !== 'string' || typeof channel.name !== 'string') continue;
      listFor(guild, channel.type)?.push(channel.id, channel.name);
    }
    this.#guilds.set(data.id, guild);
  }

  #guildUpdate(data: Payload): void {
    const guild = typeof data.id === 'string' ? this.#guilds.get(data.id) : undefined;
    if (guild && 'system_channel_id' in data) guild.system = stringOr(data.system_channel_id, null);
  }

  #channelUpsert(data: Payload): void {
    const guild = typeof data.guild_id === 'string' ? this.#guilds.get(data.guild_id) : undefined;
    if (!guild || typeof data.id !== 'string') return;
    const list = listFor(guild, data.type);
    const at = list ? indexOf(list, data.id) : -1;
    if (list && at >= 0) {
      // Renamed (or unchanged) in place: its order is kept, as discord.js's cache kept it.
      if (typeof data.name === 'string') list[at + 1] = data.name;
      return;
    }
    // New, or its type changed: it goes last in the list of its (new) type.
    this.#remove(guild, data.id);
    if (list && typeof data.name === 'string') list.push(data.id, data.name);
  }

  #channelDelete(data: Payload): void {
    const guild = typeof data.guild_id === 'string' ? this.#guilds.get(data.guild_id) : undefined;
    if (guild && typeof data.id === 'string') this.#remove(guild, data.id);
  }

  #remove(guild: GuildChannels, id: string): void {
    for (const list of [guild.text, guild.announcement]) {
      const at = indexOf(list, id);
      if (at >= 0) list.splice(at, 2);
    }
  }

  #interaction(data: Payload): void {
    const channel = data.channel;
    if (!isPayload(channel) || typeof channel.id !== 'string') return;
    if (typeof channel.name !== 'string' || channel.name === '') return;
    // Most recently seen last, so the oldest goes first when the map is full.
    this.#recent.delete(channel.id);
    this.#recent.set(channel.id, channel.name);
    if (this.#recent.size > this.#recentLimit) {
      const oldest = this.#recent.keys().next();
      if (!oldest.done) this.#recent.delete(oldest.value);
    }
  }
}
