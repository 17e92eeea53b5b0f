/**
 * PostgreSQL lost while the bot runs, through a TCP proxy that is cut and restored: calls fail
 * with StoreUnavailableError, nothing is half-written, and calls work again once it is back.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  openStore,
  ReminderRepository,
  SettingsRepository,
  type Store,
  StoreUnavailableError,
  StoreUpJournal,
} from '../../src/store/index.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { freshPlace, type Place, TEST_DATABASE_URL } from './places.js';
import { TcpProxy } from './tcp-proxy.js';

const GUILD = '722424773233213460';

describe.skipIf(!HAS_POSTGRES)('PostgreSQL lost while running', () => {
  let place: Place;
  let proxy: TcpProxy;
  let store: Store;
  /** A connection that does not go through the proxy: what is really in the database. */
  let direct: Store;
  const warnings: Array<{ fields: object; message: string }> = [];

  beforeEach(async () => {
    place = await freshPlace('postgres');
    const target = new URL(TEST_DATABASE_URL);
    proxy = await TcpProxy.start({ host: target.hostname, port: Number(target.port || 5432) });
    const viaProxy = new URL(TEST_DATABASE_URL);
    viaProxy.port = String(proxy.port);
    warnings.length = 0;
    store = await openStore({
      ...place.options,
      databaseUrl: viaProxy.toString(),
      connectTimeoutMs: 1_000,
      logger: {
        info: () => undefined,
        warn: (fields, message) => warnings.push({ fields, message }),
        error: (fields, message) => warnings.push({ fields, message }),
      },
    });
    direct = await openStore(place.options);
  });
  afterEach(async () => {
    await store.close();
    await direct.close();
    await proxy.close();
    await place.remove();
  });

  it('fails calls with StoreUnavailableError while it is gone, and works again once it is back', async () => {
    const settings = new SettingsRepository(store);
    // Two connections in the pool, idle when the cut comes.
    await Promise.all([settings.update(GUILD, { publicLanguage: 'ru' }, 1), settings.get(GUILD)]);
    proxy.cut();
    const failure = await settings.get(GUILD).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(StoreUnavailableError);
    expect((failure as Error).message).toMatch(/^The database is unavailable: /);
    await expect(settings.update(GUILD, { publicLanguage: 'en-US' }, 2)).rejects.toBeInstanceOf(
      StoreUnavailableError,
    );
    // The idle connections the pool lost were reported, not thrown into the void.
    expect(warnings.map((w) => w.message)).toContain('a database connection was lost');

    proxy.restore();
    expect((await settings.get(GUILD))?.publicLanguage).toBe('ru');
    await settings.update(GUILD, { publicLanguage: 'en-US' }, 3);
    expect((await new SettingsRepository(direct).get(GUILD))?.publicLanguage).toBe('en-US');
  });

  it('leaves nothing half-written when the connection is lost in the middle of a transaction', async () => {
    const settings = new SettingsRepository(store);
    const reminders = new ReminderRepository(store);
    await settings.update(GUILD, { reminderChannelId: '111' }, 1);
    await reminders.scheduleGuild(GUILD, { dueAt: 10, nextUpAt: 10 }, 1);
    // Forgetting the server deletes from three tables; the connection goes after the first.
    const cut = proxy.cutWhen('delete from "reminders"');
    await expect(settings.deleteGuild(GUILD)).rejects.toBeInstanceOf(StoreUnavailableError);
    await cut;
    expect(await new SettingsRepository(direct).get(GUILD)).toBeDefined();
    expect(await new ReminderRepository(direct).getGuild(GUILD)).toBeDefined();

    proxy.restore();
    await settings.deleteGuild(GUILD);
    expect(await new SettingsRepository(direct).get(GUILD)).toBeUndefined();
  });

  it("fails the journal's changes while it is gone and keeps working after", async () => {
    const journal = new StoreUpJournal(store);
    const up = {
      interactionId: '1',
      token: 'interaction-token-1',
      applicationId: '1',
      guildId: GUILD,
      channelId: '2',
      channelName: 'general',
      userId: '3',
      locale: 'en-US',
      guildLocale: 'en-US',
      createdAt: Date.now(),
    };
    proxy.cut();
    await expect(journal.add(up)).rejects.toBeInstanceOf(StoreUnavailableError);
    proxy.restore();
    await journal.add(up);
    expect(await new StoreUpJournal(direct).list()).toEqual([up]);
  });
});
