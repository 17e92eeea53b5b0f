/**
 * One host of several (SHARD_IDS): what it shares with the others through PostgreSQL.
 *
 * - Its shards: claimed at start (refused when another live host runs any of them, or counts
 *   the shards differently, or another live process has the same HOST_ID: each process has an
 *   instance id of its own), their numbers written every few seconds (WRITE_EVERY_MS), given up
 *   at shutdown so that another host may take them at once.
 * - The statistics: every host's poster reads its own shards' numbers as they are and the other
 *   shards' from the store (a shard whose host has not written it for STALE_MS counts as
 *   missing, so nothing is posted on old numbers), and asks the leadership whether it posts.
 * - The leadership: a lease on the database's clock (LEASE_MS), renewed every third of it, with
 *   a fencing token. A post is claimed in a transaction that checks the token and that no host
 *   posted within the interval; right before sending, a host that was frozen or cut off past a
 *   short grace checks its token again. A period is posted once or, when a leader dies between
 *   its claim and its post, not at all; never twice.
 */

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ShardState, ShardView } from '../gateway/shard-stats.js';
import type { Logger } from '../log/logger.js';
import { type Store, StoreError } from '../store/index.js';
import { PeriodicTask } from '../tasks/periodic.js';
import type { StatsGate } from '../tasks/stats-gate.js';
import { LeaseRepository } from './leases.js';
import { type HostProcess, HostRepository, type ShardConflict } from './store.js';

/** How often a host writes its shards' numbers. */
export const WRITE_EVERY_MS = 5_000;
/**
 * A shard not written for this long is stale: its host is taken for gone, and its numbers are
 * not posted. Longer than the lease and a renewal, so that when the leader dies another host can
 * take the lead and post its last numbers once before they go stale.
 */
export const STALE_MS = 30_000;
/** The statistics lease: renewed every third of it. */
export const LEASE_MS = 15_000;
/** A claim older than this (the process froze, or its connection stalled) is checked again before posting. */
const FRESH_CLAIM_MS = 2_000;
const STATS_LEASE = 'stats';
/** How often a start that found another process of its name looks whether that one still writes. */
const NAMESAKE_LOOK_EVERY_MS = 500;

export interface HostOptions {
  store: Store;
  host: string;
  shardIds: readonly number[];
  shardCount: number;
  /** This host's own shards, as its Discord client sees them. */
  local: ShardView;
  logger: Logger;
  /** STATS_INTERVAL: the least time between two posts, whichever hosts post them. */
  statsIntervalMs: number;
  writeEveryMs?: number;
  staleMs?: number;
  leaseMs?: number;
  /** This process's own id among those of its name; default a random UUID. */
  instance?: string;
}

function describeConflict(c: ShardConflict): string {
  const ago = `seen ${Math.round(c.seenAgoMs / 1000)} s ago`;
  return c.shardCount !== undefined
    ? `host ${c.host} runs shard ${c.shard} of SHARD_COUNT=${c.shardCount} (${ago})`
    : `shard ${c.shard} is run by host ${c.host} (${ago})`;
}

function nameTaken(host: string, seenAgoMs: number): StoreError {
  return new StoreError(
    `This host (HOST_ID=${host}) may not start: another live process holds that name (it wrote its shards ${Math.round(seenAgoMs / 1000)} s ago). ` +
      "Give each host its own HOST_ID (by default the machine's name, which cloned machines share)",
  );
}

export class Host {
  readonly #options: Required<HostOptions>;
  readonly #shards: HostRepository;
  readonly #leases: LeaseRepository;
  readonly #log: Logger;
  /** This process: its HOST_ID and its random instance id. */
  readonly #self: HostProcess;
  /** The heartbeat: this host's shards' numbers, written every writeEveryMs. */
  readonly #writer: PeriodicTask;
  /** The statistics lease, renewed (or asked for) every third of it. */
  readonly #renewer: PeriodicTask;
  /** The lease as this host holds it: its token, and until when (performance.now()) it surely holds. */
  #lead: { token: number; until: number } | undefined;
  #lostShards = new Set<number>();

