/**
 * Kysely's driver for the SQLite file, in place of Kysely's own SqliteDriver, so that the event
 * loop never waits on a lock.
 *
 * better-sqlite3 is synchronous, and SQLite's busy handler sleeps inside the native call: with
 * Kysely's driver and a 5 s busy timeout, an outside writer (a backup, a `sqlite3` shell in the
 * middle of a write) froze the whole process for up to 5 s per write, so deferrals missed
 * Discord's 3 s window and the gateway's heartbeat waited. Here SQLite's busy handler is off
 * (busy_timeout 0): a statement that finds the file locked fails at once, nothing of it done, and
 * is tried again after a pause (5–10 ms, doubling up to 50–100 ms, jittered so that processes
 * sharing the file do not keep colliding) with the event loop free in between, until the lock wait runs
 * out. What was being written waits and is written; past the wait it fails as before
 * (StoreUnavailableError: "try again").
 *
 * Two connections to the file. Reads outside a transaction go to the reader, which never waits
 * for a writer (WAL), so that a write waiting for the lock does not hold up the reads queued
 * behind it. Writes and transactions take turns on the writer. A transaction begins IMMEDIATE: it
 * takes the write lock first (waiting as above), so that no statement inside it can find the
 * file locked; a deferred one that read first would fail at its first write with
 * SQLITE_BUSY_SNAPSHOT when another process wrote in between, which no retry cures.
 *
 * Kysely's Driver interface is small and stable; its SqliteDriver keeps its connection private,
 * so wrapping it could not route reads or retry without blocking. Hence this file.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type BetterSqlite3 from 'better-sqlite3';
import type { CompiledQuery, DatabaseConnection, Driver, QueryResult, TransactionSettings } from 'kysely';
import { Recent } from '../cache/recent.js';
import { type Backoff, backoffDelay } from '../time/backoff.js';
import { CompiledQuery as Compiled } from './kysely.js';
import { isBusy } from './sqlite-errors.js';

/** What the driver needs of a better-sqlite3 connection. */
export type SqliteConnectionLike = Pick<BetterSqlite3.Database, 'prepare' | 'close' | 'inTransaction'>;

export interface PatientSqliteOptions {
  writer: SqliteConnectionLike;
  reader: SqliteConnectionLike;
  /** How long one statement (or a transaction's BEGIN) waits for another process's lock. */
  lockWaitMs: number;
  /** Every failure of a statement, as SQLite gave it (the store's health reads them). */
  onFailure?: (err: unknown) => void;
  /** A write that reached the file: a statement outside a transaction, or a COMMIT. */
  onWritten?: () => void;
}

/** Distinct queries kept prepared; those with lists of varying length make the most of them. */
const STATEMENTS_KEPT = 200;

/** A connection's statements, prepared once by SQL. */
export interface KeptStatements {
  prepare(sql: string): BetterSqlite3.Statement;
  close(): void;
}

/**
 * A connection with its prepared statements kept (least recently used go first). Kysely prepares
 * a statement for every query, and each holds native memory until the garbage collector gets to
 * it: 1,200 reads left about 10 MB more RSS, which the allocator never gave back; kept, they cost
 * nothing more and each read skips the preparing.
 */
export function keepingStatements(
  database: Pick<BetterSqlite3.Database, 'close' | 'prepare'>,
): KeptStatements {
  const kept = new Recent<string, BetterSqlite3.Statement>(STATEMENTS_KEPT);
  return {
    close: () => database.close(),
    prepare(sql) {
      let statement = kept.get(sql);
      if (!statement) {
        statement = database.prepare(sql);
        kept.set(sql, statement);
      }
      return statement;
    },
  };
}

/** The pauses between tries at a locked file: 5–10 ms, doubling up to 50–100 ms. */
const BUSY_BACKOFF: Backoff = { baseMs: 10, capMs: 100 };

/**
 * Runs `step` again while SQLite answers busy, until `deadline` (epoch ms), pausing a little more
 * each time (jittered, so that processes sharing the file do not keep colliding). The event loop
 * is free during the pauses.
 */
export async function whenNotBusy<T>(deadline: number, step: () => T): Promise<T> {
  for (let failures = 1; ; failures++) {
    try {
      return step();
    } catch (err) {
      if (!isBusy(err) || Date.now() >= deadline) throw err;
      const pause = Math.min(backoffDelay(failures, BUSY_BACKOFF, Math.random), deadline - Date.now());
      await sleep(Math.max(1, pause));
    }
  }
}

