/**
 * PostgreSQL through a pg Pool. A connection lost while running is dropped by the pool and a new
 * one is opened for the next query, so the store works again as soon as the server is back;
 * the calls made in between fail with StoreUnavailableError.
 */
import type { Kysely as KyselyInstance } from 'kysely';
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
      pool,
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
