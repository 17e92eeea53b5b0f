/**
 * A guild's statistics for an up (what the directory's own bot sends: name, icon, members, online
 * members, owner id and tag), from what the bot already knows, so that an up never waits on
 * Discord for them.
 *
 * The gateway's guild object (the cache of this process's shards) has the name, the icon, the
 * member count (as of the connection or the join; the Guilds intent does not follow joins and
 * leaves) and the owner's id. Two things are not in it: the owner's name and the online count.
 * Those come from two small caches (owners' tags for a day, the counts for 10 minutes, at most
 * 10,000 of each, the least recently used going first), filled by one background task that asks
 * Discord for one guild at a time, at most a few a second: `GET /guilds/{id}?with_counts=true`,
 * then the owner. An up whose guild is missing something asks for it and waits for it only when
 * nothing else waits before it, and then at most `waitMs`; under a burst it goes without and the
 * next up of that guild has it.
 *
 * A guild not in this process's cache (a gone host's, answered here: hosts/adopt.ts) is asked of
 * Discord as before, within the look-up's bound (lookups.ts).
 */
import type { REST } from '@discordjs/rest';
import { Recent } from '../cache/recent.js';
import { isSnowflake } from '../directory/index.js';
import type { Logger } from '../log/logger.js';
import { PeriodicTask } from '../tasks/periodic.js';
import { doneWithin } from '../time/bounded.js';
import { type GuildStats, gatherGuildStats, guildIconUrl } from './lookups.js';

/** What the gateway's guild object gives (discord.js's Guild has these). */
export interface CachedGuild {
  name: string;
  icon: string | null;
  memberCount: number;
  ownerId: string;
}

export interface GuildStatsSourceOptions {
  rest: REST;
  /** The guild as this process's gateway cache has it, or undefined. */
  cached: (guildId: string) => CachedGuild | undefined;
  /** The bound of a REST look-up (a guild not in the cache; each request of a refresh). */
  timeoutMs: number;
  logger: Logger;
  /** How long an up waits for what is missing when nothing waits before it. Default 300 ms. */
  waitMs?: number;
  /** One guild refreshed per run, a run every `refreshEveryMs`. Default 250 ms (two requests each: 8 a second of Discord's 50). */
  refreshEveryMs?: number;
  ownerTtlMs?: number;
  onlineTtlMs?: number;
  /** Entries kept in each cache. Default 10,000. */
  maxEntries?: number;
  now?: () => number;
}

export const OWNER_TTL_MS = 24 * 60 * 60_000;
export const ONLINE_TTL_MS = 10 * 60_000;
const DEFAULT_WAIT_MS = 300;
const DEFAULT_REFRESH_EVERY_MS = 250;
const DEFAULT_MAX_ENTRIES = 10_000;

interface Dated<T> {
  value: T;
  at: number;
}

export class GuildStatsSource {
  /** The refresher, a background task of the composition root's list (app/tasks.ts). */
  readonly task: PeriodicTask;
  readonly #o: GuildStatsSourceOptions;
  readonly #now: () => number;
  readonly #owners: Recent<string, Dated<string>>;
  /** The counts of GET /guilds/{id}?with_counts=true: the member count newer than the gateway's. */
  readonly #counts: Recent<string, Dated<{ members: number | undefined; online: number }>>;
  /** Guilds waiting for a refresh, in order, each once; with whoever waits for it. */
  readonly #queue = new Map<string, Array<() => void>>();
  readonly #waitMs: number;

  constructor(options: GuildStatsSourceOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    const max = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    this.#owners = new Recent(max);
    this.#counts = new Recent(max);
    this.#waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
    this.task = new PeriodicTask({
      name: 'guild statistics',
      everyMs: options.refreshEveryMs ?? DEFAULT_REFRESH_EVERY_MS,
      run: () => this.#refreshNext(),
      failure: 'guild statistics could not be refreshed',
      logger: options.logger,
    });
  }

