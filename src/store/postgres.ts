/**
 * PostgreSQL through a pg Pool. A connection lost while running is dropped by the pool and a new
 * one is opened for the next query, so the store works again as soon as the server is back;
 * the calls made in between fail with StoreUnavailableError.
 */
import type { Kysely as KyselyInstance, PostgresPool } from 'kysely';
import type { Pool } from 'pg';
import { describeUrl, withoutPassword } from '../config/database-url.js';
import { reason, StoreError } from './errors.js';
import { Kysely, PostgresDialect, sql } from './kysely.js';
import { migrateToLatest } from './migrate.js';
import { SchemaPostgresIntrospector } from './pg-introspector.js';
import { queryTiming, type StoreQueryListener } from './query-timing.js';
import type { Database } from './schema.js';
import { Store, type StoreLogger } from './store.js';

/** PostgreSQL through Kysely's dialect, introspected within the store's schema (see pg-introspector.ts). */
class StorePostgresDialect extends PostgresDialect {
  override createIntrospector(db: KyselyInstance<unknown>): SchemaPostgresIntrospector {
    return new SchemaPostgresIntrospector(db);
  }
}

/** pg's type id for bigint. */
const INT8 = 20;

/** What pg-pool says when a caller waited connectTimeoutMs for a connection of a full pool. */
const FULL_POOL_WAIT = 'timeout exceeded when trying to connect';
/** However busy, a caller waits at most this long for a connection. */
const BUSY_WAIT_MAX_MS = 60_000;

/**
 * The pool as Kysely takes it, patient while the database answers. pg-pool bounds a wait for a
 * connection of a full pool by the same timeout as opening one (5 s): a burst (a thousand webhook
 * deliveries at once, on a busy machine) can wait that long while every connection works, and
 * failing it then would answer a delivery 503 that the directory's v3 never sends again. So a
 * wait that ran out while other callers got their work done (connections came back meanwhile)
 * waits again, up to BUSY_WAIT_MAX_MS; one that ran out while nothing came back (the database
 * holds every connection without answering) fails as before, and so does a connection that cannot
 * be opened.
 */
function patientPool(pool: Pool): PostgresPool {
  let returned = 0;
  pool.on('release', (err: Error | undefined) => {
    if (!err) returned += 1;
  });
  return {
    async connect() {
      const started = performance.now();
      for (;;) {
        const before = returned;
        try {
          return await pool.connect();
        } catch (err) {
          const answering = err instanceof Error && err.message === FULL_POOL_WAIT && returned > before;
          if (!answering || performance.now() - started >= BUSY_WAIT_MAX_MS) throw err;
        }
      }
    },
    end: () => pool.end(),
  };
}

export interface PostgresStoreOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** The schema to use instead of the connection's default (tests run each in one of their own). */
  schema: string | undefined;
  /** How long opening a connection may take before the call fails. */
  connectTimeoutMs: number;
  poolSize: number;
  logger: StoreLogger | undefined;
  /** Told how long each statement took (the metrics). */
  onQuery?: StoreQueryListener | undefined;
}

export async function openPostgresStore(options: PostgresStoreOptions): Promise<Store> {
  const location = describeUrl(options.url);
  if (location === undefined) {
    throw new StoreError(
      'DATABASE_URL is not a postgres:// URL (postgres://user:password@host:port/database)',
    );
  }
  const { Pool, TypeOverrides } = await import('pg');
  const types = new TypeOverrides();
  // Times are epoch milliseconds, well inside a double's exact integers; pg gives bigint as text.
  types.setTypeParser(INT8, Number);
  const pool = new Pool({
    connectionString: options.url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs,
    keepAlive: true,
    application_name: 'directory-bot',
    types,
  });
  // pg emits 'error' on a client whose connection drops, whether it sits idle in the pool or a
  // query holds it; with no listener that would end the process. The query (if any) fails on
  // its own, the pool lets the connection go, and the next query opens another.
  pool.on('connect', (client) => {
    client.on('error', (err) => options.logger?.warn({ err: reason(err) }, 'a database connection was lost'));
  });
  // The same errors again, for idle connections, as the pool sees them: logged above.
  pool.on('error', () => undefined);
  const { schema } = options;
  const log = queryTiming('postgres', options.onQuery);
  const db = new Kysely<Database>({
    ...(log ? { log } : {}),
    dialect: new StorePostgresDialect({
      pool: patientPool(pool),
      ...(schema === undefined
        ? {}
        : {
            onCreateConnection: async (connection) => {
              await connection.executeQuery(sql`set search_path to ${sql.id(schema)}`.compile(db));
            },
          }),
    }),
  });
  try {
    const current = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
    const inUse = current.rows[0]?.schema;
    if (!inUse) throw new Error(`schema ${schema ?? '(search_path)'} does not exist`);
    // Kysely looks for its own tables in every schema unless told which one.
    await migrateToLatest(db, inUse);
  } catch (err) {
    await db.destroy().catch(() => undefined);
    const why = withoutPassword(reason(err), options.url);
    throw new StoreError(
      `Cannot open the PostgreSQL store at ${location}: ${why}`,
      why === reason(err) ? { cause: err } : {},
    );
  }
  return new Store('postgres', location, db);
}
