/**
 * A store's schema as the engines' own catalogues describe it, reduced to what must match on
 * both: tables, columns (name, a type class, nullability), primary keys and indexes. Kysely's
 * bookkeeping tables are left out.
 */

import type { Store } from '../../src/store/index.js';
import { sql } from '../../src/store/kysely.js';

export type TypeClass = 'text' | 'integer';

export interface TableShape {
  columns: Array<{ name: string; type: TypeClass; nullable: boolean }>;
  primaryKey: string[];
  indexes: Array<{ name: string; columns: string[]; unique: boolean }>;
}

export type SchemaShape = Record<string, TableShape>;

/** The engines spell the same types differently; anything not listed fails the comparison. */
export function typeClass(declared: string): TypeClass {
  const type = declared.toLowerCase();
  if (type === 'text' || type === 'character varying' || type.startsWith('varchar')) return 'text';
  if (type === 'bigint' || type === 'integer' || type === 'int8' || type === 'int4') return 'integer';
  throw new Error(`no type class for ${declared}`);
}

export function schemaShape(store: Store): Promise<SchemaShape> {
  return store.engine === 'sqlite' ? sqliteShape(store) : postgresShape(store);
}

async function sqliteShape(store: Store): Promise<SchemaShape> {
  return store.run(async (db) => {
    const shape: SchemaShape = {};
    const tables = await sql<{ name: string }>`
      select name from sqlite_master
      where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%'`.execute(db);
    for (const { name } of tables.rows) {
      const columns = await sql<{ name: string; type: string; notnull: number; pk: number }>`
        select name, type, "notnull", pk from pragma_table_info(${name}) order by cid`.execute(db);
      const indexes = await sql<{ name: string; unique: number; origin: string }>`
        select name, "unique", origin from pragma_index_list(${name})`.execute(db);
      const created = [];
      // 'c': made by CREATE INDEX (the others back the primary key or a UNIQUE constraint).
      for (const index of indexes.rows.filter((i) => i.origin === 'c')) {
        const cols = await sql<{ name: string }>`
          select name from pragma_index_info(${index.name}) order by seqno`.execute(db);
        created.push({ name: index.name, columns: cols.rows.map((c) => c.name), unique: index.unique === 1 });
      }
      shape[name] = {
        columns: columns.rows.map((c) => ({
          name: c.name,
          type: typeClass(c.type),
          nullable: c.notnull === 0,
        })),
        primaryKey: columns.rows
          .filter((c) => c.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((c) => c.name),
        indexes: created.sort((a, b) => a.name.localeCompare(b.name)),
      };
    }
    return sorted(shape);
  });
}

async function postgresShape(store: Store): Promise<SchemaShape> {
  return store.run(async (db) => {
    const shape: SchemaShape = {};
    const columns = await sql<{
      table_name: string;
      column_name: string;
      data_type: string;
      is_nullable: string;
    }>`
      select table_name, column_name, data_type, is_nullable from information_schema.columns
      where table_schema = current_schema() and table_name not like 'kysely_%'
      order by table_name, ordinal_position`.execute(db);
    for (const c of columns.rows) {
      shape[c.table_name] ??= { columns: [], primaryKey: [], indexes: [] };
      shape[c.table_name]?.columns.push({
        name: c.column_name,
        type: typeClass(c.data_type),
        nullable: c.is_nullable === 'YES',
      });
    }
    const indexes = await sql<{
      table: string;
      name: string;
      columns: string[];
      unique: boolean;
      primary: boolean;
    }>`
      select t.relname as table, i.relname as name, x.indisunique as unique, x.indisprimary as primary,
        array(select a.attname::text from unnest(x.indkey) with ordinality k(attnum, n)
              join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum order by k.n) as columns
      from pg_index x
      join pg_class t on t.oid = x.indrelid
      join pg_class i on i.oid = x.indexrelid
      join pg_namespace s on s.oid = t.relnamespace
      where s.nspname = current_schema() and t.relname not like 'kysely_%'
        and not exists (select 1 from pg_constraint c where c.conindid = x.indexrelid and c.contype <> 'p')
      order by i.relname`.execute(db);
    for (const index of indexes.rows) {
      const table = shape[index.table];
      if (!table) continue;
      if (index.primary) table.primaryKey = index.columns;
      else table.indexes.push({ name: index.name, columns: index.columns, unique: index.unique });
    }
    return sorted(shape);
  });
}

function sorted(shape: SchemaShape): SchemaShape {
  return Object.fromEntries(Object.entries(shape).sort(([a], [b]) => a.localeCompare(b)));
}
