/**
 * Issue 37, end to end: the directory's v3 notifications through the unmodified discord.js bot,
 * the emulator's WebSocket gateway (and its HTTPS webhooks) and the Discord stand-in, on SQLite
 * with an English server and on PostgreSQL with a Russian one:
 *
 * - an up made on the site: the reminder set for a day after it (read from the store; no clock is
 *   moved), the member on /leaderboard, the
 *   reward role given, the thank-you line posted in the reminder channel pinging nobody; each once
 *   across a dropped socket, a replay, and a restart of the bot followed by a replay;
 * - reviews: announced in the webhook channel, an edit edits that message, a removal marks it;
 *   hostile text escaped and pinging nobody;
 * - /up on v3: the link to the server's page, then a private follow-up once the up is told of;
 * - the same up told over the WebSocket and the directory's webhook at once (the emulator POSTs to
 *   the bot's receiver on loopback): recorded once, and the owner's key (X-Boticord-Token) in no
 *   log line (the logger is not told to scrub it here) and no stored event.
 *
 * "Once" is checked after a marker: a review sent after the replayed frames, whose announcement
 * shows that the client took everything before it (it hands events over in order), and after every
 * stored event is done with.
 */
import {
  type APIEmbed,
  type APIApplicationCommandInteractionDataOption as CommandOption,
  MessageFlags,
  PermissionFlagsBits,
} from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HistoryRepository, ReminderRepository } from '../../src/store/index.js';
import {
  botRoleOf,
  commandOption,
  DEFAULT_BOT_PERMISSIONS,
  makeGuild,
  makeMember,
  makeRole,
  makeTextChannel,
  makeUser,
  Permission,
  type PostedMessage,
  snowflake,
} from '../discord/index.js';
import { IDS, V3_KEYS } from '../emulator/index.js';
import { freshPlace, type Place } from '../store/places.js';
import { asEmbed, viewOf } from '../support/layout-view.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { eventually } from '../support/wait.js';
import {
  type Answer,
  buttonsOf,
  embedOf,
  type Harness,
  isEphemeral,
  liveMessages,
  mentionProblems,
  privateMessage,
  publicMessage,
  RAW_MENTION,
  secretLeaks,
  startHarness,
} from './harness.js';

const DAY = 86_400_000;
const WAIT_MS = 10_000;
const NOBODY = { everyone: false, users: [], roles: [] };
/** The key pasted in /settings webhook (and sent back by the directory's webhook as X-Hook-Key). */
const HOOK_KEY = 'hk_v3Notify9LmN4pR8sT1wZ';

/** Each case: an engine, and a server's language with what its members read. */
const CASES = [
  {
    engine: 'sqlite',
    locale: 'en-US',
    name: 'Fresh Server',
    thanks: 'Thanks {member} for raising {server}, {streak} day in a row! @everyone <@&1234>',
    thanked: (id: string) =>
      `Thanks <@${id}> for raising Fresh Server, 1 day in a row! @\u200beveryone <\u200b@&1234>`,
    board: (id: string) => `**1.** <@${id}>: 1 up`,
    review: {
      new: '⭐ New review on BotiCord',
      edit: '✏️ A review was edited',
      delete: '🗑️ A review was removed',
    },
    upButton: 'Raise on BotiCord',
    seenTitle: '✅ Upped on BotiCord',
    seenBy: (id: string) => `By <@${id}>,`,
  },
  {
    // Without PostgreSQL (test/support/postgres.ts) the Russian case still runs, on SQLite.
    engine: HAS_POSTGRES ? 'postgres' : 'sqlite',
    locale: 'ru',
    name: 'Свежий сервер',
    thanks: 'Спасибо, {member}! {server} поднят, дней подряд: {streak} @everyone <@&1234>',
    thanked: (id: string) =>
      `Спасибо, <@${id}>! Свежий сервер поднят, дней подряд: 1 @\u200beveryone <\u200b@&1234>`,
    board: (id: string) => `**1.** <@${id}>: 1 ап`,
    review: { new: '⭐ Новый отзыв на BotiCord', edit: '✏️ Отзыв изменён', delete: '🗑️ Отзыв удалён' },
    upButton: 'Поднять на BotiCord',
    seenTitle: '✅ Сервер поднят на BotiCord',
    seenBy: (id: string) => `Апнул <@${id}>,`,
  },
] as const;

