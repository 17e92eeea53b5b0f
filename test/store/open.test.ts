import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Sqlite from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Engine,
  openStore,
  SettingsRepository,
  SQLITE_FILE_NAME,
  type Store,
  StoreError,
  type StoreOptions,
  StoreUnavailableError,
} from '../../src/store/index.js';
import { sql } from '../../src/store/kysely.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { adminQuery, ENGINES, freshPlace, type Place, TEST_DATABASE_URL } from './places.js';

/** Built by `npm run build`, as the other tests that start processes need. */
const STORE_MODULE = join(import.meta.dirname, '../../dist/src/store/index.js');

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function place(engine: Engine): Promise<Place> {
  const made = await freshPlace(engine);
  cleanups.push(() => made.remove());
  return made;
}

async function open(options: StoreOptions): Promise<Store> {
  const store = await openStore(options);
  cleanups.push(() => store.close());
  return store;
}

/** The error openStore fails with: always a StoreError with a one-line message. */
async function openFailure(options: StoreOptions): Promise<StoreError> {
  const err = await openStore(options).then(
    (store) => {
      cleanups.push(() => store.close());
      throw new Error('the store opened');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(StoreError);
  expect((err as Error).message).not.toMatch(/\n/);
  return err as StoreError;
}

/**
 * Opens the store in a process of its own (the built module) at `startAt` (epoch ms), so that
 * several start at the same moment; resolves to 'opened' or the error's message.
 */
function openInChild(options: StoreOptions, startAt: number): Promise<string> {
  const script = `
    const { openStore } = await import(process.argv[1]);
    // Loaded before the start line, so that all begin with the same work ahead of them.
    await Promise.all([import('better-sqlite3'), import('pg')]);
    await new Promise((resolve) => setTimeout(resolve, Number(process.argv[3]) - Date.now()));
    try {
      const store = await openStore(JSON.parse(process.argv[2]));
      await store.close();
      console.log('opened');
    } catch (err) {
      console.log(err.message);
    }`;
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        script,
        pathToFileURL(STORE_MODULE).href,
        JSON.stringify(options),
        String(startAt),
      ],
      { cwd: join(import.meta.dirname, '../..') },
      (err, stdout) => (err ? reject(err) : resolve(stdout.trim())),
    );
  });
}

const migrationsRun = (store: Store) =>
  store.run(async (db) =>
    (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)).rows.map(
      (r) => r.name,
    ),
  );

describe.each(ENGINES)('opening the store (%s)', (engine) => {
  it('migrates a new store once; opening it again keeps its data and runs nothing again', async () => {
    const where = await place(engine);
    const first = await open(where.options);
    await new SettingsRepository(first).update('1', { publicLanguage: 'ru' }, 1);
    await first.close();
    const second = await open(where.options);
    expect(await migrationsRun(second)).toEqual([
      '001-initial',
      '002-directory-limits',
      '003-hosts',
      '004-history',
      '005-webhooks',
      '006-journal-guild-locale',
      '007-host-instances',
      '008-webhook-intake',
      '009-trace-parents',
      '010-reminder-followups',
      '011-gateway-sessions',
      '012-streaks',
      '013-reminder-repeats',
      '014-digests-rewards',
      '015-streak-notices',
      '016-notifications',
      '017-welcomes',
      '018-pending-reminders',
    ]);
    expect((await new SettingsRepository(second).get('1'))?.publicLanguage).toBe('ru');
  });

  it('lets processes starting together on a new store take turns migrating it', async () => {
    // SQLite's turns are ours: three times four processes, as without them most rounds see one
    // fail ("table exists"). PostgreSQL's are Kysely's (an advisory lock): once is enough.
    for (let round = 0; round < (engine === 'sqlite' ? 3 : 1); round++) {
      const where = await place(engine);
      const startAt = Date.now() + 1_200;
      const outcomes = await Promise.all(
        Array.from({ length: 4 }, () => openInChild(where.options, startAt)),
      );
      expect(outcomes).toEqual(['opened', 'opened', 'opened', 'opened']);
      expect(await migrationsRun(await open(where.options))).toEqual([
        '001-initial',
        '002-directory-limits',
        '003-hosts',
        '004-history',
        '005-webhooks',
        '006-journal-guild-locale',
        '007-host-instances',
        '008-webhook-intake',
        '009-trace-parents',
        '010-reminder-followups',
        '011-gateway-sessions',
        '012-streaks',
        '013-reminder-repeats',
        '014-digests-rewards',
        '015-streak-notices',
        '016-notifications',
        '017-welcomes',
        '018-pending-reminders',
      ]);
    }
  });

  it('refuses a store migrated by a newer version, saying so', async () => {
    const where = await place(engine);
    const store = await open(where.options);
    await store.run((db) =>
      sql`insert into kysely_migration (name, timestamp) values ('999-future', '2030-01-01T00:00:00.000Z')`.execute(
        db,
      ),
    );
    const err = await openFailure(where.options);
    expect(err.message).toMatch(/has migration 999-future, which this version does not know/);
  });
});

