/**
 * An open store: the query layer (Kysely) over one engine, whichever it is. Repositories run
 * their queries through `run` or `transaction`, so that every failure reaches the caller as a
 * StoreError (StoreUnavailableError when trying again later may work).
 */
import type { Kysely, Transaction } from 'kysely';
import { queryError } from './errors.js';
import type { StoreHealth } from './health.js';
import type { HeldWrite } from './room.js';
import type { Database } from './schema.js';

export type Engine = 'sqlite' | 'postgres';

export type { StoreLogger } from './logger.js';

/** A store whose engine cannot tell (PostgreSQL: a lost connection is "busy", said where it happens). */
const ALWAYS_WELL: StoreHealth = { problem: () => undefined };

export class Store {
  readonly engine: Engine;
  /** Where the data is, for logs: the file, or the PostgreSQL URL without its password. */
  readonly location: string;
  /** Whether the file can be used (SQLite): /readyz is false while it cannot. */
  readonly health: StoreHealth;
  readonly #db: Kysely<Database>;
  #closed: Promise<void> | undefined;

  constructor(engine: Engine, location: string, db: Kysely<Database>, health: StoreHealth = ALWAYS_WELL) {
    this.engine = engine;
    this.location = location;
    this.#db = db;
    this.health = health;
  }

  async run<T>(work: (db: Kysely<Database>) => Promise<T>): Promise<T> {
    try {
      return await work(this.#db);
    } catch (err) {
      throw queryError(err);
    }
  }

  /**
   * All or nothing: a failure (a lost connection included) leaves none of it written. On SQLite
   * a transaction takes the write lock when it begins (sqlite-driver.ts): transactions of
   * several processes take turns.
   */
  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.run((db) => db.transaction().execute(work));
  }

  /**
   * A write refused with `err`: when the SQLite file's disk is full, `write` is held (in memory,
   * bounded, under `key`: a later hold of the same key replaces it) and written once there is
   * room (true); else false. PostgreSQL never holds.
   */
  holdUntilRoom(err: unknown, key: string, write: HeldWrite): boolean {
    return this.health.hold?.(err, key, write) ?? false;
  }

  /** Closes the file or the connection pool; safe to call more than once. */
  close(): Promise<void> {
    this.health.stop?.();
    this.#closed ??= this.#db.destroy();
    return this.#closed;
  }
}