/** Turns on the writer, as Kysely's own driver takes them on its one connection. */
class Turns {
  #tail: Promise<void> = Promise.resolve();

  /** Resolves when it is the caller's turn, with the function that ends it. */
  take(): Promise<() => void> {
    let end!: () => void;
    const mine = new Promise<void>((resolve) => {
      end = resolve;
    });
    const previous = this.#tail;
    this.#tail = previous.then(() => mine);
    return previous.then(() => end);
  }
}

function resultOf(statement: BetterSqlite3.Statement, parameters: readonly unknown[]): QueryResult<unknown> {
  if (statement.reader) return { rows: statement.all(parameters) };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return {
    numAffectedRows: BigInt(changes),
    insertId: BigInt(lastInsertRowid),
    rows: [],
  };
}

class PatientConnection implements DatabaseConnection {
  readonly #driver: PatientSqliteDriver;
  /** Set between BEGIN and COMMIT/ROLLBACK: the writer's turn this connection holds. */
  endTurn: (() => void) | undefined;

  constructor(driver: PatientSqliteDriver) {
    this.#driver = driver;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.#driver.execute(this, query) as Promise<QueryResult<R>>;
  }

  // biome-ignore lint/correctness/useYield: a generator that only throws, as Kysely's own driver does for writes.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('The SQLite store does not stream query results');
  }
}

/** One connection and its kept statements. */
interface Side {
  db: SqliteConnectionLike;
  statements: KeptStatements;
}

export class PatientSqliteDriver implements Driver {
  readonly #options: PatientSqliteOptions;
  readonly #writer: Side;
  readonly #reader: Side;
  readonly #turns = new Turns();

  constructor(options: PatientSqliteOptions) {
    this.#options = options;
    this.#writer = { db: options.writer, statements: keepingStatements(options.writer) };
    this.#reader = { db: options.reader, statements: keepingStatements(options.reader) };
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    // Nothing is taken yet: a single read needs no turn, a write or a transaction takes one.
    return new PatientConnection(this);
  }

  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings): Promise<void> {
    const conn = connection as PatientConnection;
    const end = await this.#turns.take();
    try {
      await this.#run(this.#writer, Compiled.raw('begin immediate'), false);
    } catch (err) {
      end();
      throw err;
    }
    conn.endTurn = end;
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#finish(connection as PatientConnection, 'commit');
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#finish(connection as PatientConnection, 'rollback');
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    // A transaction always ends in commit or rollback; this only guards against a turn held forever.
    const conn = connection as PatientConnection;
    conn.endTurn?.();
    conn.endTurn = undefined;
  }

  async destroy(): Promise<void> {
    this.#reader.statements.close();
    this.#writer.statements.close();
  }

  /** One statement: inside a transaction on the writer, else a read on the reader or a write in a turn. */
  async execute(conn: PatientConnection, query: CompiledQuery): Promise<QueryResult<unknown>> {
    if (conn.endTurn) return this.#run(this.#writer, query, false);
    if (this.#reader.statements.prepare(query.sql).readonly) return this.#run(this.#reader, query, false);
    const end = await this.#turns.take();
    try {
      return await this.#run(this.#writer, query, true);
    } finally {
      end();
    }
  }

  async #finish(conn: PatientConnection, verb: 'commit' | 'rollback'): Promise<void> {
    try {
      // SQLite rolls a transaction back itself after some failures (a full disk, an I/O
      // error): there is nothing left to roll back, and saying so would hide the failure.
      if (verb === 'rollback' && !this.#writer.db.inTransaction) return;
      // A COMMIT that finds the file busy leaves the transaction open: trying it again is how
      // SQLite means it to be finished.
      await this.#run(this.#writer, Compiled.raw(verb), verb === 'commit');
    } finally {
      conn.endTurn?.();
      conn.endTurn = undefined;
    }
  }

  /** Runs one statement, waiting out another process's lock; `written`: its success reached the file. */
  async #run(side: Side, query: CompiledQuery, written: boolean): Promise<QueryResult<unknown>> {
    const deadline = Date.now() + this.#options.lockWaitMs;
    try {
      const result = await whenNotBusy(deadline, () =>
        resultOf(side.statements.prepare(query.sql), query.parameters),
      );
      if (written) this.#options.onWritten?.();
      return result;
    } catch (err) {
      this.#options.onFailure?.(err);
      throw err;
    }
  }
}
