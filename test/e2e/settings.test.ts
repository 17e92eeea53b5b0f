/**
 * /settings end to end, on SQLite and on PostgreSQL: the real bot and discord.js client, the
 * Discord stand-in's channels, roles and permission overwrites. Choosing a channel posts a
 * confirmation that pings no one, and saves only if that worked; a permission missing there is
 * named; reminders-off, the language and show do what they say, in the user's language.
 */
import {
  type APIApplicationCommandInteractionDataOption as CommandOption,
  MessageFlags,
  PermissionFlagsBits,
} from 'discord.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { settingsCommand } from '../../commands/definitions.js';
import {
  type Engine,
  HistoryRepository,
  openStore,
  ReminderRepository,
  SettingsRepository,
  type Store,
} from '../../src/store/index.js';
import {
  botRoleOf,
  ChannelKind,
  commandOption,
  type GuildFixture,
  makeGuild,
  makeRole,
  makeTextChannel,
  type PostedMessage,
  snowflake,
} from '../discord/index.js';
import { ENGINES, freshPlace, type Place } from '../store/places.js';
import {
  type Answer,
  embedOf,
  embedText,
  type Harness,
  isEphemeral,
  privateMessage,
  secretLeaks,
  startHarness,
  visibleText,
} from './harness.js';

const NOBODY = { everyone: false, users: [], roles: [] };
const MANAGE_GUILD = PermissionFlagsBits.ManageGuild;

function fixtures() {
  const guildId = snowflake();
  const channels = {
    reminders: makeTextChannel({ name: 'reminders' }),
    hidden: makeTextChannel({ name: 'hidden', position: 1 }),
    muted: makeTextChannel({ name: 'muted', position: 2 }),
    noEmbeds: makeTextChannel({ name: 'no-embeds', position: 3 }),
    noFiles: makeTextChannel({ name: 'no-files', position: 6 }),
    // Not text channels: Discord takes a post in a voice channel's chat, none in a category.
    voice: makeTextChannel({ name: 'Voice', type: ChannelKind.GuildVoice, position: 4 }),
    category: makeTextChannel({ name: 'Category', type: ChannelKind.GuildCategory, position: 5 }),
  };
  const role = makeRole({ name: 'Bumpers', mentionable: true });
  const guild = makeGuild({
    id: guildId,
    name: '@everyone Server',
    channels: Object.values(channels),
    roles: [role],
  });
  const ruGuild = makeGuild({ name: 'Русский сервер', preferredLocale: 'ru', channels: ['напоминания'] });
  return { guild, channels, role, ruGuild };
}

