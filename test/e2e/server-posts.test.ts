/**
 * What the bot posts in a server on its own besides reminders, end to end through the unmodified
 * discord.js client, on SQLite and on PostgreSQL, in both languages: a period's digest (its
 * numbers, its chart, nobody pinged, the next period's written), the live leaderboard (posted at
 * once, edited after an up, at most once a minute, deleted when turned off), and reward roles
 * (refused when the bot could not give the role, given once when a member reaches the count, taken
 * back at the period's end after a restart).
 */
import {
  type APIApplicationCommandInteractionDataOption as CommandOption,
  PermissionFlagsBits,
} from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestPlan } from '../../src/features/digests/plan.js';
import { periodAt, previousPeriod } from '../../src/features/history/calendar.js';
import { STREAK_GRACE_MS } from '../../src/features/history/streaks.js';
import { DigestRepository } from '../../src/store/digests.js';
import { HistoryRepository, SettingsRepository } from '../../src/store/index.js';
import { scheduledColumns } from '../../src/store/reminders.js';
import { RewardRepository } from '../../src/store/rewards.js';
import {
  botRoleOf,
  commandOption,
  DEFAULT_BOT_PERMISSIONS,
  makeGuild,
  makeMember,
  makeRole,
  makeUser,
  Permission,
} from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { ENGINES, freshPlace, type Place } from '../store/places.js';
import { viewOf } from '../support/layout-view.js';
import { eventually, sleep } from '../support/wait.js';
import { type Answer, type Harness, startHarness } from './harness.js';

const DAY = 86_400_000;

