/**
 * Which part of the bot's shared work this process owns, from its sharding: the single process
 * owns everything; a shard process of start:sharded, its own shards; a host of several, its own
 * shards and, while another host is gone, that host's orphaned ones (adopt.ts). The reminders
 * are sent for the guilds it owns (each once whoever sends it: the outbox's claims), and its
 * journal of ups in flight is kept under its own owner name.
 */
import { ShardClientUtil } from 'discord.js';
import type { Config } from '../config/env.js';
import { hostJournalOwner } from './adopt.js';

export class ShardOwnership {
  readonly #sharding: Config['sharding'];
  readonly #shardCount: () => number;
  /** The shards of hosts that are gone: their guilds' reminders are sent from here too. */
  #orphans: ReadonlySet<number> = new Set();

  /** `shardCount`: the bot's total, as discord.js knows it once connected. */
  constructor(sharding: Config['sharding'], shardCount: () => number) {
    this.#sharding = sharding;
    this.#shardCount = shardCount;
  }

  /** The shards this process runs when it does not run them all: a shard process's, or a host's. */
  get shards(): readonly number[] | undefined {
    return this.#sharding.isChild ? this.#sharding.childShards : this.#sharding.hostShards;
  }

  /**
   * Whether this process sends a guild's reminders; undefined when it sends every guild's. A
   * guild's shard is discord.js's (Discord's rule: (id >> 22) % shard count).
   */
  guildFilter(): ((guildId: string) => boolean) | undefined {
    const ids = this.shards;
    if (!ids) return undefined;
    const mine = new Set(ids);
    return (guildId) => {
      if (!/^\d{1,20}$/.test(guildId)) return false;
      const shard = ShardClientUtil.shardIdForGuildId(guildId, this.#shardCount());
      return mine.has(shard) || this.#orphans.has(shard);
    };
  }

  /** A gone host's shards (adopt.ts), or none once it is back. */
  setOrphans(shards: Iterable<number>): void {
    this.#orphans = new Set(shards);
  }

  /**
   * The journal's owner: each shard process recovers the ups of its own shards, whatever it
   * shares; a host, its own (and another's once that one is gone: adopt.ts).
   */
  journalOwner(): string {
    if (this.#sharding.hostShards) return hostJournalOwner(this.#sharding.hostId);
    const ids = this.shards;
    return ids ? `shards-${ids.join('-')}` : 'main';
  }
}
