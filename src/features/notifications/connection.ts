/**
 * The directory's v3 notifications for the bot's key (issue 37): one WebSocket per key across every
 * process and host (lease.ts), each event stored before anything acts on it (intake.ts).
 *
 * Every RENEW_EVERY_MS the process renews the key's lease, or tries to take it. The holder opens
 * the connection (directory/v3/notifications.ts: auth, pings, reconnects with a floor); a process
 * that loses the lease, or cannot renew it before it runs out (the store gone), closes its
 * connection first. A holder killed with `kill -9` stops renewing: another process takes the lease
 * once it runs out (LEASE_MS) and connects. Meanwhile the directory sends to nobody, and v3 does not
 * replay what it sent (docs/notifications.md says what that costs).
 *
 * Events are stored in batches (what the socket gave while the last batch was stored), in one
 * transaction each, an up's reminder restarted with it (store/notifications.ts NotificationInbox).
 * A batch the store cannot take is tried again (with backoff) before the next is read: the
 * socket's queue fills and the client stops reading, so nothing is dropped and memory is bounded.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  NotificationsClient,
  type NotificationsClientOptions,
  type NotifyConnectionState,
} from '../../directory/v3/notifications.js';
import { type NotifyEvent, notifyEventKey } from '../../directory/v3/notify.js';
import type { Logger } from '../../log/logger.js';
import { logThrottle } from '../../log/throttle.js';
import { PeriodicTask } from '../../tasks/periodic.js';
import type { NotificationIntake } from './intake.js';
import type { KeyLease } from './lease.js';

/** How long a lease lasts unrenewed: a killed holder's connection moves within it. */
export const LEASE_MS = 15_000;
/** How often the holder renews it (and others try to take it). */
export const RENEW_EVERY_MS = 5_000;
/** An event the store refused is tried again after this, doubling, up to STORE_RETRY_MAX_MS. */
const STORE_RETRY_MS = 200;
const STORE_RETRY_MAX_MS = 5_000;

export interface NotificationsServiceOptions {
  url: string;
  key: string;
  intake: NotificationIntake;
  /** Undefined: this process holds the connection without asking anyone (tests, a one-off CLI). */
  lease: KeyLease | undefined;
  logger: Logger;
  now?: () => number;
  leaseMs?: number;
  renewEveryMs?: number;
  /** The connection's state, and whether this process holds it (the metrics). */
  onState?: (state: NotifyConnectionState | 'standby') => void;
  /** Overrides for the client (tests shorten its timers). */
  client?: Partial<Omit<NotificationsClientOptions, 'url' | 'key' | 'onEvent' | 'logger'>>;
  /**
   * A SQLite file on a full disk: whether an error says so, and where an event it refused waits
   * for room (Store.holdUntilRoom). Without it, a refused event is tried again until it is stored.
   */
  room?: {
    isFull(err: unknown): boolean;
    hold(err: unknown, key: string, write: () => Promise<void>): boolean;
  };
}

export class NotificationsService {
  readonly #o: NotificationsServiceOptions;
  readonly #now: () => number;
  readonly #leaseMs: number;
  readonly #warnStore = logThrottle(10_000);
  readonly #warnLease = logThrottle(30_000);
  #client: NotificationsClient | undefined;
  /** The lease renewed (or tried) every renewEveryMs, on the engine of src/tasks. */
  readonly #renewal: PeriodicTask;
  /** Until when (this process's clock) the lease is ours, from its last renewal. */
  #heldUntil = 0;
  #stopped = false;