describe('opening the SQLite store', () => {
  it('creates the file in the data directory (and the directory), readable by its owner only', async () => {
    const root = mkdtempSync(join(tmpdir(), 'store-'));
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const dir = join(root, 'data', 'nested');
    const store = await open({ dataDir: dir });
    await new SettingsRepository(store).update('1', {}, 1);
    expect(store.location).toBe(join(dir, SQLITE_FILE_NAME));
    expect(statSync(store.location).mode & 0o777).toBe(0o600);
    // The write-ahead log holds the latest writes (interaction tokens among them) until a checkpoint.
    expect(statSync(`${store.location}-wal`).mode & 0o777).toBe(0o600);
  });

  it('makes an existing file readable by its owner only', async () => {
    const where = await place('sqlite');
    const file = join(where.name, SQLITE_FILE_NAME);
    writeFileSync(file, '', { mode: 0o644 });
    await open(where.options);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('is one clear error when another process holds the file', async () => {
    const where = await place('sqlite');
    await (await open(where.options)).close();
    const other = new Sqlite(join(where.name, SQLITE_FILE_NAME));
    other.exec('BEGIN EXCLUSIVE');
    cleanups.push(() => other.close());
    const err = await openFailure({ ...where.options, openTimeoutMs: 100 });
    const said = /^The SQLite file (.+) is locked by another process \(waited (\d+) ms\)$/.exec(err.message);
    expect(said?.[1]).toBe(join(where.name, SQLITE_FILE_NAME));
    // What it says is how long it waited: at least the timeout, not much more.
    expect(Number(said?.[2])).toBeGreaterThanOrEqual(100);
    expect(Number(said?.[2])).toBeLessThan(2_000);
  });

  it('is one clear error for a file that is not a database, or a directory it cannot make', async () => {
    const where = await place('sqlite');
    writeFileSync(join(where.name, SQLITE_FILE_NAME), 'not a database, just text '.repeat(200));
    expect((await openFailure(where.options)).message).toBe(
      `The file ${join(where.name, SQLITE_FILE_NAME)} is not a SQLite database`,
    );
    writeFileSync(join(where.name, 'a-file'), '');
    expect((await openFailure({ dataDir: join(where.name, 'a-file', 'data') })).message).toMatch(
      /^Cannot open the SQLite file .*a-file\/data\/store\.sqlite: ENOTDIR/,
    );
  });

  it('fails a write with StoreUnavailableError while another process holds the lock, and works after', async () => {
    const where = await place('sqlite');
    const store = await open({ ...where.options, lockWaitMs: 100 });
    const settings = new SettingsRepository(store);
    const other = new Sqlite(join(where.name, SQLITE_FILE_NAME));
    cleanups.push(() => other.close());
    other.exec('BEGIN IMMEDIATE');
    await expect(settings.update('1', { publicLanguage: 'ru' }, 1)).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    // Readers are not held up by a writer (WAL).
    expect(await settings.get('1')).toBeUndefined();
    other.exec('ROLLBACK');
    await expect(settings.update('1', { publicLanguage: 'ru' }, 1)).resolves.toMatchObject({
      publicLanguage: 'ru',
    });
  });
});

describe('opening the PostgreSQL store', () => {
  const withPassword = (url: string, port?: number) => {
    const parsed = new URL(url);
    parsed.password = 'pa55-w0rd-secret';
    if (port !== undefined) parsed.port = String(port);
    return parsed.toString();
  };

  async function listen(server: Server): Promise<number> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => server.listening && new Promise((resolve) => server.close(resolve)));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    return address.port;
  }

  it('is one clear error, without the password, when PostgreSQL is down', async () => {
    // A port nothing listens on any more.
    const closed = createServer();
    const port = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    const err = await openFailure({
      dataDir: '/nonexistent',
      databaseUrl: withPassword(TEST_DATABASE_URL, port),
    });
    expect(err.message).toBe(
      `Cannot open the PostgreSQL store at postgres://root@127.0.0.1:${port}/test: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it('is one clear error when the server does not answer in time', async () => {
    // Accepts connections, reads what it is sent and never says a word.
    const port = await listen(createServer((socket) => socket.resume()));
    const err = await openFailure({
      dataDir: '/nonexistent',
      databaseUrl: withPassword(TEST_DATABASE_URL, port),
      connectTimeoutMs: 200,
    });
    expect(err.message).toMatch(
      /^Cannot open the PostgreSQL store at postgres:\/\/root@127\.0\.0\.1:\d+\/test: .*timeout/,
    );
    expect(err.message).not.toContain('pa55-w0rd-secret');
  });

  it.skipIf(!HAS_POSTGRES)('starts while other schemas of the database are being dropped', async () => {
    // Other deployments' (or tests') schemas, each with a serial column as Kysely's migration
    // tables have, dropped one after another while stores start here. A start that read every
    // schema's tables failed with `schema "theirs" does not exist` now and then (it did in CI).
    const theirs = await Promise.all(Array.from({ length: 40 }, () => freshPlace('postgres')));
    cleanups.push(() => Promise.all(theirs.map((p) => p.remove().catch(() => undefined))));
    await adminQuery(theirs.map((p) => `create table "${p.name}".t (id serial primary key);`).join('\n'));
    const ours = await place('postgres');
    let dropping = true;
    const drops = (async () => {
      for (const p of theirs) await p.remove();
      dropping = false;
    })();
    const outcomes: string[] = [];
    while (dropping) {
      outcomes.push(
        await openStore(ours.options).then(
          (store) => store.close().then(() => 'opened'),
          (err: unknown) => (err as Error).message,
        ),
      );
    }
    await drops;
    expect(outcomes.length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o !== 'opened')).toEqual([]);
  });

  it.skipIf(!HAS_POSTGRES)('is one clear error for a database, a schema or a URL that is wrong', async () => {
    const noDatabase = new URL(withPassword(TEST_DATABASE_URL));
    noDatabase.pathname = '/no_such_database';
    const err = await openFailure({ dataDir: '/nonexistent', databaseUrl: noDatabase.toString() });
    expect(err.message).toBe(
      'Cannot open the PostgreSQL store at postgres://root@127.0.0.1:5432/no_such_database: database "no_such_database" does not exist',
    );
    expect(String(err.cause)).not.toContain('pa55-w0rd-secret');

    const noSchema = await openFailure({
      dataDir: '/nonexistent',
      databaseUrl: TEST_DATABASE_URL,
      schema: 'no_such_schema',
    });
    expect(noSchema.message).toMatch(/schema no_such_schema does not exist$/);

    for (const url of ['mysql://root@127.0.0.1/test', 'not a url at all: pa55-w0rd-secret']) {
      const wrong = await openFailure({ dataDir: '/nonexistent', databaseUrl: url });
      expect(wrong.message).toBe(
        'DATABASE_URL is not a postgres:// URL (postgres://user:password@host:port/database)',
      );
    }
  });
});