describe.each(CASES)('v3 notifications end to end ($engine, $locale)', (c) => {
  const reminders = makeTextChannel({ name: 'reminders' });
  const events = makeTextChannel({ name: 'directory-events', position: 1 });
  const reward = makeRole({ name: 'Upper', position: 1 });
  // The sample server: the staff key's account owns it, so its events reach the bot's socket.
  const guild = makeGuild({
    id: IDS.serverFresh,
    name: c.name,
    channels: [reminders, events],
    roles: [reward],
    preferredLocale: c.locale,
  });
  const anna = makeUser({ username: 'anna' });
  const boris = makeUser({ username: 'boris' });
  const vera = makeUser({ username: 'vera' });
  const gleb = makeUser({ username: 'gleb' });
  let place: Place;
  let h: Harness;
  let env: Record<string, string>;
  let markers = 0;

  beforeAll(async () => {
    place = await freshPlace(c.engine);
    env = {
      DIRECTORY_API_VERSION: 'v3',
      DIRECTORY_TOKEN_KIND: '',
      DIRECTORY_ROUTE_RATE_LIMIT: '',
      DIRECTORY_TOKEN: V3_KEYS.staff,
      WEBHOOK_PORT: '0',
      WEBHOOK_HOST: '127.0.0.1',
      // The notifications are held by the process that posts statistics: its first post is far off.
      STATS_FIRST_DELAY: '10m',
      ...place.env,
    };
    h = await startHarness({
      guilds: [guild],
      users: [anna, boris, vera, gleb],
      env,
      postStats: true,
      // No scrubbing: a key in the log would show, not be masked.
      scrubSecrets: false,
    });
    expect(h.bot.store.engine).toBe(c.engine);
    h.secrets.add(HOOK_KEY);
    const g = h.discord.guilds.get(guild.id)!;
    for (const user of [anna, boris, vera, gleb]) g.members.push(makeMember(user));
    const botRole = botRoleOf(g, h.discord.botUser.id)!;
    h.discord.setRolePermissions(
      guild.id,
      botRole.id,
      BigInt(DEFAULT_BOT_PERMISSIONS) | Permission.ManageRoles,
    );
    botRole.position = reward.position + 1;

    const setUp: Array<[CommandOption, string]> = [
      [
        commandOption.subcommand('reminders', [commandOption.channel('channel', reminders.id)]),
        'reminders-on',
      ],
      [commandOption.subcommand('thanks', [commandOption.string('message', c.thanks)]), 'thanks'],
      [
        commandOption.group('rewards', [
          commandOption.subcommand('add', [
            commandOption.role('role', reward.id),
            commandOption.integer('ups', 1),
            commandOption.string('period', 'week'),
          ]),
        ]),
        'reward:week',
      ],
      // On v3 too the key is the one the server's page sends back (X-Hook-Key) to the HTTPS receiver.
      [
        commandOption.subcommand('webhook', [
          commandOption.string('key', HOOK_KEY),
          commandOption.channel('channel', events.id),
        ]),
        'webhook-on',
      ],
    ];
    for (const [sub, outcome] of setUp) expect((await settings(sub)).outcome).toBe(outcome);
    await connected();
  }, 60_000);

  afterAll(async () => {
    await h?.close();
    await place?.remove();
  });

  function settings(sub: CommandOption): Promise<Answer> {
    return h.run({
      guildId: guild.id,
      name: 'settings',
      options: [sub],
      permissions: PermissionFlagsBits.ManageGuild,
    });
  }

  /** The bot's notifications ready on a socket the emulator authenticated with the staff key, other than `before`. */
  async function connected(before: readonly string[] = []): Promise<void> {
    await eventually(
      () =>
        h.bot.notifications?.state === 'ready' &&
        h.emu.v3.sockets().some((s) => s.authed && s.key === V3_KEYS.staff && !before.includes(s.id))
          ? true
          : undefined,
      WAIT_MS,
      'the notifications socket authenticated and ready',
    );
  }

  const socketIds = () => h.emu.v3.sockets().map((s) => s.id);

  /** Every stored event done with (the announcer has nothing left to do). */
  async function settled(): Promise<void> {
    await eventually(
      async () => {
        const rows = await h.bot.store.run((db) => db.selectFrom('webhook_events').select('state').execute());
        return rows.every((r) => r.state === 'done' || r.state === 'failed') ? true : undefined;
      },
      WAIT_MS,
      'every stored event done with',
    );
  }

  /**
   * A review by a member of its own, sent after whatever the socket carried before it: once it is
   * announced, everything before it on the socket was taken (the client hands events over in order).
   */
  async function marked(): Promise<void> {
    markers += 1;
    const content = `marker review ${markers}`;
    h.emu.v3.comment('comment_added', guild.id, snowflake(), { content, rating: 5 });
    await h.discord.waitForMessage(events.id, (m) => textOf(m).includes(content), WAIT_MS);
    await settled();
  }

  function textOf(message: PostedMessage | Record<string, unknown>): string {
    const body = 'body' in message && typeof message.channelId === 'string' ? message.body : message;
    return viewOf(body as Record<string, unknown>).prose.join('\n');
  }

  const thanksFor = (userId: string) =>
    h.discord.channelMessages(reminders.id).filter((m) => m.content.includes(`<@${userId}>`));
  const rolePuts = (userId: string) =>
    h.discord.requests.filter(
      (r) => r.method === 'PUT' && r.path === `/guilds/${guild.id}/members/${userId}/roles/${reward.id}`,
    );
  const upsOf = async (userId: string) =>
    (await new HistoryRepository(h.bot.store).members(guild.id, 0)).find((m) => m.userId === userId)?.ups ??
    0;

  /** What a member's one up left: one thank-you line, one role given, one up in the history. */
  async function upOnce(userId: string): Promise<void> {
    const lines = thanksFor(userId);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.content).toBe(c.thanked(userId));
    expect(lines[0]?.allowedMentions).toEqual({ parse: [] });
    expect(lines[0]?.pings).toEqual(NOBODY);
    expect(rolePuts(userId)).toHaveLength(1);
    expect(await upsOf(userId)).toBe(1);
  }

  it('an up on the site: reminder a day after it, /leaderboard, the reward role, the thank-you line; once across a drop, a replay and a restart', async () => {
    const up = h.emu.v3.upOnSite(guild.id, anna.id);
    await h.discord.waitForMessage(reminders.id, (m) => m.content.includes(`<@${anna.id}>`), WAIT_MS);
    await eventually(
      () => (rolePuts(anna.id).length > 0 ? true : undefined),
      WAIT_MS,
      'the reward role given',
    );
    await settled();
    const reminder = await new ReminderRepository(h.bot.store).getGuild(guild.id);
    expect(reminder?.nextUpAt).toBe(up.happened + DAY);
    expect(reminder?.dueAt).toBe(up.happened + DAY);
    const members = h.discord.guilds.get(guild.id)?.members ?? [];
    expect(members.find((m) => m.user.id === anna.id)?.roles).toContain(reward.id);

    const board = await h.run({ guildId: guild.id, name: 'leaderboard', user: boris, locale: c.locale });
    expect(board.outcome).toBe('shown');
    expect(embedOf(publicMessage(board)).description?.split('\n')).toEqual([c.board(anna.id)]);
    await upOnce(anna.id);

    // The network drops; the client comes back on its own, and the gateway tells the up again.
    let before = socketIds();
    h.emu.v3.dropSockets();
    await connected(before);
    const told = h.emu.v3.notifications.length;
    expect(h.emu.v3.replay(told - h.emu.v3.notifications.indexOf(up))[0]).toEqual(up);
    await marked();
    await upOnce(anna.id);

    // A new bot (a new discord.js client, the same store), told everything since the up again.
    before = socketIds();
    await h.restartBot(env);
    await connected(before);
    expect(h.emu.v3.replay(h.emu.v3.notifications.length - h.emu.v3.notifications.indexOf(up))[0]).toEqual(
      up,
    );
    await marked();
    await upOnce(anna.id);
    const reminderAfter = await new ReminderRepository(h.bot.store).getGuild(guild.id);
    expect(reminderAfter?.nextUpAt).toBe(up.happened + DAY);
    const again = await h.run({ guildId: guild.id, name: 'leaderboard', user: boris, locale: c.locale });
    expect(embedOf(publicMessage(again)).description?.split('\n')).toEqual([c.board(anna.id)]);
  }, 40_000);

  it('reviews: announced once in the webhook channel, an edit edits it, a removal marks it; hostile text pings nobody', async () => {
    const before = h.discord.channelMessages(events.id).length;
    const hostile = '@everyone <@&42> **loud** __under__ @here';
    h.emu.v3.comment('comment_added', guild.id, boris.id, { content: hostile, rating: 4 });
    const posted = await h.discord.waitForMessage(
      events.id,
      (m) => m.content === '' && textOf(m).includes('loud'),
      WAIT_MS,
    );
    await settled();
    expect(h.discord.channelMessages(events.id).slice(before)).toEqual([posted]);
    expect(posted.body.flags).toBe(MessageFlags.IsComponentsV2);
    expect(posted.allowedMentions).toEqual({ parse: [] });
    expect(posted.pings).toEqual(NOBODY);
    const shown = asEmbed(posted.body) as APIEmbed;
    expect(shown.title).toBe(c.review.new);
    const text = textOf(posted);
    expect(text).toContain('@\u200beveryone <\u200b@&42> \\*\\*loud\\*\\* \\_\\_under\\_\\_ @\u200bhere');
    expect(text).toContain(`<@${boris.id}>`);
    expect(text).toContain('★★★★☆');
    expect(RAW_MENTION.exec(text)).toBeNull();

    h.emu.v3.comment('comment_edited', guild.id, boris.id, { content: 'better now **really**', rating: 5 });
    await eventually(() => (posted.edits.length >= 1 ? true : undefined), WAIT_MS, 'the announcement edited');
    await settled();
    const edit = posted.edits[0]!;
    expect(asEmbed(edit).title).toBe(c.review.edit);
    expect(textOf(edit)).toContain('better now \\*\\*really\\*\\*');
    expect(textOf(edit)).toContain('★★★★★');
    expect(edit.allowed_mentions).toEqual({ parse: [] });

    h.emu.v3.comment('comment_removed', guild.id, boris.id, { content: 'better now **really**', rating: 5 });
    await eventually(
      () => (posted.edits.length >= 2 ? true : undefined),
      WAIT_MS,
      'the announcement marked removed',
    );
    await settled();
    expect(asEmbed(posted.edits[1]!).title).toBe(c.review.delete);
    expect(posted.edits[1]?.allowed_mentions).toEqual({ parse: [] });
    // One message for the review, whatever happened to it.
    expect(h.discord.channelMessages(events.id).slice(before)).toEqual([posted]);
    expect(posted.deletedAt).toBeUndefined();
  });

  it('/up: a private link to the server page, then a private follow-up once the up on the site is told of', async () => {
    const answer = await h.run({ guildId: guild.id, name: 'up', user: vera, locale: c.locale });
    expect(answer.outcome).toBe('onSite');
    const message = privateMessage(answer);
    expect(buttonsOf(message)).toEqual([
      expect.objectContaining({ label: c.upButton, url: 'https://boticord.top/server/boticord' }),
    ]);

    h.emu.v3.upOnSite(guild.id, vera.id);
    const followUp = await answer.handle.waitFor(
      (r) => r.method === 'POST' && r.path.startsWith('/webhooks/') && !answer.requests.includes(r),
      WAIT_MS,
    );
    await h.discord.waitForMessage(reminders.id, (m) => m.content.includes(`<@${vera.id}>`), WAIT_MS);
    await settled();
    const view = answer.handle.view();
    const live = liveMessages(view);
    expect(live).toHaveLength(2);
    expect(live.every(isEphemeral)).toBe(true);
    // The answer, as it was, and one follow-up after it.
    const seen = live.filter((m) => m.id !== message.id);
    expect(live.filter((m) => m.id === message.id)).toEqual([message]);
    expect(seen).toHaveLength(1);
    const prose = viewOf(seen[0]!).prose.join('\n');
    expect(prose).toContain(c.seenTitle);
    expect(prose).toContain(c.seenBy(vera.id));
    expect(mentionProblems(followUp.body as Record<string, unknown>)).toEqual([]);
    await upOnce(vera.id);
  });

  it('an up told over the WebSocket and an HTTPS webhook at once is recorded once; the owner key is logged and stored nowhere', async () => {
    h.emu.v3.setWebhook(guild.id, {
      url: `http://127.0.0.1:${h.bot.webhookPort()}/hooks/directory/${guild.id}`,
      headers: { 'X-Hook-Key': HOOK_KEY },
    });
    try {
      const deliveries = h.emu.v3.hookDeliveries.length;
      const received = h.entries().filter((e) => e.msg === 'webhook delivery').length;
      // The socket is there too: the emulator sends the up down both paths.
      expect(h.emu.v3.sockets().filter((s) => s.authed && s.key === V3_KEYS.staff)).toHaveLength(1);
      const up = h.emu.v3.upOnSite(guild.id, gleb.id);
      await h.emu.v3.hooksSettled();
      expect(h.emu.v3.hookDeliveries.slice(deliveries)).toEqual([
        expect.objectContaining({ affected: guild.id, type: 'up_added', status: expect.any(Number) }),
      ]);
      expect(h.emu.v3.hookDeliveries.at(-1)?.status).toBeGreaterThanOrEqual(200);
      expect(h.emu.v3.hookDeliveries.at(-1)?.status).toBeLessThan(300);
      await h.discord.waitForMessage(reminders.id, (m) => m.content.includes(`<@${gleb.id}>`), WAIT_MS);
      await marked();
      // The receiver took both (the up, then the marker review): each stored, or stored already from the socket.
      const taken = h
        .entries()
        .filter((e) => e.msg === 'webhook delivery')
        .slice(received);
      expect(taken.map((e) => [e.guildId, e.status])).toEqual([
        [guild.id, 200],
        [guild.id, 200],
      ]);
      for (const e of taken) expect(['stored', 'duplicate']).toContain(e.outcome);
      await upOnce(gleb.id);
      const rows = await h.bot.store.run((db) => db.selectFrom('webhook_events').selectAll().execute());
      const ofUp = rows.filter((r) => r.type === 'up_added' && r.id.includes(`:${gleb.id}:${up.happened}`));
      expect(ofUp).toHaveLength(1);
      expect(JSON.stringify(rows)).not.toContain(V3_KEYS.staff);
      expect(JSON.stringify(rows)).not.toContain(HOOK_KEY);
      expect(h.lines.filter((line) => line.includes(V3_KEYS.staff))).toEqual([]);
      expect(secretLeaks(h)).toEqual([]);
    } finally {
      h.emu.v3.setWebhook(guild.id, null);
    }
  });
});
