/**
 * What Kysely's Migrator asks of PostgreSQL (does the schema exist, which tables does it hold),
 * answered for the store's own schema only.
 *
 * Kysely's own PostgreSQL introspector reads the tables of every schema in the database and calls
 * `has_schema_privilege(name)` and `pg_get_serial_sequence(name)` on each: functions that look a
 * schema up by name, outside the query's snapshot. A schema dropped by someone else while the
 * query runs (another deployment, another test, an operator) then fails the bot's start with
 * `schema "theirs" does not exist`; it did, in CI. Here the catalog is read by OID and only for
 * `current_schema()`, so nothing another schema does can fail a start, and a database with many
 * schemas is not read whole at every start.
 */
import type {
  ColumnMetadata,
  DatabaseIntrospector,
  DatabaseMetadata,
  DatabaseMetadataOptions,
  Kysely,
  SchemaMetadata,
  TableMetadata,
} from 'kysely';
import { sql } from './kysely.js';

/** Kysely's Migrator's own tables (kysely_migration, kysely_migration_lock by default). */
const KYSELY_TABLE = /^kysely_migration(_lock)?$/;

interface ColumnRow {
  table: string;
  kind: string;
  column: string | null;
  type: string | null;
  type_schema: string | null;
  not_null: boolean | null;
  has_default: boolean | null;
  identity: string | null;
  default_text: string | null;
}

export class SchemaPostgresIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;

  constructor(db: Kysely<unknown>) {
    this.#db = db;
  }

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`
      select nspname as name from pg_catalog.pg_namespace order by nspname`.execute(this.#db);
    return rows.map((row) => ({ name: row.name }));
  }

  /** The tables and views of `current_schema()`, each named with that schema. */
  async getTables(
    options: DatabaseMetadataOptions = { withInternalKyselyTables: false },
  ): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select c.relname as table, c.relkind as kind, a.attname as column, t.typname as type,
             tn.nspname as type_schema, a.attnotnull as not_null, a.atthasdef as has_default,
             a.attidentity as identity, pg_catalog.pg_get_expr(d.adbin, d.adrelid) as default_text
        from pg_catalog.pg_class c
        join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        left join pg_catalog.pg_attribute a
          on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
        left join pg_catalog.pg_type t on t.oid = a.atttypid
        left join pg_catalog.pg_namespace tn on tn.oid = t.typnamespace
        left join pg_catalog.pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
       where n.nspname = current_schema() and c.relkind in ('r', 'v', 'p')
       order by c.relname, a.attnum`.execute(this.#db);
    const schema = (await sql<{ name: string }>`select current_schema() as name`.execute(this.#db)).rows[0]
      ?.name;
    const tables = new Map<string, { isView: boolean; columns: ColumnMetadata[] }>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && KYSELY_TABLE.test(row.table)) continue;
      let table = tables.get(row.table);
      if (table === undefined) {
        table = { isView: row.kind === 'v', columns: [] };
        tables.set(row.table, table);
      }
      if (row.column === null) continue;
      table.columns.push({
        name: row.column,
        dataType: row.type ?? '',
        ...(row.type_schema === null ? {} : { dataTypeSchema: row.type_schema }),
        isNullable: row.not_null !== true,
        hasDefaultValue: row.has_default === true,
        isAutoIncrementing:
          (row.identity !== null && row.identity !== '') || /^nextval\(/.test(row.default_text ?? ''),
      });
    }
    return [...tables].map(([name, table]) => ({
      name,
      isView: table.isView,
      columns: table.columns,
      ...(schema === undefined ? {} : { schema }),
    }));
  }

  /** @deprecated Kysely's own deprecation: getTables. */
  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