  /** Guilds waiting for a refresh (for tests and metrics). */
  get waiting(): number {
    return this.#queue.size;
  }

  /** The guild's statistics: at once from what is known, or after a short wait for what is missing. */
  async stats(guildId: string, onError?: (err: unknown) => void): Promise<GuildStats> {
    if (!isSnowflake(guildId)) return {};
    const guild = this.#o.cached(guildId);
    if (!guild) return gatherGuildStats(this.#o.rest, guildId, this.#o.timeoutMs, onError);
    if (!this.#complete(guildId, guild)) {
      const alone = this.#queue.size === 0;
      const refreshed = this.#ask(guildId);
      // Nothing before it: worth a short wait (the refresher runs it now); else the next up has it.
      if (alone && this.#waitMs > 0) {
        void this.task.runNow();
        await doneWithin(refreshed, this.#waitMs);
      }
    }
    return this.#known(guildId, this.#o.cached(guildId) ?? guild);
  }

  #known(guildId: string, guild: CachedGuild): GuildStats {
    const stats: GuildStats = { name: guild.name };
    const avatar = guildIconUrl(guildId, guild.icon);
    if (avatar) stats.avatar = avatar;
    if (guild.memberCount > 0) stats.membersAll = guild.memberCount;
    const counts = this.#fresh(this.#counts.get(guildId), this.#o.onlineTtlMs ?? ONLINE_TTL_MS);
    if (counts) {
      // The gateway's count is as of the connection (the Guilds intent does not follow joins).
      if (counts.value.members !== undefined) stats.membersAll = counts.value.members;
      stats.membersOnline = counts.value.online;
    }
    if (isSnowflake(guild.ownerId)) {
      stats.ownerId = guild.ownerId;
      const owner = this.#owners.get(guild.ownerId);
      if (owner) stats.ownerTag = owner.value;
    }
    return stats;
  }

  /** Whether nothing is missing or stale: no refresh needed. */
  #complete(guildId: string, guild: CachedGuild): boolean {
    if (!this.#fresh(this.#counts.get(guildId), this.#o.onlineTtlMs ?? ONLINE_TTL_MS)) return false;
    if (!isSnowflake(guild.ownerId)) return true;
    return this.#fresh(this.#owners.get(guild.ownerId), this.#o.ownerTtlMs ?? OWNER_TTL_MS) !== undefined;
  }

  /** The entry while younger than `ttlMs`, else undefined. */
  #fresh<T>(entry: Dated<T> | undefined, ttlMs: number): Dated<T> | undefined {
    return entry && this.#now() - entry.at <= ttlMs ? entry : undefined;
  }

  /** Puts the guild in the queue (once); resolves when its refresh has run, whatever it found. */
  #ask(guildId: string): Promise<void> {
    return new Promise((resolve) => {
      const waiters = this.#queue.get(guildId);
      if (waiters) waiters.push(resolve);
      else this.#queue.set(guildId, [resolve]);
    });
  }

  /** One guild of the queue, the oldest: its online count, and its owner's tag when stale. */
  async #refreshNext(): Promise<void> {
    const next = this.#queue.entries().next();
    if (next.done) return;
    const [guildId, waiters] = next.value;
    this.#queue.delete(guildId);
    try {
      const stats = await gatherGuildStats(this.#o.rest, guildId, this.#o.timeoutMs, (err) =>
        this.#o.logger.debug({ err: String(err), guildId }, 'guild statistics not refreshed'),
      );
      const at = this.#now();
      if (stats.membersOnline !== undefined)
        this.#counts.set(guildId, { value: { members: stats.membersAll, online: stats.membersOnline }, at });
      if (stats.ownerId !== undefined && stats.ownerTag !== undefined)
        this.#owners.set(stats.ownerId, { value: stats.ownerTag, at });
    } finally {
      for (const resolve of waiters) resolve();
    }
  }
}
