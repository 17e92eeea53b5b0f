/**
 * The embedded engine: one SQLite file through better-sqlite3, in WAL mode so that readers never
 * wait for a writer and shard processes can share the file.
 *
 * synchronous=NORMAL: in WAL mode a commit survives the process being killed (it is in the
 * operating system's hands once written) and the file is never corrupted; only a power cut may
 * lose the last commits. FULL would add an fsync to every commit (about 4 ms here, with the
 * event loop blocked, better-sqlite3 being synchronous) for that last case; the journal file
 * the store replaces never synced either.
 *
 * better-sqlite3 is a native module, imported here and only here: a production install made
 * with --ignore-scripts has it unbuilt, and nothing may load it before the configuration is
 * known to want SQLite.
 */
import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { DatabaseIntrospector, Dialect, Driver, Kysely as KyselyType } from 'kysely';
import { reason, StoreError } from './errors.js';
import { FileHealth } from './health.js';
import { Kysely, SqliteDialect } from './kysely.js';
import { migrateToLatest } from './migrate.js';
import { queryTiming, type StoreQueryListener } from './query-timing.js';
import type { Database } from './schema.js';
import { keepingStatements, PatientSqliteDriver, whenNotBusy } from './sqlite-driver.js';
import { codeOf, isBusy } from './sqlite-errors.js';
import { Store, type StoreLogger } from './store.js';

export interface SqliteStoreOptions {
  file: string;
  /**
   * How long a statement waits for another process's lock (a backup, a `sqlite3` shell, another
   * shard process) before failing; the event loop is free while it waits (sqlite-driver.ts).
   */
  lockWaitMs: number;
  /** The same while opening: waiting for another process's migrations (see open.ts). */
  openTimeoutMs: number;
  /** Where a read-only, damaged, full or failing file is told. */
  logger?: StoreLogger | undefined;
  /** Told how long each statement took (the metrics). */
  onQuery?: StoreQueryListener | undefined;
}

export async function openSqliteStore({
  file,
  lockWaitMs,
  openTimeoutMs,
  logger,
  onQuery,
}: SqliteStoreOptions): Promise<Store> {
  const startedAt = Date.now();
  const deadline = startedAt + openTimeoutMs;
  const waited = () => Date.now() - startedAt;
  let Sqlite: typeof BetterSqlite3;
  let database: BetterSqlite3.Database;
  try {
    Sqlite = (await import('better-sqlite3')).default;
    mkdirSync(dirname(file), { recursive: true });
    ownerOnly(file);
    database = new Sqlite(file, { timeout: openTimeoutMs });
  } catch (err) {
    throw openError(file, err, waited());
  }
  try {
    // Turning a new file to WAL wants it to itself, and SQLite answers SQLITE_BUSY at once, not
    // calling its busy handler, when another process holds it at that moment (seen about once
    // in 20 rounds of four processes opening a new file together): hence the turns taken here.
    await whenNotBusy(deadline, () => database.pragma('journal_mode = WAL'));
    database.pragma('synchronous = NORMAL');
  } catch (err) {
    database.close();
    throw openError(file, err, waited());
  }
  try {
    // One write transaction around the whole run: processes starting together on a new file
    // take turns (the second waits, then finds nothing left to do), and a failed migration
    // leaves the schema as it was. Kysely's Migrator has no lock of its own on SQLite. Its
    // queries run on this connection alone, inside that transaction (Kysely's own driver).
    const migrating = new Kysely<Database>({
      dialect: new SqliteDialect({ database: keepingStatements(database) }),
    });
    await whenNotBusy(deadline, () => database.exec('BEGIN IMMEDIATE'));
    await migrateToLatest(migrating);
    database.exec('COMMIT');
  } catch (err) {
    if (database.inTransaction) database.exec('ROLLBACK');
    database.close();
    if (isBusy(err)) throw openError(file, err, waited());
    throw new StoreError(`Cannot migrate the SQLite file ${file}: ${reason(err)}`, { cause: err });
  }
  // Open: from now on SQLite's busy handler is off and a lock is waited for between tries,
  // with the event loop free (sqlite-driver.ts).
  database.pragma('busy_timeout = 0');
  let reader: BetterSqlite3.Database;
  try {
    reader = new Sqlite(file, { timeout: 0 });
  } catch (err) {
    database.close();
    throw openError(file, err, waited());
  }
  const health = new FileHealth(file, logger);
  const driver = new PatientSqliteDriver({
    writer: database,
    reader,
    lockWaitMs,
    onFailure: (err) => health.failed(err),
    onWritten: () => health.written(),
  });
  const log = queryTiming('sqlite', onQuery);
  const db = new Kysely<Database>({ dialect: patientDialect(driver), ...(log ? { log } : {}) });
  return new Store('sqlite', file, db, health);
}

/** SQLite's dialect with the patient driver in place of Kysely's own. */
function patientDialect(driver: Driver): Dialect {
  // The compiler, adapter and introspector are Kysely's; only the driver changes.
  const sqlite = new SqliteDialect({
    database: {
      close: () => undefined,
      prepare: () => {
        throw new Error('unused');
      },
    },
  });
  return {
    createDriver: () => driver,
    createQueryCompiler: () => sqlite.createQueryCompiler(),
    createAdapter: () => sqlite.createAdapter(),
    createIntrospector: (db: KyselyType<unknown>): DatabaseIntrospector => sqlite.createIntrospector(db),
  };
}

/**
 * The file holds interaction tokens: readable by its owner only. SQLite creates the -wal and
 * -shm files with the database file's mode, so they follow.
 */
function ownerOnly(file: string): void {
  closeSync(openSync(file, 'a', 0o600));
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
}

/** The native module missing (installed with --ignore-scripts), or built for another Node.js. */
function isEngineMissing(err: unknown): boolean {
  const code = codeOf(err);
  if (code === 'ERR_DLOPEN_FAILED' || code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
    return true;
  return err instanceof Error && /bindings file|NODE_MODULE_VERSION/.test(err.message);
}

function openError(file: string, err: unknown, waitedMs: number): StoreError {
  const message = err instanceof Error ? err.message : '';
  if (isEngineMissing(err)) {
    const why = message.includes('bindings file') ? 'is not built' : `does not load (${reason(err)})`;
    return new StoreError(
      `SQLite is not available: the native module of better-sqlite3 ${why}; run "npm rebuild better-sqlite3", or set DATABASE_URL to use PostgreSQL`,
      { cause: err },
    );
  }
  if (isBusy(err)) {
    return new StoreError(`The SQLite file ${file} is locked by another process (waited ${waitedMs} ms)`, {
      cause: err,
    });
  }
  if (codeOf(err) === 'SQLITE_NOTADB') {
    return new StoreError(`The file ${file} is not a SQLite database`, { cause: err });
  }
  return new StoreError(`Cannot open the SQLite file ${file}: ${reason(err)}`, { cause: err });
}