  constructor(options: NotificationsServiceOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#leaseMs = options.leaseMs ?? LEASE_MS;
    this.#renewal = new PeriodicTask({
      name: "directory notifications' lease",
      everyMs: options.renewEveryMs ?? RENEW_EVERY_MS,
      run: () => this.#renew(),
      failure: "the directory notifications' lease could not be renewed",
      logger: options.logger,
    });
  }

  /** Whether this process holds the connection now. */
  get holding(): boolean {
    return this.#client !== undefined;
  }

  /** The connection's state here ('standby': another process holds it). */
  get state(): NotifyConnectionState | 'standby' {
    return this.#client?.state ?? 'standby';
  }

  start(): void {
    if (this.#stopped || !this.#renewal.start()) return;
    this.#o.onState?.('standby');
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#renewal.stop();
    await this.#close();
    await this.#o.lease?.release();
  }

  async #renew(): Promise<void> {
    const { lease, logger } = this.#o;
    if (!lease) {
      this.#open();
      return;
    }
    const asked = this.#now();
    let held: boolean;
    try {
      held = await lease.acquire(this.#leaseMs);
    } catch (err) {
      if (this.#client && this.#o.room?.isFull(err)) {
        // A full disk refuses the lease's write, and any other process's takeover of it on the
        // same file: the connection is kept (the directory does not tell an event twice, and the
        // events go on being held for room, below). Were another process to get a write through,
        // its connection's events are the same rows (intake.ts), and this one closes at the next
        // renewal that finds the lease taken.
        this.#heldUntil = asked + this.#leaseMs;
        if (this.#warnLease())
          logger.warn(
            { err: String(err) },
            "the directory's notifications lease cannot be written (the disk is full); the connection is kept",
          );
        return;
      }
      // The store is away: the connection is kept while the lease would still be ours.
      if (this.#client && this.#now() >= this.#heldUntil) {
        logger.warn(
          { err: String(err) },
          "the directory's notifications lease could not be renewed before it ran out; closing the connection",
        );
        await this.#close();
      } else if (this.#warnLease()) {
        logger.warn(
          { err: String(err) },
          "the directory's notifications lease could not be read; trying again",
        );
      }
      return;
    }
    if (this.#stopped) return;
    if (held) {
      this.#heldUntil = asked + this.#leaseMs;
      this.#open();
    } else if (this.#client) {
      logger.info("another process holds the directory's notifications now; closing this one's connection");
      await this.#close();
    }
  }

  #open(): void {
    if (this.#client || this.#stopped) return;
    const { url, key, logger } = this.#o;
    this.#o.logger.info("this process holds the directory's notifications connection");
    this.#client = new NotificationsClient({
      ...this.#o.client,
      url,
      key,
      logger,
      onEvent: (event) => this.#store([event]),
      onEvents: (events) => this.#store(events),
      onState: (state) => this.#o.onState?.(state),
    });
    this.#client.start();
  }

  async #close(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    if (!client) return;
    await client.stop();
    this.#o.onState?.('standby');
  }

  /**
   * Events a full disk refused, held in memory until there is room (store/room.ts), each under
   * its own key (told again, it replaces itself), so that the socket is read on: true when all
   * are held. One not held (the backlog full) leaves the batch to be tried again; those held
   * meanwhile are then the same rows (intake.ts).
   */
  #holdForRoom(err: unknown, events: NotifyEvent[]): boolean {
    const room = this.#o.room;
    if (!room?.isFull(err)) return false;
    return events.every((event) =>
      room.hold(err, `notify:${notifyEventKey(event)}`, async () => {
        await this.#o.intake.takeAll([event]);
      }),
    );
  }

  /** Stores a batch of events, trying again until the store takes it or the process stops. */
  async #store(events: NotifyEvent[]): Promise<void> {
    let wait = STORE_RETRY_MS;
    for (;;) {
      try {
        await this.#o.intake.takeAll(events);
        return;
      } catch (err) {
        if (this.#holdForRoom(err, events)) return;
        if (this.#stopped || !this.#client) {
          this.#o.logger.warn(
            { err: String(err), events: events.length, types: [...new Set(events.map((e) => e.type))] },
            'notifications of the directory could not be stored before the connection closed; they are lost',
          );
          return;
        }
        if (this.#warnStore())
          this.#o.logger.warn(
            { err: String(err) },
            "the store does not take the directory's notifications; trying again",
          );
        await new Promise((resolve) => setTimeout(resolve, wait));
        wait = Math.min(wait * 2, STORE_RETRY_MAX_MS);
      }
    }
  }
}

/** This process, as the lease names its holder. */
export function leaseHolder(hostId?: string): { host: string; instance: string } {
  return { host: hostId ?? hostname(), instance: randomUUID() };
}
