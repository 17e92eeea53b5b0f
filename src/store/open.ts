/**
 * Opens the store on the engine the configuration asks for and brings its schema up to date:
 * PostgreSQL when a database URL is given, otherwise a SQLite file in the data directory, so
 * that a bot started with no database to set up still keeps what must survive a restart.
 * Whatever goes wrong comes out as one StoreError with a one-line message.
 */
import { join } from 'node:path';
import { openPostgresStore } from './postgres.js';
import type { StoreQueryListener } from './query-timing.js';
import { openSqliteStore } from './sqlite.js';
import type { Store, StoreLogger } from './store.js';

export const SQLITE_FILE_NAME = 'store.sqlite';
/** SQLITE_LOCK_WAIT's default: a backup or a shell's write is over well within it. */
export const DEFAULT_LOCK_WAIT_MS = 30_000;

export interface StoreOptions {
  /** postgres://… : use PostgreSQL. Unset: SQLite, in dataDir. */
  databaseUrl?: string | undefined;
  /** Where the SQLite file goes (DATA_DIR). */
  dataDir: string;
  /** PostgreSQL: the schema to use instead of the connection's default. */
  schema?: string | undefined;
  /**
   * SQLite: how long a statement waits for another process's lock before failing (default 30 s),
   * the event loop free meanwhile: what was being written waits and is written.
   */
  lockWaitMs?: number;
  /**
   * SQLite: how long opening waits for another process opening the same file (its migrations)
   * before failing (default 30 s): processes started together take turns, and on a loaded
   * machine each turn can take seconds.
   */
  openTimeoutMs?: number;
  /** PostgreSQL: how long opening a connection may take (default 5 s). */
  connectTimeoutMs?: number;
  /** PostgreSQL: connections kept open at most (default 10). */
  poolSize?: number;
  logger?: StoreLogger;
  /** Told how long each statement took, by engine and kind (the metrics' store_query_duration_seconds). */
  onQuery?: StoreQueryListener | undefined;
}

export function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) {
    return openPostgresStore({
      url: options.databaseUrl,
      schema: options.schema,
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      poolSize: options.poolSize ?? 10,
      logger: options.logger,
      onQuery: options.onQuery,
    });
  }
  return openSqliteStore({
    file: join(options.dataDir, SQLITE_FILE_NAME),
    lockWaitMs: options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS,
    openTimeoutMs: options.openTimeoutMs ?? 30_000,
    logger: options.logger,
    onQuery: options.onQuery,
  });
}
