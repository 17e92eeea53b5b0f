/**
 * The SQLite file locked by another process, or broken: the event loop never waits on the lock
 * (what is written waits and is written), reads go on meanwhile, and a read-only or damaged file
 * is told apart from a busy one, once, and kept in the store's health.
 */
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { FileHealth, STILL_BROKEN_EVERY_MS } from '../../src/store/health.js';
import {
  HistoryRepository,
  openStore,
  SettingsRepository,
  SQLITE_FILE_NAME,
  type Store,
  StoreUnavailableError,
} from '../../src/store/index.js';
import { Kysely } from '../../src/store/kysely.js';
import { PatientSqliteDriver } from '../../src/store/sqlite-driver.js';
import { damageTable } from './damage.js';
import { perTest } from './places.js';

const { place, undo } = perTest();
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Line {
  level: 'info' | 'warn' | 'error';
  fields: object;
  message: string;
}

function recording(): {
  lines: Line[];
  logger: Record<Line['level'], (fields: object, message: string) => void>;
} {
  const lines: Line[] = [];
  const at = (level: Line['level']) => (fields: object, message: string) =>
    lines.push({ level, fields, message });
  return { lines, logger: { info: at('info'), warn: at('warn'), error: at('error') } };
}

async function sqliteStore(
  options: { lockWaitMs?: number; logger?: ReturnType<typeof recording>['logger'] } = {},
) {
  const where = await place('sqlite');
  const store = await openStore({ ...where.options, ...options });
  undo(() => store.close());
  return { store, file: join(where.name, SQLITE_FILE_NAME) };
}

/** The longest the event loop went without running a 10 ms timer, while `work` ran. */
async function longestStall<T>(work: Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let stallMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 10);
  try {
    return { value: await work, stallMs };
  } finally {
    clearInterval(timer);
  }
}

/** Another connection (a backup, a shell) holding the write lock until released. */
function holdLock(file: string): { release(): void } {
  const other = new Sqlite(file);
  other.exec('BEGIN IMMEDIATE');
  other.exec('CREATE TABLE lock_holder (x)');
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    other.exec('ROLLBACK');
    other.close();
  };
  cleanups.push(release);
  return { release };
}

describe('the SQLite file locked by another process', () => {
  it('waits for the lock with the event loop free, and writes once it is let go', async () => {
    const { store, file } = await sqliteStore();
    const settings = new SettingsRepository(store);
    const lock = holdLock(file);
    const started = performance.now();
    setTimeout(() => lock.release(), 1_500);
    const { value, stallMs } = await longestStall(settings.update('1', { publicLanguage: 'ru' }, 1));
    const tookMs = performance.now() - started;
    expect(value).toMatchObject({ publicLanguage: 'ru' });
    expect(tookMs).toBeGreaterThanOrEqual(1_400);
    // A timer every 10 ms ran all along: nothing waited inside SQLite (its busy handler used to
    // sleep for the whole 5 s there).
    expect(stallMs).toBeLessThan(250);
    expect((await settings.get('1'))?.publicLanguage).toBe('ru');
  });

  it('reads while a write waits for the lock', async () => {
    const { store, file } = await sqliteStore();
    const settings = new SettingsRepository(store);
    await settings.update('2', { publicLanguage: 'ru' }, 1);
    const lock = holdLock(file);
    const waiting = settings.update('1', { publicLanguage: 'ru' }, 2);
    const readStarted = performance.now();
    expect((await settings.get('2'))?.publicLanguage).toBe('ru');
    expect(performance.now() - readStarted).toBeLessThan(200);
    lock.release();
    await expect(waiting).resolves.toMatchObject({ publicLanguage: 'ru' });
  });

  it('a transaction waits for the lock at its start, then runs whole', async () => {
    const { store, file } = await sqliteStore();
    const history = new HistoryRepository(store);
    const lock = holdLock(file);
    setTimeout(() => lock.release(), 800);
    const record = {
      id: 'bot:i-1',
      guildId: '5',
      userId: '6',
      at: 1_000,
      upCount: null,
      source: 'bot' as const,
    };
    const { stallMs } = await longestStall(history.record(record));
    expect(stallMs).toBeLessThan(250);
    expect(await history.members('5', 0)).toMatchObject([{ userId: '6' }]);
  });

  it('fails with StoreUnavailableError past SQLITE_LOCK_WAIT, having written nothing', async () => {
    const { store, file } = await sqliteStore({ lockWaitMs: 300 });
    const settings = new SettingsRepository(store);
    const lock = holdLock(file);
    const { stallMs } = await longestStall(
      expect(settings.update('1', { publicLanguage: 'ru' }, 1)).rejects.toBeInstanceOf(StoreUnavailableError),
    );
    expect(stallMs).toBeLessThan(250);
    lock.release();
    expect(await settings.get('1')).toBeUndefined();
    expect(store.health.problem()).toBeUndefined();
  });
});

