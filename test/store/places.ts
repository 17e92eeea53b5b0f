/**
 * Where a test's store lives, on either engine: SQLite in a temporary directory of its own,
 * PostgreSQL (127.0.0.1:5432, trust auth, database `test`) in a schema of its own, dropped after.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach } from 'vitest';
import { type Engine, openStore, type Store, type StoreOptions } from '../../src/store/index.js';
import { HAS_POSTGRES, requirePostgres, TEST_DATABASE_URL } from '../support/postgres.js';

export { TEST_DATABASE_URL };

/** Both engines; SQLite only in a run without PostgreSQL (test/support/postgres.ts). */
export const ENGINES: Engine[] = HAS_POSTGRES ? ['sqlite', 'postgres'] : ['sqlite'];

export interface Place {
  engine: Engine;
  /** What openStore needs to open this place; every call opens another connection to it. */
  options: StoreOptions;
  /** The SQLite directory, or the PostgreSQL schema. */
  name: string;
  /** What a bot's environment names to use this place: DATA_DIR, or DATABASE_URL. */
  env: { DATA_DIR: string } | { DATABASE_URL: string };
  remove(): Promise<void>;
}

let schemas = 0;

/** Runs SQL on the test database outside any store (to make, inspect or drop a schema). */
export async function adminQuery<R extends pg.QueryResultRow>(
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  requirePostgres('adminQuery');
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * A URL whose connections use `schema`: PostgreSQL's `options` startup parameter, which pg takes
 * from the URL. What a bot given only DATABASE_URL (a child process) is pointed at a schema with.
 */
export function schemaUrl(schema: string, databaseUrl = TEST_DATABASE_URL): string {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

export async function freshPlace(engine: Engine, databaseUrl = TEST_DATABASE_URL): Promise<Place> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'store-'));
    return {
      engine,
      name: dir,
      options: { dataDir: dir },
      env: { DATA_DIR: dir },
      remove: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  requirePostgres('A PostgreSQL place');
  const schema = `store_test_${process.pid}_${Date.now().toString(36)}_${++schemas}`;
  await adminQuery(`create schema "${schema}"`);
  return {
    engine,
    name: schema,
    options: { dataDir: '/nonexistent', databaseUrl, schema },
    env: { DATABASE_URL: schemaUrl(schema, databaseUrl) },
    remove: async () => {
      await adminQuery(`drop schema "${schema}" cascade`);
    },
  };
}

/** A store on a fresh place; `done` closes every store opened there and removes the place. */
export async function freshStore(engine: Engine): Promise<{
  store: Store;
  place: Place;
  another: () => Promise<Store>;
  done: () => Promise<void>;
}> {
  const place = await freshPlace(engine);
  const opened: Store[] = [];
  const open = async () => {
    const store = await openStore(place.options);
    opened.push(store);
    return store;
  };
  const store = await open();
  return {
    store,
    place,
    another: open,
    done: async () => {
      await Promise.all(opened.map((s) => s.close()));
      await place.remove();
    },
  };
}

/**
 * For a test file whose tests each make places and other things to undo: `place()` makes one,
 * `undo(fn)` adds a step; after each test, every step runs, the last first.
 */
export function perTest(): { place(engine?: Engine): Promise<Place>; undo(step: () => unknown): void } {
  const steps: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of steps.splice(0).reverse()) await step();
  });
  return {
    async place(engine: Engine = 'postgres') {
      const made = await freshPlace(engine);
      steps.push(() => made.remove());
      return made;
    },
    undo: (step) => {
      steps.push(step);
    },
  };
}
