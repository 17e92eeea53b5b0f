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
import type { SqliteDatabase } from 'kysely';
import { reason, StoreError } from './errors.js';
import { Kysely, SqliteDialect } from './kysely.js';
import { migrateToLatest } from './migrate.js';
import type { Database } from './schema.js';
import { Store } from './store.js';

export interface SqliteStoreOptions {
  file: string;
  /** How long a write waits for another process's write to finish before failing. */
  busyTimeoutMs: number;
  /** The same while opening: waiting for another process's migrations (see open.ts). */
  openTimeoutMs: number;
}

export async function openSqliteStore({
  file,
  busyTimeoutMs,
  openTimeoutMs,
}: SqliteStoreOptions): Promise<Store> {
  const startedAt = Date.now();
  const deadline = startedAt + openTimeoutMs;
  const waited = () => Date.now() - startedAt;
  let database: BetterSqlite3.Database;
  try {
    const { default: Sqlite } = await import('better-sqlite3');
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
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: keepingStatements(database) }) });
  try {
    // One write transaction around the whole run: processes starting together on a new file
    // take turns (the second waits, then finds nothing left to do), and a failed migration
    // leaves the schema as it was. Kysely's Migrator has no lock of its own on SQLite.
    await whenNotBusy(deadline, () => database.exec('BEGIN IMMEDIATE'));
    await migrateToLatest(db);
    database.exec('COMMIT');
    // Open: from now on a write waits for another's only as long as an answer can.
    database.pragma(`busy_timeout = ${Math.round(busyTimeoutMs)}`);
  } catch (err) {
    if (database.inTransaction) database.exec('ROLLBACK');
    await db.destroy();
    if (isBusy(err)) throw openError(file, err, waited());
    throw new StoreError(`Cannot migrate the SQLite file ${file}: ${reason(err)}`, { cause: err });
  }
  return new Store('sqlite', file, db);
}

/**
 * Runs `step` again while SQLite answers busy, until `deadline` (epoch ms), pausing a few ms
 * more each time (5, 10, 20 … up to 100, with jitter so that processes do not keep colliding).
 * SQLite's own busy handler covers most waits; this covers those it declines to wait for.
 */
async function whenNotBusy<T>(deadline: number, step: () => T): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return step();
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      const pause = Math.min(100, 5 * 2 ** attempt) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, deadline - Date.now())));
    }
  }
}

/** Distinct queries kept prepared; those with lists of varying length make the most of them. */
const STATEMENTS_KEPT = 200;

/**
 * better-sqlite3 as Kysely sees it, with its prepared statements kept (least recently used go
 * first). Kysely prepares a statement for every query, and each holds native memory until the
 * garbage collector gets to it: 1,200 reads left about 10 MB more RSS, which the allocator
 * never gave back; kept, they cost nothing more and each read skips the preparing.
 */
export function keepingStatements(
  database: Pick<BetterSqlite3.Database, 'close' | 'prepare'>,
): SqliteDatabase {
  const kept = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => database.close(),
    prepare(sql) {
      let statement = kept.get(sql);
      if (statement) kept.delete(sql);
      else statement = database.prepare(sql);
      kept.set(sql, statement);
      if (kept.size > STATEMENTS_KEPT) kept.delete(kept.keys().next().value as string);
      return statement;
    },
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

function codeOf(err: unknown): string | undefined {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}

function isBusy(err: unknown): boolean {
  return /^SQLITE_(BUSY|LOCKED)/.test(codeOf(err) ?? '');
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