describe.each(ENGINES)('digests, the live leaderboard and reward roles (%s)', (engine) => {
  const reward = makeRole({ name: 'Weekly upper', position: 2 });
  const en = makeGuild({
    name: 'Posts',
    channels: ['digests', 'board'],
    roles: [reward],
    preferredLocale: 'en-US',
  });
  const ru = makeGuild({ name: 'Сводки', channels: ['сводки'], preferredLocale: 'ru' });
  const streaky = makeGuild({ name: 'Серии', channels: ['апы'], preferredLocale: 'ru' });
  const alice = makeUser({ username: 'alice' });
  const bob = makeUser({ username: 'bob' });
  let place: Place;
  let h: Harness;

  beforeAll(async () => {
    place = await freshPlace(engine);
    h = await startHarness({ guilds: [en, ru, streaky], users: [alice, bob], env: place.env });
    const sample = h.emu.state.servers.get(IDS.serverFresh);
    if (!sample) throw new Error('the sample server is missing');
    h.emu.state.servers.set(en.id, { ...structuredClone(sample), id: en.id });
    const g = h.discord.guilds.get(en.id)!;
    for (const user of [alice, bob]) g.members.push(makeMember(user));
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await place?.remove();
  });

  const channel = (g: typeof en, i = 0) => g.channels[i]!.id;

  function settingsRun(guildId: string, sub: CommandOption, locale = 'en-US'): Promise<Answer> {
    return h.run({
      guildId,
      name: 'settings',
      options: [sub],
      permissions: PermissionFlagsBits.ManageGuild,
      locale,
    });
  }

  it("posts a period's digest once at its end: its numbers and chart, nobody pinged, the next one written", async () => {
    const history = new HistoryRepository(h.bot.store);
    const digests = new DigestRepository(h.bot.store);
    const now = Date.now();
    const last = previousPeriod(periodAt('week', now, 'UTC'));
    // Alice upped three times last week (two days in a row), Bob once; an up this week is not counted.
    const ups: Array<[string, number]> = [
      [alice.id, last.start + DAY],
      [alice.id, last.start + 2 * DAY],
      [alice.id, last.start + 2 * DAY + 3 * 3_600_000],
      [bob.id, last.start + 4 * DAY],
      [bob.id, now - 1_000],
    ];
    for (const [i, [userId, at]] of ups.entries()) {
      for (const g of [en, ru]) {
        await history.record({
          id: `seed:${g.id}:${i}`,
          guildId: g.id,
          userId,
          at,
          upCount: null,
          source: 'bot',
        });
      }
    }
    for (const [g, locale] of [
      [en, 'en-US'],
      [ru, 'ru'],
    ] as const) {
      const set = await settingsRun(
        g.id,
        commandOption.subcommand('digest', [
          commandOption.channel('channel', channel(g)),
          commandOption.string('period', 'week'),
        ]),
        locale,
      );
      expect(set.outcome).toBe('digest:week');
      const next = await digests.next(g.id);
      expect(next).toBeGreaterThanOrEqual(periodAt('week', now, 'UTC').end);
      // Last week's digest, due now (as if the bot had been running at its end).
      await digests.schedule({
        ...digestPlan(g.id, { channelId: channel(g), period: 'week' }, 'UTC', last.start),
        dueAt: now,
      });
    }
    expect(
      JSON.stringify((await settingsRun(en.id, commandOption.subcommand('show'))).view.original),
    ).toContain('Each week, in');
    h.bot.posts.wakeDigests(now);

    const posted = await Promise.all(
      [en, ru].map((g) => h.discord.waitForMessage(channel(g), undefined, 15_000)),
    );
    for (const message of posted) {
      expect(message.allowedMentions).toEqual({ parse: [] });
      expect(message.pings).toEqual({ everyone: false, users: [], roles: [] });
      expect(message.body.flags).toBe(1 << 15);
      // The chart, shown in the layout and attached.
      expect(message.body.attachments).toEqual([expect.objectContaining({ id: '0', filename: 'ups.png' })]);
      expect(message.text).toContain(`<@${alice.id}>`);
      expect(message.text).toContain(`<t:${Math.floor(last.start / 1000)}:D>`);
    }
    const [enPost, ruPost] = posted;
    expect(enPost?.text).toContain('The week in ups');
    expect(enPost?.text).toContain('4 ups by 2 members');
    expect(enPost?.text).toContain(`**1.** <@${alice.id}>: 3 ups`);
    expect(enPost?.text).toContain(`<@${alice.id}>: 2 days`);
    expect(ruPost?.text).toContain('Неделя в апах');
    expect(ruPost?.text).toContain(`**1.** <@${alice.id}>: 3 апа`);
    // Once: done, and this week's digest waits for its end.
    await eventually(
      async () => ((await digests.list(en.id)).some((d) => d.state === 'done') ? true : undefined),
      5_000,
      'the digest recorded as posted',
    );
    await sleep(300);
    expect(h.discord.channelMessages(channel(en))).toHaveLength(1);
    expect((await digests.list(en.id)).map((d) => d.state)).toEqual(['pending', 'done']);

    const off = await settingsRun(en.id, commandOption.subcommand('digest-off'));
    expect(off.outcome).toBe('digest-off');
    expect((await digests.list(en.id)).map((d) => d.state)).toEqual(['done']);
  }, 60_000);

  it('keeps a live leaderboard: posted at once, edited after an up at most once a minute, deleted when off', async () => {
    const board = channel(en, 1);
    const set = await settingsRun(
      en.id,
      commandOption.subcommand('live-leaderboard', [commandOption.channel('channel', board)]),
    );
    expect(set.outcome).toBe('live');
    const first = await h.discord.waitForMessage(board, undefined, 10_000);
    expect(first.text).toContain(': who keeps this server up');
    expect(first.allowedMentions).toEqual({ parse: [] });
    const rewind = async () => {
      // As if a minute had passed since the last edit.
      await h.bot.store.run((db) =>
        db
          .updateTable('live_boards')
          .set((eb) => ({ edited_at: eb('edited_at', '-', 60_000), due_at: eb('due_at', '-', 60_000) }))
          .where('guild_id', '=', en.id)
          .execute(),
      );
      h.bot.posts.wakeLiveBoards(Date.now());
    };
    const edits = () => h.discord.channelMessages(board).find((m) => m.id === first.id)?.edits ?? [];

    const up = await h.run({ guildId: en.id, name: 'up', user: { id: bob.id, username: bob.username } });
    expect(up.outcome).toBe('success');
    // A minute has not passed since the board was posted: not edited yet.
    await sleep(1_500);
    expect(edits()).toHaveLength(0);
    await rewind();
    await eventually(() => (edits().length === 1 ? true : undefined), 10_000, 'the board edited');
    const shown = viewOf(h.discord.channelMessages(board).find((m) => m.id === first.id)!.message).prose.join(
      '\n',
    );
    expect(shown).toContain(`<@${bob.id}>`);
    expect(edits()[0]?.allowed_mentions).toEqual({ parse: [] });
    // Nothing changed since: no edit, even when due.
    await rewind();
    await sleep(1_500);
    expect(edits()).toHaveLength(1);
    expect(h.discord.liveMessages(board)).toHaveLength(1);

    // In the server's language: the month's name as its readers write it.
    const ruSet = await settingsRun(
      ru.id,
      commandOption.subcommand('live-leaderboard', [commandOption.channel('channel', channel(ru))]),
      'ru',
    );
    expect(JSON.stringify(ruSet.view.original)).toContain('Таблица лидеров месяца опубликована');
    const ruBoard = await h.discord.waitForMessage(channel(ru), (m) => m.text.includes('🏆'), 10_000);
    const month = new Intl.DateTimeFormat('ru', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(
      Date.now(),
    );
    expect(ruBoard.text).toContain(`${month}: кто поднимает сервер`);

    // A board that could not post or edit (its channel gone, say) is said in /settings show.
    await h.bot.store.run((db) =>
      db
        .updateTable('live_boards')
        .set({ state: 'failed', failure: 'channel-deleted' })
        .where('guild_id', '=', en.id)
        .execute(),
    );
    const show = await settingsRun(en.id, commandOption.subcommand('show'));
    expect(show.outcome).toBe('shown:problem');
    expect(JSON.stringify(show.view.original)).toContain('Stopped in');

    const off = await settingsRun(en.id, commandOption.subcommand('live-leaderboard-off'));
    expect(off.outcome).toBe('live-off');
    expect(h.discord.liveMessages(board)).toHaveLength(0);
  }, 60_000);

  it('reward roles: refused while the bot cannot give the role; given once on reaching the count; taken back at the period end', async () => {
    const g = h.discord.guilds.get(en.id)!;
    const botRole = botRoleOf(g, h.discord.botUser.id)!;
    let rewards = new RewardRepository(h.bot.store);
    const rolesOf = (userId: string) => g.members.find((m) => m.user.id === userId)?.roles ?? [];
    const add = (locale = 'en-US') =>
      settingsRun(
        en.id,
        commandOption.group('rewards', [
          commandOption.subcommand('add', [
            commandOption.role('role', reward.id),
            commandOption.integer('ups', 2),
            commandOption.string('period', 'week'),
          ]),
        ]),
        locale,
      );
    const refused = await add('ru');
    expect(refused.outcome).toBe('refused:missing-manage-roles');
    expect(JSON.stringify(refused.view.original)).toContain('Управлять ролями');
    expect(await rewards.list(en.id)).toEqual([]);

    h.discord.setRolePermissions(en.id, botRole.id, BigInt(DEFAULT_BOT_PERMISSIONS) | Permission.ManageRoles);
    botRole.position = 1;
    expect((await add()).outcome).toBe('refused:role-above-bot');
    botRole.position = reward.position + 1;
    const set = await add();
    expect(set.outcome).toBe('reward:week');
    expect(JSON.stringify(set.view.original)).toContain(`<@&${reward.id}>: 2 ups in a week`);

    // Alice's second up this week (the first: seeded) reaches the count.
    const history = new HistoryRepository(h.bot.store);
    const now = Date.now();
    await history.record({
      id: 'reward:1',
      guildId: en.id,
      userId: alice.id,
      at: now - 60_000,
      upCount: null,
      source: 'bot',
    });
    expect(rolesOf(alice.id)).not.toContain(reward.id);
    h.emu.state.ups.delete(en.id);
    const up = await h.run({ guildId: en.id, name: 'up', user: { id: alice.id, username: alice.username } });
    expect(up.outcome).toBe('success');
    await eventually(
      () => (rolesOf(alice.id).includes(reward.id) ? true : undefined),
      10_000,
      'the role given',
    );
    const week = periodAt('week', now, 'UTC').key;
    await eventually(
      async () =>
        (await rewards.get(`${en.id}:${reward.id}:${alice.id}:${week}:add`))?.state === 'done'
          ? true
          : undefined,
      5_000,
      'the grant recorded',
    );

    // Bob held it for last week: at the start after a restart, the ended week's role is taken back.
    const lastWeek = previousPeriod(periodAt('week', now, 'UTC')).key;
    g.members.find((m) => m.user.id === bob.id)!.roles.push(reward.id);
    await rewards.enqueue(
      [{ guildId: en.id, roleId: reward.id, userId: bob.id, periodKey: lastWeek, action: 'add', dueAt: now }],
      now,
    );
    await h.bot.store.run((db) =>
      db
        .updateTable('reward_grants')
        .set({ state: 'done', done_at: now })
        .where('user_id', '=', bob.id)
        .execute(),
    );
    await h.restartBot(place.env);
    rewards = new RewardRepository(h.bot.store);
    await eventually(
      () => (rolesOf(bob.id).includes(reward.id) ? undefined : true),
      15_000,
      'the role taken back',
    );
    expect(rolesOf(alice.id)).toContain(reward.id);
    // Recorded done once Discord has answered the removal: a moment after the role is gone there.
    const removal = `${en.id}:${reward.id}:${bob.id}:${lastWeek}:remove`;
    await eventually(
      async () => ((await rewards.get(removal))?.state === 'done' ? true : undefined),
      5_000,
      'the removal recorded',
    );
    expect(await rewards.get(removal)).toMatchObject({ state: 'done' });

    const show = await settingsRun(en.id, commandOption.group('rewards', [commandOption.subcommand('show')]));
    expect(JSON.stringify(show.view.original)).toContain(`<@&${reward.id}>`);
    const removed = await settingsRun(
      en.id,
      commandOption.group('rewards', [
        commandOption.subcommand('remove', [commandOption.role('role', reward.id)]),
      ]),
    );
    expect(removed.outcome).toBe('reward-removed');
    expect(await rewards.list(en.id)).toEqual([]);
  }, 90_000);

  it("says the server's streak when a window's grace runs out with no up, once across restarts", async () => {
    const history = new HistoryRepository(h.bot.store);
    const bumps = channel(streaky);
    await new SettingsRepository(h.bot.store).update(streaky.id, { reminderChannelId: bumps }, Date.now());
    const now = Date.now();
    const window = 4 * 3_600_000;
    // Three ups on time, a minute after each window opened; the window after them ended 2 s ago.
    const nextUpAt = now - STREAK_GRACE_MS - 2_000;
    for (const k of [3, 2, 1]) {
      const possibleAt = nextUpAt - k * window;
      await history.record({
        id: `streak:${k}`,
        guildId: streaky.id,
        userId: alice.id,
        at: possibleAt + 60_000,
        upCount: null,
        source: 'bot',
        possibleAt,
      });
    }
    await h.bot.store.run((db) =>
      db
        .insertInto('reminders')
        .values({
          guild_id: streaky.id,
          next_up_at: nextUpAt,
          cooldown_ms: window,
          ...scheduledColumns(nextUpAt, now),
          state: 'sent',
        })
        .execute(),
    );
    const before = h.discord.channelMessages(bumps).length;
    // The look at start (and each minute) finds it.
    await h.restartBot(place.env);
    const notice = await h.discord.waitForMessage(bumps, (m) => m.text.includes('💔'), 15_000);
    expect(notice.text).toContain('Серия сервера из 3 апов вовремя прервалась');
    expect(notice.text).toContain('30 мин');
    expect(notice.allowedMentions).toEqual({ parse: [] });
    await h.restartBot(place.env);
    await sleep(1_500);
    expect(h.discord.channelMessages(bumps).length).toBe(before + 1);
  }, 60_000);
});
