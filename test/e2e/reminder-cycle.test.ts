/**
 * A server's reminder cycle end to end, on SQLite and on PostgreSQL, in both languages: the real
 * bot posts a heads-up before the up is possible, the reminder when it is (the heads-up deleted),
 * then the reminder again while nobody ups, each repeat replacing the one before, the role pinged
 * each time and nobody else; an /up ends the repeats and edits the one in the channel. The periods
 * are seconds here (set in the store); `/settings reminders early: repeat: repeat-times:` sets
 * minutes, and says what it set.
 */
import { PermissionFlagsBits } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReminderRepository, SettingsRepository } from '../../src/store/index.js';
import { commandOption, makeGuild, makeRole, makeUser, type PostedMessage } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { ENGINES, freshPlace, type Place } from '../store/places.js';
import { viewOf } from '../support/layout-view.js';
import { eventually, sleep } from '../support/wait.js';
import { type Harness, startHarness } from './harness.js';

const EARLY_MS = 2_000;
const EVERY_MS = 3_000;

describe.each(ENGINES)("a server reminder's heads-up and repeats (%s)", (engine) => {
  const enRole = makeRole({ name: 'Bumpers', mentionable: true });
  const ruRole = makeRole({ name: 'Апперы', mentionable: true });
  const en = makeGuild({
    name: 'Cycle @everyone',
    channels: ['bumps'],
    roles: [enRole],
    preferredLocale: 'en-US',
  });
  const ru = makeGuild({ name: 'Цикл', channels: ['bumps'], roles: [ruRole], preferredLocale: 'ru' });
  const admin = makeUser({ username: 'admin' });
  const member = makeUser({ username: 'member' });
  let place: Place;
  let h: Harness;
  let settings: SettingsRepository;
  let reminders: ReminderRepository;

  beforeAll(async () => {
    place = await freshPlace(engine);
    h = await startHarness({ guilds: [en, ru], users: [admin, member], env: place.env });
    settings = new SettingsRepository(h.bot.store);
    reminders = new ReminderRepository(h.bot.store);
    // The directory knows the Russian server (a copy of a sample): its /up succeeds.
    const sample = h.emu.state.servers.get(IDS.serverFresh);
    if (!sample) throw new Error('the sample server is missing');
    h.emu.state.servers.set(ru.id, { ...structuredClone(sample), id: ru.id });
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await place?.remove();
  });

  const channelOf = (g: typeof en) => g.channels[0]!.id;

  /** The next message posted in the channel after `since`. */
  function next(g: typeof en, since: number, timeoutMs = 8_000): Promise<PostedMessage> {
    return h.discord.waitForMessage(channelOf(g), (m) => m.receivedAt > since, timeoutMs);
  }

  it('heads-up, reminder, repeats: one message in the channel, the role pinged each time; an /up ends them', async () => {
    for (const [g, role, times] of [
      [en, enRole, 1],
      [ru, ruRole, 2],
    ] as const) {
      await settings.update(
        g.id,
        {
          reminderChannelId: channelOf(g),
          reminderRoleId: role.id,
          reminderEarlyMs: EARLY_MS,
          reminderRepeat: { everyMs: EVERY_MS, times },
        },
        Date.now(),
      );
    }
    const start = Date.now();
    const nextUpAt = start + EARLY_MS + 1_000;
    for (const g of [en, ru]) {
      await reminders.scheduleGuild(g.id, { dueAt: nextUpAt, nextUpAt }, start);
    }
    h.bot.reminders.wake(nextUpAt - EARLY_MS);

    const cycle = async (g: typeof en, role: typeof enRole) => {
      const headsUp = await next(g, start);
      expect(headsUp.receivedAt).toBeGreaterThanOrEqual(nextUpAt - EARLY_MS - 5);
      expect(headsUp.receivedAt).toBeLessThan(nextUpAt);
      expect(headsUp.text).toContain(`<t:${Math.floor(nextUpAt / 1000)}:R>`);
      expect(headsUp.pings).toEqual({ everyone: false, users: [], roles: [role.id] });
      const reminder = await next(g, headsUp.receivedAt);
      expect(reminder.receivedAt).toBeGreaterThanOrEqual(nextUpAt - 5);
      expect(reminder.nonce).not.toBe(headsUp.nonce);
      expect(reminder.pings).toEqual({ everyone: false, users: [], roles: [role.id] });
      const repeat = await next(g, reminder.receivedAt);
      expect(repeat.receivedAt).toBeGreaterThanOrEqual(nextUpAt + EVERY_MS - 5);
      expect(repeat.pings).toEqual({ everyone: false, users: [], roles: [role.id] });
      // Each replaced the one before it.
      await eventually(
        () => (h.discord.liveMessages(channelOf(g)).length === 1 ? true : undefined),
        3_000,
        'one reminder left in the channel',
      );
      expect(h.discord.liveMessages(channelOf(g)).map((m) => m.id)).toEqual([repeat.id]);
      return { headsUp, reminder, repeat };
    };
    const [enPosts, ruPosts] = await Promise.all([cycle(en, enRole), cycle(ru, ruRole)]);

    expect(enPosts.headsUp.text).toContain('can be raised again');
    expect(enPosts.headsUp.text).not.toContain('@everyone');
    expect(enPosts.reminder.text).toContain('can be raised again');
    expect(enPosts.repeat.text).toContain('Repeat 1 of 1: nobody has upped yet.');
    expect(ruPosts.headsUp.text).toContain('можно будет поднять');
    expect(ruPosts.repeat.text).toContain('Повтор 1 из 2: сервер ещё никто не поднял.');

    // Someone ups the Russian server: its repeats end, and the reminder in the channel says who.
    const up = await h.run({
      guildId: ru.id,
      name: 'up',
      user: { id: member.id, username: member.username },
    });
    expect(up.outcome).toBe('success');
    const edited = await eventually(
      () =>
        h.discord
          .channelMessages(channelOf(ru))
          .find((m) => m.id === ruPosts.repeat.id && m.edits.length > 0),
      5_000,
      'the repeat edited',
    );
    const shown = viewOf(edited.message).prose;
    expect(shown.at(-1)).toMatch(new RegExp(`^✅ .*<@${member.id}>`));
    expect(edited.edits[0]?.allowed_mentions).toEqual({ parse: [] });

    // Past the time of each one's next repeat: the English server's ran out, the Russian one was upped.
    await sleep(Math.max(0, nextUpAt + 2 * EVERY_MS + 1_500 - Date.now()));
    expect(h.discord.channelMessages(channelOf(en))).toHaveLength(3);
    expect(h.discord.channelMessages(channelOf(ru))).toHaveLength(3);
    expect((await reminders.getGuild(en.id))?.state).toBe('sent');
    expect((await reminders.getGuild(ru.id))?.nextUpAt).toBeGreaterThan(Date.now() + 60_000);
  }, 60_000);

  it('`/settings reminders early: repeat: repeat-times:` sets them, shows them, and moves the waiting reminder', async () => {
    const g = en;
    const nextUpAt = Date.now() + 3_600_000;
    await reminders.scheduleGuild(g.id, { dueAt: nextUpAt, nextUpAt }, Date.now());
    const answer = await h.run({
      guildId: g.id,
      name: 'settings',
      user: { id: admin.id, username: admin.username },
      permissions: PermissionFlagsBits.ManageGuild,
      options: [
        commandOption.subcommand('reminders', [
          commandOption.channel('channel', channelOf(g)),
          commandOption.integer('early', 10),
          commandOption.integer('repeat', 15),
          commandOption.integer('repeat-times', 2),
        ]),
      ],
    });
    expect(answer.outcome).toBe('reminders-on');
    const text = JSON.stringify(answer.view.original);
    expect(text).toContain('10 min before the up is possible');
    expect(text).toContain('Every 15 min until someone ups, 2 times at most');
    expect(await settings.get(g.id)).toMatchObject({
      reminderEarlyMs: 600_000,
      reminderRepeat: { everyMs: 900_000, times: 2 },
    });
    expect((await reminders.getGuild(g.id))?.dueAt).toBe(nextUpAt - 600_000);

    // Without them: off again, and the reminder back at the next-up time.
    const off = await h.run({
      guildId: g.id,
      name: 'settings',
      user: { id: admin.id, username: admin.username },
      permissions: PermissionFlagsBits.ManageGuild,
      locale: 'ru',
      options: [commandOption.subcommand('reminders', [commandOption.channel('channel', channelOf(g))])],
    });
    expect(off.outcome).toBe('reminders-on');
    expect(JSON.stringify(off.view.original)).toContain('Нет (добавить: /settings reminders повтор:)');
    expect(await settings.get(g.id)).toMatchObject({ reminderEarlyMs: null, reminderRepeat: null });
    expect((await reminders.getGuild(g.id))?.dueAt).toBe(nextUpAt);
  }, 30_000);
});