  constructor(options: HostOptions) {
    this.#options = {
      writeEveryMs: WRITE_EVERY_MS,
      staleMs: STALE_MS,
      leaseMs: LEASE_MS,
      instance: randomUUID(),
      ...options,
    };
    this.#self = { host: this.#options.host, instance: this.#options.instance };
    this.#shards = new HostRepository(options.store);
    this.#leases = new LeaseRepository(options.store);
    this.#log = options.logger.child({
      host: options.host,
      hostInstance: this.#options.instance,
      hostShards: options.shardIds,
    });
    this.#writer = new PeriodicTask({
      name: 'host heartbeat',
      everyMs: this.#options.writeEveryMs,
      run: () => this.#write(),
      failure: "could not write this host's shard numbers to the store",
      logger: this.#log,
    });
    this.#renewer = new PeriodicTask({
      name: 'statistics lease',
      everyMs: Math.round(this.#options.leaseMs / 3),
      run: () => this.#renew(),
      failure: 'could not renew the statistics lease',
      logger: this.#log,
    });
  }

  /** This process's id among those of its name (HOST_ID). */
  get instance(): string {
    return this.#self.instance;
  }

  /**
   * Claims this host's shards; a StoreError (one line, exit 1) when it may not run them. When
   * another process of the same HOST_ID wrote its shards lately, it may be alive (a cloned
   * machine) or dead (this host killed and restarted): it is watched for two of its heartbeats,
   * and this start is refused if it writes meanwhile, else it is taken for dead and replaced.
   */
  async claim(): Promise<void> {
    const { host, shardIds, shardCount, staleMs, writeEveryMs } = this.#options;
    let claimed = await this.#shards.claim(this.#self, shardIds, shardCount, staleMs);
    const seen = claimed.conflicts.length === 0 ? claimed.namesake : undefined;
    if (seen) {
      this.#log.warn(
        { seenAgoMs: seen.seenAgoMs },
        'another process with this HOST_ID wrote its shards lately; waiting to see whether it is alive',
      );
      const watchUntil = performance.now() + Math.min(staleMs, 2 * writeEveryMs + 1_000);
      for (let left = watchUntil - performance.now(); left > 0; left = watchUntil - performance.now()) {
        await sleep(Math.min(NAMESAKE_LOOK_EVERY_MS, left));
        const latest = await this.#shards.namesake(this.#self);
        if (latest && latest.writtenAt > seen.writtenAt) throw nameTaken(host, latest.seenAgoMs);
      }
      claimed = await this.#shards.claim(this.#self, shardIds, shardCount, staleMs, seen.writtenAt);
    }
    const { conflicts, namesake } = claimed;
    if (conflicts.length > 0) {
      throw new StoreError(
        `This host (${host}) may not run shards ${shardIds.join(',')}: ${conflicts.map(describeConflict).join('; ')}. ` +
          `Give each host its own SHARD_IDS and the same SHARD_COUNT (a stopped host's shards are free at once, a killed one's after ${Math.round(staleMs / 1000)} s)`,
      );
    }
    if (namesake) throw nameTaken(host, namesake.seenAgoMs);
    if (seen)
      this.#log.info(
        'the other process with this HOST_ID wrote nothing more: taken for gone, its shards taken over',
      );
    this.#log.info({ shardCount }, "this host's shards claimed");
  }

  /**
   * Starts writing the shards' numbers: right after the claim, so that a host still connecting
   * (its IDENTIFYs wait for their turns) keeps its shards from looking abandoned.
   */
  startWriting(): void {
    this.#writer.start();
  }

  /**
   * Writing (if not yet), and taking part in the statistics leadership. Called once the shards
   * are connected: their numbers are written at once, so that the poster's first look finds them
   * ready rather than 5 s old.
   */
  start(): void {
    if (!this.#writer.start()) void this.#writer.runNow();
    this.#renewer.start();
  }

  /**
   * Stops both (a write or renewal in flight ends first, bounded), then gives the lease and the
   * shards up (another host takes them at once).
   */
  async stop(): Promise<void> {
    await Promise.all([this.#writer.stop(), this.#renewer.stop()]);
    const lead = this.#lead;
    this.#lead = undefined;
    const { shardIds } = this.#options;
    await Promise.all([
      lead ? this.#leases.release(STATS_LEASE, this.#self, lead.token) : undefined,
      this.#shards.release(this.#self, shardIds),
    ]).catch((err: unknown) =>
      this.#log.warn({ err: String(err) }, 'could not hand the shards and the lead over'),
    );
  }

  /** Other hosts silent for `silentMs` (their shards not written): gone, and not back; and their shards. */
  silent(silentMs: number): Promise<{ hosts: string[]; shards: number[] }> {
    return this.#shards.silent(this.#options.host, silentMs);
  }

  get leading(): boolean {
    return this.#lead !== undefined && performance.now() < this.#lead.until;
  }

  /** Every shard of the bot for the statistics (from the store); this host's own for /readyz and /metrics. */
  view(): ShardView {
    const { shardCount, staleMs, local } = this.#options;
    return {
      // This host's own shards as they are now; the others' as their hosts last wrote them.
      snapshot: async () => {
        const mine = new Set(this.#options.shardIds);
        const [stored, own] = await Promise.all([this.#shards.read(), local.snapshot()]);
        const others: ShardState[] = stored
          .filter((s) => !mine.has(s.id) && s.ageMs <= staleMs && s.id < shardCount)
          .map((s) => ({ id: s.id, ready: s.ready, guilds: s.guilds, members: s.members, ping: -1 }));
        const shards = (own.shards as ShardState[]).filter((s) => mine.has(s.id));
        return { expectedShards: shardCount, shards: [...shards, ...others] };
      },
      // Readiness and metrics are this host's: its own shards, all of which it expects.
      latest: () => {
        const latest = local.latest();
        const mine = new Set(this.#options.shardIds);
        const shards = (latest.snapshot.shards as ShardState[]).filter((s) => mine.has(s.id));
        return { ...latest, snapshot: { expectedShards: mine.size, shards } };
      },
    };
  }

  /** The statistics poster's gate: this host posts when it leads and the interval since the last post is over. */
  gate = async (startedAgoMs: number): Promise<StatsGate> => {
    const lead = this.#lead;
    if (!lead || !this.leading) return { go: false, reason: 'not-leader' };
    const { statsIntervalMs } = this.#options;
    const self = this.#self;
    // Ticks start up to a few ms late or early against the last post's: a tenth of the interval, 1 s at most.
    const spacing = statsIntervalMs - Math.min(1_000, statsIntervalMs / 10);
    const claim = await this.#leases.claimTurn(STATS_LEASE, self, lead.token, spacing, startedAgoMs);
    if (claim === 'not-holder') {
      this.#lost('the lease moved on');
      return { go: false, reason: 'not-leader' };
    }
    if (claim !== 'claimed') return { go: false, reason: 'too-soon', retryInMs: claim.tooSoonByMs };
    const claimedAt = performance.now();
    return {
      go: true,
      stillValid: async () =>
        performance.now() - claimedAt < FRESH_CLAIM_MS || this.#leases.holds(STATS_LEASE, self, lead.token),
      // The turn's time becomes the post's: one that waited for the directory's limits counts from
      // when it went out, so that the next, by whichever host, is an interval after it.
      done: (sentAgoMs: number) => this.#leases.markDone(STATS_LEASE, self, lead.token, sentAgoMs),
    };
  };

  /** One write of this host's shards' numbers (after the one in flight, if any); start() repeats it. */
  write(): Promise<void> {
    return this.#writer.runNow();
  }

  /** One renewal, or a try to take the lead; start() repeats it every third of the lease. */
  renew(): Promise<void> {
    return this.#renewer.runNow();
  }

  async #write(): Promise<void> {
    const { shardCount, shardIds, local } = this.#options;
    const mine = new Set(shardIds);
    const states = local
      .latest()
      .snapshot.shards.filter((s) => mine.has(s.id))
      .map((s) => ({ id: s.id, ready: s.ready, guilds: s.guilds, members: s.members }));
    // A shard not started yet is written as not ready, so that the others know this host lives.
    for (const id of shardIds) {
      if (!states.some((s) => s.id === id)) states.push({ id, ready: false, guilds: 0, members: 0 });
    }
    const lost = await this.#shards.write(this.#self, shardCount, states);
    for (const id of lost) {
      if (this.#lostShards.has(id)) continue;
      this.#lostShards.add(id);
      this.#log.error(
        { shard: id },
        'another host (or another process with this HOST_ID) took over a shard of this host; its numbers are no longer written',
      );
    }
  }

  /** Not renewed (it throws): the lead ends when the lease does (this.leading), whatever happens next. */
  async #renew(): Promise<void> {
    const { leaseMs } = this.#options;
    const askedAt = performance.now();
    const state = await this.#leases.acquire(STATS_LEASE, this.#self, leaseMs);
    if (state.held) {
      const had = this.#lead;
      // Counted from when the question left: the lease surely holds until then plus what it said.
      this.#lead = { token: state.token, until: askedAt + state.expiresInMs };
      if (!had || had.token !== state.token) {
        this.#log.info({ fencingToken: state.token }, 'this host now leads the statistics posts');
      }
    } else if (this.#lead) {
      this.#lost(`host ${state.holder} holds it`);
    }
  }

  #lost(why: string): void {
    if (!this.#lead) return;
    this.#lead = undefined;
    this.#log.info({ why }, 'this host no longer leads the statistics posts');
  }
}
