/**
 * Reminders end to end, on SQLite and on PostgreSQL: the real bot (discord.js, the scheduler, the
 * store) posts to the Discord stand-in at the next-up time. What a server sees: the reminder in
 * its channel on time, pinging exactly the role it chose and no one else, in its language; a
 * member's own reminder by DM or, with DMs closed, by a mention; and every failure recorded for
 * the admins rather than lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FollowupRepository, ReminderRepository, SettingsRepository } from '../../src/store/index.js';
import {
  botRoleOf,
  DEFAULT_BOT_PERMISSIONS,
  makeGuild,
  makeMember,
  makeRole,
  makeTextChannel,
  makeUser,
  Permission,
  type PostedMessage,
} from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { ENGINES, freshPlace, type Place } from '../store/places.js';
import { hostileTemplate } from '../support/hostile-templates.js';
import { viewOf } from '../support/layout-view.js';
import { eventually } from '../support/wait.js';
import { type Harness, startHarness } from './harness.js';

describe.each(ENGINES)('reminders (%s)', (engine) => {
  const pingRole = makeRole({ name: 'Bumpers', mentionable: true });
  const quietRole = makeRole({ name: 'Others', mentionable: true });
  const member = makeUser({ username: 'member' });
  const closed = makeUser({ username: 'closed', dmsClosed: true });
  const channel = makeTextChannel({ name: 'bumps' });
  // The bot may mention everyone here: only allowed_mentions keeps @everyone quiet.
  const guild = makeGuild({
    name: 'Reminder Guild @everyone <@&1>',
    channels: [channel],
    roles: [pingRole, quietRole],
    preferredLocale: 'en-US',
  });
  const ruGuild = makeGuild({ name: 'Русский сервер', channels: ['bumps'], preferredLocale: 'ru' });
  const spares = Array.from({ length: 4 }, (_, i) => makeGuild({ name: `Spare ${i}`, channels: ['bumps'] }));
  let place: Place;
  let h: Harness;
  let settings: SettingsRepository;
  let reminders: ReminderRepository;

  beforeAll(async () => {
    place = await freshPlace(engine);
    h = await startHarness({
      guilds: [guild, ruGuild, ...spares],
      users: [member, closed],
      env: place.env,
    });
    const botRole = botRoleOf(h.discord.guilds.get(guild.id)!, h.discord.botUser.id)!;
    h.discord.setRolePermissions(
      guild.id,
      botRole.id,
      BigInt(DEFAULT_BOT_PERMISSIONS) | Permission.MentionEveryone,
    );
    settings = new SettingsRepository(h.bot.store);
    reminders = new ReminderRepository(h.bot.store);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await place?.remove();
  });

  function channelOf(g: { channels: Array<{ id: string }> }): string {
    return g.channels[0]!.id;
  }

  /** A server reminder due `inMs` from now, with the scheduler told as an /up would tell it. */
  async function due(guildId: string, inMs = 300): Promise<number> {
    const dueAt = Date.now() + inMs;
    await reminders.scheduleGuild(guildId, { dueAt, nextUpAt: dueAt }, Date.now());
    h.bot.reminders.wake(dueAt);
    return dueAt;
  }

  function postedSince(t: number) {
    return (m: PostedMessage) => m.receivedAt >= t;
  }

  it('posts at the next-up time in the chosen channel, pinging exactly the chosen role', async () => {
    await settings.update(
      guild.id,
      { reminderChannelId: channel.id, reminderRoleId: pingRole.id },
      Date.now(),
    );
    const dueAt = await due(guild.id, 800);
    const message = await h.discord.waitForMessage(channel.id, postedSince(dueAt - 800), 5_000);
    const lateness = message.receivedAt - dueAt;
    expect(lateness).toBeGreaterThanOrEqual(-5);
    expect(lateness).toBeLessThan(1_000);
    // A Components V2 layout: the role's mention in its text pings by allowed_mentions, as in content.
    expect(message.body.flags).toBe(1 << 15);
    expect(message.content).toBe('');
    expect(message.text).toContain(`<@&${pingRole.id}>`);
    expect(message.text).toContain('can be raised again');
    expect(message.allowedMentions).toEqual({ parse: [], roles: [pingRole.id] });
    expect(message.pings).toEqual({ everyone: false, users: [], roles: [pingRole.id] });
    // The server's name is shown, never as a mention.
    expect(message.text).not.toContain('@everyone');
    expect(message.nonce).toEqual(expect.any(String));
    expect(message.enforceNonce).toBe(true);
    await eventually(
      async () => ((await reminders.getGuild(guild.id))?.state === 'sent' ? true : undefined),
      3_000,
      'sent',
    );
  });

  it('edits the posted reminder once the server is upped: who and how long after, pinging nobody, once', async () => {
    await settings.update(
      guild.id,
      { reminderChannelId: channel.id, reminderRoleId: pingRole.id, reminderTemplate: null },
      Date.now(),
    );
    // The directory knows this server (a copy of a sample): its /up succeeds.
    const sample = h.emu.state.servers.get(IDS.serverFresh);
    if (!sample) throw new Error('the sample server is missing');
    h.emu.state.servers.set(guild.id, { ...structuredClone(sample), id: guild.id });
    const dueAt = await due(guild.id);
    const posted = await h.discord.waitForMessage(channel.id, postedSince(dueAt - 300), 5_000);
    const up = await h.run({
      guildId: guild.id,
      name: 'up',
      user: { id: member.id, username: member.username },
    });
    expect(up.outcome).toBe('success');
    // The /up's answer says how fast it followed the reminder.
    const answer = viewOf(up.view.original);
    expect(answer.fields.find((f) => f.name === 'Reaction')?.value).toMatch(/^⚡ \d+ s after the reminder$/);
    const edited = await eventually(
      () => h.discord.channelMessages(channel.id).find((m) => m.id === posted.id && m.edits.length > 0),
      5_000,
      'the reminder edited',
    );
    const [edit] = edited.edits;
    expect(edit?.allowed_mentions).toEqual({ parse: [] });
    expect(edit?.flags).toBe(1 << 15);
    const shown = viewOf(edited.message).prose;
    // The reminder's text as it was (its role's mention now renders as a name), then who upped.
    expect(shown[0]).toBe(posted.text);
    expect(shown[1]).toMatch(new RegExp(`^✅ Upped by <@${member.id}> \\d+ s after the reminder\\.$`));
    // Once: the follow-up is done, and a later up (the directory's webhook for the same up) finds none.
    const followups = new FollowupRepository(h.bot.store);
    await eventually(
      async () => ((await followups.get(posted.id))?.state === 'done' ? true : undefined),
      3_000,
      'the follow-up recorded done',
    );
    expect(await followups.take(guild.id, { userId: member.id, at: Date.now() })).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(h.discord.channelMessages(channel.id).find((m) => m.id === posted.id)?.edits).toHaveLength(1);
  });

  it('"Notify me" gives the reminder role to whoever presses it, takes it off again, and says when the bot cannot', async () => {
    const g = h.discord.guilds.get(guild.id);
    const botRole = g && botRoleOf(g, h.discord.botUser.id);
    if (!g || !botRole) throw new Error('the stand-in guild or the bot role is missing');
    if (!g.members.some((m) => m.user.id === member.id)) g.members.push(makeMember(member));
    const rolesOfMember = () => g.members.find((m) => m.user.id === member.id)?.roles ?? [];
    const press = (locale = 'en-US') =>
      h.click({
        guildId: guild.id,
        customId: `notify:${guild.id}`,
        messageId: posted.id,
        user: { id: member.id, username: member.username },
        locale,
      });
    await settings.update(
      guild.id,
      { reminderChannelId: channel.id, reminderRoleId: pingRole.id, reminderTemplate: null, problem: null },
      Date.now(),
    );
    const dueAt = await due(guild.id);
    const posted = await h.discord.waitForMessage(channel.id, postedSince(dueAt - 300), 5_000);
    expect(
      viewOf(posted.body)
        .rows.flat()
        .map((b) => [b.label, b.custom_id]),
    ).toEqual([['Notify me', `notify:${guild.id}`]]);
    const before = { permissions: botRole.permissions, position: botRole.position };
    try {
      // The bot may not manage roles: the member is told privately, the admins in /settings show.
      const cannot = await press();
      expect(cannot.outcome).toBe('cannot-give-role');
      expect(viewOf(cannot.view.original).description).toBe(
        `The bot cannot give you <@&${pingRole.id}>: it needs Manage Roles and its own role above <@&${pingRole.id}>. The server's admins see it in /settings show.`,
      );
      expect((await settings.get(guild.id))?.problem?.reason).toBe('cannot-give-role');
      expect(rolesOfMember()).not.toContain(pingRole.id);

      // Manage Roles, and its role above the reminder role: given, then taken off.
      h.discord.setRolePermissions(
        guild.id,
        botRole.id,
        BigInt(DEFAULT_BOT_PERMISSIONS) | Permission.MentionEveryone | Permission.ManageRoles,
      );
      botRole.position = pingRole.position + 1;
      const added = await press();
      expect(added.outcome).toBe('added');
      expect(rolesOfMember()).toContain(pingRole.id);
      expect((await settings.get(guild.id))?.problem).toBeNull();
      const removed = await press('ru');
      expect(removed.outcome).toBe('removed');
      expect(rolesOfMember()).not.toContain(pingRole.id);
      expect(viewOf(removed.view.original).description).toBe(
        `🔕 Роль <@&${pingRole.id}> снята: напоминания не будут вас упоминать.`,
      );
      // Nothing of it pinged anyone.
      for (const answer of [cannot, added, removed]) {
        const edit = answer.requests.find((r) => r.method === 'PATCH');
        expect((edit?.body as { allowed_mentions?: unknown } | undefined)?.allowed_mentions).toEqual({
          parse: [],
          replied_user: false,
        });
      }
    } finally {
      h.discord.setRolePermissions(guild.id, botRole.id, BigInt(before.permissions));
      botRole.position = before.position;
    }
  });

  it("uses the admins' template, and the server's language for the default", async () => {
    await settings.update(
      guild.id,
      {
        reminderChannelId: channel.id,
        reminderRoleId: null,
        reminderTemplate: 'Time! {command} for {server} at {time}',
      },
      Date.now(),
    );
    const dueAt = await due(guild.id);
    const message = await h.discord.waitForMessage(channel.id, postedSince(dueAt - 300), 5_000);
    expect(message.text).toMatch(/^Time! (<\/up:\d+>|\/up) for .+ at <t:\d+:t>$/);
    expect(message.allowedMentions).toEqual({ parse: [] });

    const ruChannel = channelOf(ruGuild);
    await settings.update(ruGuild.id, { reminderChannelId: ruChannel }, Date.now());
    const ruDue = await due(ruGuild.id);
    const ru = await h.discord.waitForMessage(ruChannel, postedSince(ruDue - 300), 5_000);
    expect(ru.text).toContain('снова можно поднять');

    await settings.update(ruGuild.id, { publicLanguage: 'en-US' }, Date.now());
    const enDue = await due(ruGuild.id, 400);
    const en = await h.discord.waitForMessage(ruChannel, postedSince(enDue - 400), 5_000);
    expect(en.text).toContain('can be raised again');
  });

  it("sends a member's own reminder by DM, or mentions them in the channel when DMs are closed", async () => {
    await settings.update(
      guild.id,
      { reminderChannelId: channel.id, reminderRoleId: null, reminderTemplate: null },
      Date.now(),
    );
    const dueAt = Date.now() + 300;
    expect(await reminders.togglePersonal(guild.id, member.id, dueAt, Date.now())).toBe('on');
    expect(await reminders.togglePersonal(guild.id, closed.id, dueAt, Date.now())).toBe('on');
    h.bot.reminders.wake(dueAt);
    const dm = await h.discord.waitForDm(member.id, undefined, 5_000);
    expect(dm.text).toContain('can be raised again');
    expect(dm.allowedMentions).toEqual({ parse: [] });
    const fallback = await h.discord.waitForMessage(
      channel.id,
      (m) => m.text.includes(`<@${closed.id}>`),
      5_000,
    );
    expect(fallback.allowedMentions).toEqual({ parse: [], users: [closed.id] });
    expect(fallback.pings).toEqual({ everyone: false, users: [closed.id], roles: [] });
    expect(h.discord.dmMessages(closed.id)).toEqual([]);

    // Each carries the member's "Snooze 1 h" and "Stop", which are theirs alone.
    const labels = (m: typeof dm) =>
      viewOf(m.body)
        .rows.flat()
        .map((b) => [b.label, b.custom_id]);
    expect(labels(dm)).toEqual([
      ['Snooze 1 h', `reminder:s:${guild.id}:${member.id}`],
      ['Stop', `reminder:x:${guild.id}:${member.id}`],
    ]);
    expect(labels(fallback).map(([label]) => label)).toEqual(['Snooze 1 h', 'Stop']);
    const someoneElse = await h.click({
      guildId: guild.id,
      customId: `reminder:x:${guild.id}:${closed.id}`,
      messageId: fallback.id,
      user: { id: member.id, username: member.username },
    });
    expect(someoneElse.outcome).toBe('not-yours');
    expect(someoneElse.view.followUps.map((m) => viewOf(m).description)).toEqual([
      "This reminder is another member's: its buttons are theirs.",
    ]);
    expect((await reminders.getPersonal(guild.id, closed.id))?.state).toBe('sent');

    // Snooze, from the DM: the member's reminder is due again in an hour, and the DM says so.
    const pressedAt = Date.now();
    const snoozed = await h.click({
      customId: `reminder:s:${guild.id}:${member.id}`,
      messageId: dm.id,
      user: { id: member.id, username: member.username },
    });
    expect(snoozed.outcome).toBe('snoozed');
    const again = await reminders.getPersonal(guild.id, member.id);
    expect(again?.state).toBe('scheduled');
    expect(again?.dueAt).toBeGreaterThanOrEqual(pressedAt + 3_600_000);
    expect(again?.dueAt).toBeLessThan(pressedAt + 3_600_000 + 5_000);
    const edit = snoozed.requests.find((r) => r.method === 'PATCH');
    expect(viewOf(edit?.body).description).toMatch(
      /^⏰ I will remind you again <t:\d+:R> that \*\*.+\*\* can be raised\.$/,
    );
    expect(viewOf(edit?.body).rows).toEqual([]);

    // Stop: no reminder left for the member.
    const stopped = await h.click({
      customId: `reminder:x:${guild.id}:${member.id}`,
      messageId: dm.id,
      user: { id: member.id, username: member.username },
      locale: 'ru',
    });
    expect(stopped.outcome).toBe('stopped');
    expect(await reminders.getPersonal(guild.id, member.id)).toBeUndefined();
    expect(viewOf(stopped.requests.find((r) => r.method === 'PATCH')?.body).description).toContain(
      'Больше не напоминаю о',
    );
  });

  it('records a deleted channel, a lost permission and a deleted role for the admins, posting nothing', async () => {
    const [gone, denied, noRole] = spares;
    // Channel deleted (10003).
    await settings.update(gone!.id, { reminderChannelId: channelOf(gone!) }, Date.now());
    h.discord.deleteChannel(channelOf(gone!));
    await due(gone!.id);
    // Send Messages denied to the bot's role and @everyone (50013).
    await settings.update(denied!.id, { reminderChannelId: channelOf(denied!) }, Date.now());
    h.discord.setChannelOverwrites(channelOf(denied!), [
      { id: denied!.id, type: 'role', deny: Permission.SendMessages },
      ...denied!.roles
        .filter((r) => r.managed)
        .map((r) => ({ id: r.id, type: 'role' as const, deny: Permission.SendMessages })),
    ]);
    await due(denied!.id);
    // The role the reminders mention is deleted.
    const role = h.discord.addRole(noRole!.id, { name: 'gone soon', mentionable: true });
    await settings.update(
      noRole!.id,
      { reminderChannelId: channelOf(noRole!), reminderRoleId: role.id },
      Date.now(),
    );
    h.discord.deleteRole(noRole!.id, role.id);
    await eventually(
      async () => ((await settings.get(noRole!.id))?.problem ? true : undefined),
      5_000,
      'the role problem',
    );
    await due(noRole!.id);

    const problem = async (id: string) => (await settings.get(id))?.problem?.reason;
    const failure = async (id: string) => (await reminders.getGuild(id))?.failure;
    await eventually(async () => ((await failure(noRole!.id)) ? true : undefined), 5_000, 'the failures');
    await eventually(
      async () => ((await failure(gone!.id)) && (await failure(denied!.id)) ? true : undefined),
      5_000,
      'the failures',
    );
    expect(await problem(gone!.id)).toBe('channel-deleted');
    expect(await failure(gone!.id)).toBe('channel-deleted');
    expect(await problem(denied!.id)).toBe('missing-permission:SendMessages');
    expect(await problem(noRole!.id)).toBe('role-deleted');
    expect(await failure(noRole!.id)).toBe('role-deleted');
    expect(h.discord.channelMessages(channelOf(noRole!))).toEqual([]);
    expect(h.discord.channelMessages(channelOf(denied!))).toEqual([]);
  });

  // Each template is one of the pairs of test/support/hostile-templates.ts, which repeat every 12:
  // 200 hold every pair many times. What this proves end to end (stored, posted, allowed_mentions
  // honoured by the Discord stand-in, nothing crashed) is the same at 200 as at 1,000; the volume,
  // 1,000 templates with hostile server names through the same sender, is proven in
  // test/unit/reminders/hostile-templates.test.ts, without discord.js's 50 requests a second.
  const hostileCount = 200;
  it(`${hostileCount} hostile templates and server names: nothing pinged beyond the role, nothing crashed`, async () => {
    const targets = [guild, ruGuild];
    await settings.update(ruGuild.id, { reminderRoleId: null }, Date.now());
    await settings.update(guild.id, { reminderRoleId: quietRole.id }, Date.now());
    const seen: PostedMessage[] = [];
    for (let i = 0; i < hostileCount; i += targets.length) {
      const started = Date.now();
      await Promise.all(
        targets.map(async (g, j) => {
          await settings.update(g.id, { reminderTemplate: hostileTemplate(i + j) }, Date.now());
          await due(g.id, 0);
        }),
      );
      for (const g of targets) {
        seen.push(await h.discord.waitForMessage(channelOf(g), postedSince(started), 5_000));
      }
    }
    expect(seen).toHaveLength(hostileCount);
    for (const m of seen) {
      expect(m.pings.everyone).toBe(false);
      expect(m.pings.users).toEqual([]);
      expect(m.pings.roles.every((r) => r === quietRole.id)).toBe(true);
    }
    expect(h.unhandled).toEqual([]);
  }, 120_000);
});