describe('a broken SQLite file', () => {
  it('damaged: one error line, the health says so, and later failures are told once a minute', async () => {
    const { lines, logger } = recording();
    const where = await place('sqlite');
    const file = join(where.name, SQLITE_FILE_NAME);
    // Enough history to fill pages of its own, then those pages overwritten (a disk that lied).
    let store: Store = await openStore(where.options);
    const history = new HistoryRepository(store);
    for (let i = 0; i < 300; i++) {
      await history.record({
        id: `bot:i-${i}`,
        guildId: '7',
        userId: String(i),
        at: 1_000 + i,
        upCount: null,
        source: 'bot',
      });
    }
    await store.close();
    damageTable(file, 'up_history');

    store = await openStore({ ...where.options, logger });
    undo(() => store.close());
    const damaged = new HistoryRepository(store);
    await expect(damaged.members('7', 0)).rejects.toThrow();
    expect(store.health.problem()).toMatchObject({
      problem: 'damaged',
      code: expect.stringMatching(/^SQLITE_CORRUPT/),
    });
    for (let i = 0; i < 5; i++) await expect(damaged.members('7', 0)).rejects.toThrow();
    const errors = lines.filter((l) => l.level === 'error');
    expect(errors.map((l) => l.message)).toEqual([
      `the SQLite file ${file} is damaged: stop the bot and restore the file from a backup; the bot reports itself not ready until then`,
    ]);
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]);
    // A write elsewhere goes through: a damaged file is not mended by it.
    await new SettingsRepository(store).update('1', { publicLanguage: 'ru' }, 1);
    expect(store.health.problem()?.problem).toBe('damaged');
  });

  it('read-only: told apart from busy, well again once a write goes through', async () => {
    const { lines, logger } = recording();
    const where = await place('sqlite');
    const file = join(where.name, SQLITE_FILE_NAME);
    await (await openStore(where.options)).close();
    let now = 0;
    const health = new FileHealth(file, logger, () => now);
    // The driver over a connection that cannot write (as a file the bot's user may not write).
    const writer = new Sqlite(file, { readonly: true });
    const driver = new PatientSqliteDriver({
      writer,
      reader: new Sqlite(file),
      lockWaitMs: 1_000,
      onFailure: (err) => health.failed(err),
      onWritten: () => health.written(),
    });
    const db = new Kysely<{ guild_settings: { guild_id: string; updated_at: number } }>({
      dialect: {
        createDriver: () => driver,
        createQueryCompiler: () => new SqliteQueryCompiler(),
        createAdapter: () => new SqliteAdapter(),
        createIntrospector: (k) => new SqliteIntrospector(k),
      },
    });
    cleanups.push(() => db.destroy());
    const write = () => db.insertInto('guild_settings').values({ guild_id: '1', updated_at: 1 }).execute();
    await expect(write()).rejects.toMatchObject({ code: 'SQLITE_READONLY' });
    expect(health.problem()).toMatchObject({ problem: 'read-only', code: 'SQLITE_READONLY', since: 0 });
    // Every failure in the next minute is counted; the line comes a minute after the first.
    for (let i = 0; i < 10; i++) {
      now += 5_000;
      await expect(write()).rejects.toThrow();
    }
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(0);
    now = STILL_BROKEN_EVERY_MS;
    await expect(write()).rejects.toThrow();
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      [
        'error',
        `the SQLite file ${file} cannot be written (read-only): make the file and its folder writable by the bot; the bot reports itself not ready until then`,
      ],
      ['warn', `the SQLite file ${file} still cannot be written (read-only)`],
    ]);
    expect(lines[1]?.fields).toMatchObject({ failures: 11 });
    // Busy is not broken.
    health.failed(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }));
    expect(health.problem()?.problem).toBe('read-only');
    health.written();
    expect(health.problem()).toBeUndefined();
    expect(lines.at(-1)).toMatchObject({
      level: 'info',
      message: `the SQLite file ${file} can be written again`,
    });
  });
});