describe.each(ENGINES)('/settings on %s', (engine: Engine) => {
  const { guild, channels, role, ruGuild } = fixtures();
  let h: Harness;
  let place: Place;
  let store: Store;
  let settings: SettingsRepository;
  let reminders: ReminderRepository;

  beforeAll(async () => {
    place = await freshPlace(engine);
    // The test's own connection first: on SQLite, opening a second connection in this process
    // while the bot's starts its first reads can wait out the busy timeout (better-sqlite3 waits
    // synchronously, so the bot's side cannot finish meanwhile).
    store = await openStore(place.options);
    h = await startHarness({ guilds: [guild, ruGuild], env: place.env });
    settings = new SettingsRepository(store);
    reminders = new ReminderRepository(store);
    const botRole = botRoleOf(h.discord.guilds.get(guild.id) as GuildFixture, h.discord.botUser.id);
    if (!botRole) throw new Error('the stand-in gave the bot no role');
    const deny = (channelId: string, permission: bigint) =>
      h.discord.setChannelOverwrites(channelId, [{ id: botRole.id, type: 'role', deny: permission }]);
    deny(channels.hidden.id, PermissionFlagsBits.ViewChannel);
    deny(channels.muted.id, PermissionFlagsBits.SendMessages);
    deny(channels.noEmbeds.id, PermissionFlagsBits.EmbedLinks);
    deny(channels.noFiles.id, PermissionFlagsBits.AttachFiles);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await store?.close();
    await place?.remove();
  });
  beforeEach(() => h.reset());

  /** /settings <sub> by a member allowed to manage the server (Discord checked that already). */
  function settingsCommandRun(
    sub: string,
    options: CommandOption[] = [],
    extra: { guildId?: string; locale?: string } = {},
  ): Promise<Answer> {
    return h.run({
      guildId: extra.guildId ?? guild.id,
      name: 'settings',
      options: [commandOption.subcommand(sub, options)],
      permissions: MANAGE_GUILD,
      ...(extra.locale ? { locale: extra.locale } : {}),
    });
  }

  /** The private answer's text: the interaction was deferred privately and left nothing public. */
  function answerText(answer: Answer): string {
    const message = privateMessage(answer);
    expect(isEphemeral(message)).toBe(true);
    return embedText(embedOf(message));
  }

  function postsIn(channelId: string): PostedMessage[] {
    return h.discord.channelMessages(channelId);
  }

  it('reminders with a role and a text: a confirmation that pings no one, then everything saved', async () => {
    const before = postsIn(channels.reminders.id).length;
    const answer = await settingsCommandRun('reminders', [
      commandOption.channel('channel', channels.reminders.id),
      commandOption.role('role', role.id),
      commandOption.string('message', '@everyone {role} raise {server} with {command} at {time}'),
    ]);
    expect(answer.outcome).toBe('reminders-on');
    const text = answerText(answer);
    expect(text).toContain(`<#${channels.reminders.id}>`);
    expect(text).toContain(`<@&${role.id}>`);
    expect(text).toContain('@everyone {role} raise {server} with {command} at {time}');

    const posted = postsIn(channels.reminders.id).slice(before);
    expect(posted).toHaveLength(1);
    const [confirmation] = posted;
    expect(confirmation?.allowedMentions).toEqual({ parse: [] });
    expect(confirmation?.pings).toEqual(NOBODY);
    // A Components V2 notice: the flag set, no embed, the text in the layout.
    expect(confirmation?.body.flags).toBe(MessageFlags.IsComponentsV2);
    expect(confirmation?.embeds).toEqual([]);
    expect(visibleText(confirmation?.body ?? {})).toContain('Reminders will be posted here');
    expect(visibleText(confirmation?.body ?? {})).toContain(`<@&${role.id}>`);

    expect(await settings.get(guild.id)).toMatchObject({
      reminderChannelId: channels.reminders.id,
      reminderRoleId: role.id,
      reminderTemplate: '@everyone {role} raise {server} with {command} at {time}',
      problem: null,
    });
  });

  it.each([
    ['an unknown placeholder', '{role} {servr}', '{servr}'],
    ['1,001 characters', 'a'.repeat(1_001), '1,001'],
  ])(
    'refuses a text with %s: the default and the placeholders shown, nothing posted or saved',
    async (_, message, why) => {
      await settings.update(guild.id, { reminderChannelId: null, reminderTemplate: null }, Date.now());
      const before = h.discord.postedMessages().length;
      const answer = await settingsCommandRun('reminders', [
        commandOption.channel('channel', channels.reminders.id),
        commandOption.string('message', message),
      ]);
      expect(answer.outcome).toMatch(/^refused:template-/);
      const text = answerText(answer);
      expect(text).toContain(why);
      for (const placeholder of ['{role}', '{command}', '{server}', '{time}'])
        expect(text).toContain(placeholder);
      expect(text).toContain('{role} **{server}** can be raised again: {command}');
      expect(h.discord.postedMessages().length).toBe(before);
      expect((await settings.get(guild.id))?.reminderChannelId).toBeNull();
    },
  );

  it.each([
    ['hidden', 'missing-access', 'View Channel', ['Send Messages', 'Embed Links']],
    ['muted', 'missing-permission', 'Send Messages', ['View Channel', 'Embed Links']],
  ] as const)(
    'a channel where the bot lacks a permission (%s): nothing saved, that permission named',
    async (which, kind, named, notNamed) => {
      await settings.update(guild.id, { reminderChannelId: channels.reminders.id }, Date.now());
      const channel = channels[which];
      const answer = await settingsCommandRun('reminders', [commandOption.channel('channel', channel.id)]);
      expect(answer.outcome).toBe(`refused:${kind}`);
      const text = answerText(answer);
      expect(text).toContain(`**${named}**`);
      for (const other of notNamed) expect(text).not.toContain(other);
      expect(text).toContain(`<#${channel.id}>`);
      expect(text).toContain('Edit Channel › Permissions');
      expect(postsIn(channel.id)).toEqual([]);
      expect((await settings.get(guild.id))?.reminderChannelId).toBe(channels.reminders.id);
    },
  );

  it('a channel without Embed Links takes the reminders: what the bot posts there is a V2 layout, no embed', async () => {
    const answer = await settingsCommandRun('reminders', [
      commandOption.channel('channel', channels.noEmbeds.id),
    ]);
    expect(answer.outcome).toBe('reminders-on');
    const [confirmation] = postsIn(channels.noEmbeds.id);
    expect(confirmation?.body.flags).toBe(MessageFlags.IsComponentsV2);
    expect((await settings.get(guild.id))?.reminderChannelId).toBe(channels.noEmbeds.id);
  });

  it.each(['voice', 'category'] as const)(
    'a %s channel: refused before anything is posted, nothing saved',
    async (which) => {
      await settings.update(guild.id, { reminderChannelId: channels.reminders.id }, Date.now());
      const channel = channels[which];
      const answer = await settingsCommandRun('reminders', [commandOption.channel('channel', channel.id)]);
      expect(answer.outcome).toBe('refused:channel-type');
      expect(answerText(answer)).toContain(
        `<#${channel.id}> is not a text or announcement channel of this server, so nothing was saved.`,
      );
      expect(postsIn(channel.id)).toEqual([]);
      expect((await settings.get(guild.id))?.reminderChannelId).toBe(channels.reminders.id);
    },
  );

  it('a failure Discord may get over (500s): try again, nothing saved', async () => {
    await settings.update(guild.id, { reminderChannelId: null }, Date.now());
    h.discord.failPosts(channels.reminders.id, { status: 500, times: 10 });
    const answer = await settingsCommandRun('reminders', [
      commandOption.channel('channel', channels.reminders.id),
    ]);
    expect(answer.outcome).toBe('failed:transient');
    expect(answerText(answer)).toContain('try again');
    expect((await settings.get(guild.id))?.reminderChannelId).toBeNull();
  }, 30_000);

  it('show: every setting, the next reminder as <t:…:R>, the problem and how to fix it', async () => {
    const dueAt = Date.now() + 2 * 3_600_000;
    await settings.update(
      guild.id,
      {
        reminderChannelId: channels.muted.id,
        reminderRoleId: role.id,
        reminderTemplate: null,
        publicLanguage: 'auto',
        problem: 'missing-permission:SendMessages',
      },
      Date.now(),
    );
    await reminders.scheduleGuild(guild.id, { dueAt, nextUpAt: dueAt }, Date.now());
    const answer = await settingsCommandRun('show');
    expect(answer.outcome).toBe('shown:problem');
    const text = answerText(answer);
    expect(text).toContain(`On, in <#${channels.muted.id}>`);
    expect(text).toContain(`<@&${role.id}>`);
    expect(text).toContain(`<t:${Math.floor(dueAt / 1000)}:R>`);
    expect(text).toContain("Auto: the server's language (English)");
    expect(text).toContain(
      `The bot could not post the reminder in <#${channels.muted.id}>: it lacks **Send Messages**`,
    );
    // The answer names the role and the channel; its allowed_mentions let neither ping.
    const edit = answer.requests.find((r) => r.method === 'PATCH')?.body as { allowed_mentions?: unknown };
    expect(edit?.allowed_mentions).toMatchObject({ parse: [] });
  });

  it('show: a digest channel where the bot cannot attach files names Attach Files there, in both languages', async () => {
    await settings.update(
      guild.id,
      {
        reminderChannelId: channels.reminders.id,
        reminderRoleId: null,
        problem: null,
        digest: { channelId: channels.noFiles.id, period: 'week' },
      },
      Date.now(),
    );
    try {
      const answer = await settingsCommandRun('show');
      expect(answer.outcome).toBe('shown:problem');
      const text = answerText(answer);
      expect(text).toContain(`Digest in <#${channels.noFiles.id}>: grant the bot **Attach Files** there`);
      // The reminder channel lacks nothing: it is not named.
      expect(text).not.toContain(`Reminders in <#${channels.reminders.id}>`);
      const ru = answerText(await settingsCommandRun('show', [], { locale: 'ru' }));
      expect(ru).toContain(`Сводка в <#${channels.noFiles.id}>: выдайте боту там **Прикреплять файлы**`);
    } finally {
      await settings.update(guild.id, { digest: null }, Date.now());
    }
  });

  it('show: the ups seen, the last one and where from, and the ways ups reach the bot (v2: /up here)', async () => {
    const none = answerText(await settingsCommandRun('show'));
    expect(none).toContain('No up seen yet.');
    expect(none).toContain('Ups reach the bot through: /up here.');
    const member = snowflake();
    const at = Date.now() - 60_000;
    await new HistoryRepository(store).record({
      id: `hook:${guild.id}:bump:${member}:${at}`,
      guildId: guild.id,
      userId: member,
      at,
      upCount: null,
      source: 'webhook',
    });
    const text = answerText(await settingsCommandRun('show'));
    expect(text).toContain(
      `Last: <@${member}>, <t:${Math.floor(at / 1000)}:R>, through the directory's webhook.`,
    );
    const ru = answerText(await settingsCommandRun('show', [], { locale: 'ru' }));
    expect(ru).toContain(`Последний: <@${member}>, <t:${Math.floor(at / 1000)}:R>, через вебхук каталога.`);
    expect(ru).toContain('Апы доходят до бота через: /up здесь.');
  });

  it('reminders-off: channel and role cleared, the server reminder cancelled, personal ones kept', async () => {
    const dueAt = Date.now() + 3_600_000;
    await settings.update(
      guild.id,
      { reminderChannelId: channels.reminders.id, reminderRoleId: role.id },
      Date.now(),
    );
    await reminders.scheduleGuild(guild.id, { dueAt, nextUpAt: dueAt }, Date.now());
    const member = snowflake();
    await reminders.togglePersonal(guild.id, member, dueAt, Date.now());
    const answer = await settingsCommandRun('reminders-off');
    expect(answer.outcome).toBe('reminders-off');
    expect(answerText(answer)).toContain("Members' personal reminders stay");
    expect(await settings.get(guild.id)).toMatchObject({ reminderChannelId: null, reminderRoleId: null });
    expect(await reminders.getGuild(guild.id)).toBeUndefined();
    expect(await reminders.getPersonal(guild.id, member)).toMatchObject({ state: 'scheduled', dueAt });
    expect(answerText(await settingsCommandRun('show'))).toContain('Off (/settings reminders turns them on)');
  });

  it('language: saved; the next confirmation is posted in it, the answers stay in the user’s', async () => {
    const answer = await settingsCommandRun('language', [commandOption.string('language', 'ru')]);
    expect(answer.outcome).toBe('language:ru');
    expect(answerText(answer)).toContain('is now in: **Russian**');
    expect((await settings.get(guild.id))?.publicLanguage).toBe('ru');

    const before = postsIn(channels.reminders.id).length;
    const set = await settingsCommandRun('reminders', [
      commandOption.channel('channel', channels.reminders.id),
    ]);
    expect(set.outcome).toBe('reminders-on');
    expect(answerText(set)).toContain('Reminders are on');
    const [confirmation] = postsIn(channels.reminders.id).slice(before);
    expect(visibleText(confirmation?.body ?? {})).toContain('Напоминания будут приходить сюда');
    expect(confirmation?.pings).toEqual(NOBODY);

    await settingsCommandRun('language', [commandOption.string('language', 'auto')]);
    expect((await settings.get(guild.id))?.publicLanguage).toBe('auto');
  });

  it('in Russian: a Russian server gets its confirmation in Russian, a Russian admin her answer', async () => {
    const channelId = ruGuild.channels[0]?.id as string;
    const answer = await settingsCommandRun('reminders', [commandOption.channel('channel', channelId)], {
      guildId: ruGuild.id,
      locale: 'ru',
    });
    expect(answer.outcome).toBe('reminders-on');
    const text = answerText(answer);
    expect(text).toContain('Напоминания включены');
    expect(text).toContain('{role} **{server}** снова можно поднять: {command}');
    const [confirmation] = postsIn(channelId);
    expect(visibleText(confirmation?.body ?? {})).toContain('Напоминания будут приходить сюда');

    const refused = await settingsCommandRun(
      'reminders',
      [commandOption.channel('channel', channelId), commandOption.string('message', '{rol}')],
      { guildId: ruGuild.id, locale: 'ru' },
    );
    expect(answerText(refused)).toContain('подстановка, которую бот не знает: `{rol}`');
    const show = await settingsCommandRun('show', [], { guildId: ruGuild.id, locale: 'ru' });
    expect(answerText(show)).toContain('Авто: язык сервера (русский)');
  });

  it('is deployed for Manage Server only, in servers only', () => {
    expect(settingsCommand.default_member_permissions).toBe(String(MANAGE_GUILD));
    expect(settingsCommand.contexts).toEqual([0]);
  });

  it('leaks no token, pings nobody and leaves no unhandled rejection', () => {
    expect(secretLeaks(h)).toEqual([]);
    expect(h.unhandled).toEqual([]);
    expect(h.stuckStops).toEqual([]);
    const posted = h.discord.postedMessages();
    expect(posted.length).toBeGreaterThan(0);
    for (const message of posted) {
      expect(message.allowedMentions).toEqual({ parse: [] });
      expect(message.pings).toEqual(NOBODY);
    }
  });
});
