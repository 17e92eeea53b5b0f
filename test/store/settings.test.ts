import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReminderRepository, SettingsRepository, type Store } from '../../src/store/index.js';
import { ENGINES, freshStore } from './places.js';

const GUILD = '722424773233213460';
const OTHER = '722424773233213999';

describe.each(ENGINES)('guild settings (%s)', (engine) => {
  let store: Store;
  let done: () => Promise<void>;
  let settings: SettingsRepository;

  beforeEach(async () => {
    ({ store, done } = await freshStore(engine));
    settings = new SettingsRepository(store);
  });
  afterEach(() => done());

  it('has no row for a server never configured', async () => {
    expect(await settings.get(GUILD)).toBeUndefined();
  });

  it('creates the row on the first change, with the defaults for the rest', async () => {
    const saved = await settings.update(GUILD, { reminderChannelId: '111' }, 1_000);
    expect(saved).toEqual({
      guildId: GUILD,
      reminderChannelId: '111',
      reminderRoleId: null,
      reminderTemplate: null,
      publicLanguage: 'auto',
      problem: null,
      updatedAt: 1_000,
      timeZone: null,
      thanksTemplate: null,
      reminderEarlyMs: null,
      reminderRepeat: null,
      digest: null,
      liveChannelId: null,
    });
    expect(await settings.get(GUILD)).toEqual(saved);
  });

  it('changes only what a change names; null clears a setting, undefined keeps it', async () => {
    await settings.update(
      GUILD,
      { reminderChannelId: '111', reminderRoleId: '222', publicLanguage: 'ru' },
      1_000,
    );
    await settings.update(GUILD, { reminderTemplate: 'Time to up {server}!', reminderRoleId: null }, 2_000);
    const after = await settings.update(GUILD, { reminderChannelId: undefined }, 3_000);
    expect(after).toMatchObject({
      reminderChannelId: '111',
      reminderRoleId: null,
      reminderTemplate: 'Time to up {server}!',
      publicLanguage: 'ru',
      updatedAt: 3_000,
    });
  });

  it('records a problem with its time, and clears it', async () => {
    await settings.update(GUILD, { reminderChannelId: '111' }, 1_000);
    const failing = await settings.update(GUILD, { problem: 'missing-permission:SendMessages' }, 5_000);
    expect(failing.problem).toEqual({ reason: 'missing-permission:SendMessages', at: 5_000 });
    const fixed = await settings.update(GUILD, { problem: null }, 6_000);
    expect(fixed.problem).toBeNull();
  });

  it('keeps text exactly, whatever it holds', async () => {
    const template = "Пора апнуть «{server}» — don't forget 🎉\n<@&222> 'quotes' \"double\" %_\\";
    await settings.update(GUILD, { reminderTemplate: template }, 1_000);
    expect((await settings.get(GUILD))?.reminderTemplate).toBe(template);
  });

  it('forgets everything about a server the bot left, and nothing about the others', async () => {
    const reminders = new ReminderRepository(store);
    for (const guild of [GUILD, OTHER]) {
      await settings.update(guild, { reminderChannelId: '111' }, 1_000);
      await reminders.scheduleGuild(guild, { dueAt: 10_000, nextUpAt: 10_000 }, 1_000);
      await reminders.togglePersonal(guild, '333', 10_000, 1_000);
    }
    await settings.deleteGuild(GUILD);
    expect(await settings.get(GUILD)).toBeUndefined();
    expect(await reminders.getGuild(GUILD)).toBeUndefined();
    expect(await reminders.getPersonal(GUILD, '333')).toBeUndefined();
    expect(await settings.get(OTHER)).toBeDefined();
    expect(await reminders.getGuild(OTHER)).toBeDefined();
    expect(await reminders.getPersonal(OTHER, '333')).toBeDefined();
  });

  it('is seen at once by another connection to the same store (another process)', async () => {
    const { store: first, another, done: finish } = await freshStore(engine);
    try {
      const second = await another();
      await new SettingsRepository(first).update(GUILD, { publicLanguage: 'en-US' }, 1_000);
      expect((await new SettingsRepository(second).get(GUILD))?.publicLanguage).toBe('en-US');
    } finally {
      await finish();
    }
  });
});
