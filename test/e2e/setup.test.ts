/**
 * The first hour, end to end through discord.js on SQLite and on PostgreSQL: /setup opens one form
 * of Label components (checked against Discord's API description by the stand-in), its submit sets
 * the reminder channel and role, the public language, the time zone and the digest through the
 * same checks /settings makes, and says plainly what it could not do; the message posted on
 * joining a server, once, pinging no one, whose button opens the same form; /help in both
 * languages.
 */
import { type APIModalInteractionResponseCallbackData, MessageFlags, PermissionFlagsBits } from 'discord.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Engine, openStore, SettingsRepository, type Store } from '../../src/store/index.js';
import { WelcomeRepository } from '../../src/store/welcomes.js';
import {
  botRoleOf,
  CallbackType,
  type GuildFixture,
  makeGuild,
  makeRole,
  makeTextChannel,
  snowflake,
} from '../discord/index.js';
import { ENGINES, freshPlace, type Place } from '../store/places.js';
import {
  type Answer,
  type Harness,
  isEphemeral,
  privateMessage,
  startHarness,
  visibleText,
} from './harness.js';

const MANAGE_GUILD = PermissionFlagsBits.ManageGuild;
const NOBODY = { everyone: false, users: [], roles: [] };

function fixtures() {
  const channels = {
    general: makeTextChannel({ name: 'general', position: 0 }),
    ups: makeTextChannel({ name: 'ups', position: 1 }),
    noFiles: makeTextChannel({ name: 'no-files', position: 2 }),
  };
  const role = makeRole({ name: 'Bumpers', mentionable: true });
  const guild = makeGuild({ name: 'Setup Server', channels: Object.values(channels), roles: [role] });
  const ruGuild = makeGuild({ name: 'Русский сервер', preferredLocale: 'ru', channels: ['общий', 'апы'] });
  // Invited an hour ago, while the bot was not running: welcomed when it connects.
  const invitedMeanwhile = makeGuild({
    name: 'Invited meanwhile',
    channels: ['welcome-here'],
    joinedAt: new Date(Date.now() - 3_600_000).toISOString(),
  });
  return { guild, ruGuild, invitedMeanwhile, channels, role };
}

/** The answer's text, private. */
function answerText(answer: Answer): string {
  const message = privateMessage(answer);
  expect(isEphemeral(message)).toBe(true);
  return visibleText(message as unknown as Record<string, unknown>);
}

describe.each(ENGINES)('/setup, the join message and /help on %s', (engine: Engine) => {
  const { guild, ruGuild, invitedMeanwhile, channels, role } = fixtures();
  let h: Harness;
  let place: Place;
  let store: Store;
  let settings: SettingsRepository;

  beforeAll(async () => {
    place = await freshPlace(engine);
    store = await openStore(place.options);
    settings = new SettingsRepository(store);
    h = await startHarness({ guilds: [guild, ruGuild, invitedMeanwhile], env: place.env });
    const botRole = botRoleOf(h.discord.guilds.get(guild.id) as GuildFixture, h.discord.botUser.id);
    if (!botRole) throw new Error('the stand-in gave the bot no role');
    h.discord.setChannelOverwrites(channels.noFiles.id, [
      { id: botRole.id, type: 'role', deny: PermissionFlagsBits.AttachFiles },
    ]);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await store?.close();
    await place?.remove();
  });
  beforeEach(() => h.reset());

  /** /setup typed in `channelId`: the form the bot showed (its first response, a modal). */
  async function openForm(
    opts: { guildId?: string; channelId?: string; locale?: string } = {},
  ): Promise<APIModalInteractionResponseCallbackData> {
    const handle = h.discord.sendCommand({
      guildId: opts.guildId ?? guild.id,
      channelId: opts.channelId ?? channels.general.id,
      name: 'setup',
      permissions: MANAGE_GUILD,
      ...(opts.locale ? { locale: opts.locale } : {}),
    });
    const first = await handle.firstResponse();
    expect(first.type).toBe(CallbackType.Modal);
    return first.data as APIModalInteractionResponseCallbackData;
  }

  function submit(
    modal: APIModalInteractionResponseCallbackData,
    answers: Record<string, string | string[]>,
    opts: { guildId?: string; locale?: string; permissions?: bigint } = {},
  ): Promise<Answer> {
    return h.submit({
      guildId: opts.guildId ?? guild.id,
      channelId: channels.general.id,
      permissions: opts.permissions ?? MANAGE_GUILD,
      modal,
      answers,
      ...(opts.locale ? { locale: opts.locale } : {}),
    });
  }

  it('opens one form of five Labels, filled in with where it was typed, that Discord accepts', async () => {
    await settings.update(
      guild.id,
      { reminderChannelId: null, reminderRoleId: null, digest: null },
      Date.now(),
    );
    const modal = await openForm();
    expect(modal.custom_id).toBe('setup');
    expect(modal.title).toBe('Set up the bot');
    expect(modal.components.map((c) => c.type)).toEqual([18, 18, 18, 18, 18]);
    const fields = modal.components.map((c) => ('component' in c ? c.component : undefined));
    expect(fields.map((f) => f?.custom_id)).toEqual([
      'setup:channel',
      'setup:role',
      'setup:language',
      'setup:timezone',
      'setup:digest',
    ]);
    expect(fields[0]).toMatchObject({
      type: 8,
      default_values: [{ id: channels.general.id, type: 'channel' }],
    });
    expect(h.discord.specViolations()).toEqual([]);
  });

  it('sets reminders, role, language, time zone and a weekly digest in one go, and says so', async () => {
    const modal = await openForm();
    const before = h.discord.channelMessages(channels.ups.id).length;
    const answer = await submit(modal, {
      'setup:channel': [channels.ups.id],
      'setup:role': [role.id],
      'setup:language': ['ru'],
      'setup:timezone': 'Europe/Moscow',
      'setup:digest': ['week'],
    });
    expect(answer.outcome).toBe('setup:reminders-on,digest:week');
    const text = answerText(answer);
    // All set, but "Notify me" could not give the role: the bot is told what to ask for, and where.
    expect(text).toContain('Set up, with something left to do');
    expect(text).toContain('**Manage Roles** (Server Settings › Roles');
    expect(text).toContain(`Reminders: in <#${channels.ups.id}>, pinging <@&${role.id}>`);
    expect(text).toContain('Time zone: **Europe/Moscow**');
    expect(text).toContain(`Digest: every week, in <#${channels.ups.id}>`);
    expect(await settings.get(guild.id)).toMatchObject({
      reminderChannelId: channels.ups.id,
      reminderRoleId: role.id,
      publicLanguage: 'ru',
      timeZone: 'Europe/Moscow',
      digest: { channelId: channels.ups.id, period: 'week' },
    });
    // The channel proven as /settings proves it: a confirmation, in the public language, pinging no one.
    const posted = h.discord.channelMessages(channels.ups.id).slice(before);
    expect(posted).toHaveLength(1);
    expect(posted[0]?.pings).toEqual(NOBODY);
    expect(posted[0]?.allowedMentions).toEqual({ parse: [] });
    expect(posted[0]?.text).toMatch(/[а-я]/);
    expect(h.discord.specViolations()).toEqual([]);

    // Manage Roles granted: nothing left to do.
    const botRole = botRoleOf(h.discord.guilds.get(guild.id) as GuildFixture, h.discord.botUser.id);
    const granted = BigInt(botRole?.permissions ?? 0) | PermissionFlagsBits.ManageRoles;
    h.discord.setRolePermissions(guild.id, botRole?.id ?? '', granted);
    const done = await submit(await openForm(), {});
    expect(answerText(done)).toContain('The bot is set up');
    expect(answerText(done)).not.toContain('Manage Roles');

    // Opened again, the form holds what is set now.
    const again = await openForm();
    const fields = again.components.map((c) => ('component' in c ? c.component : undefined));
    expect(fields[0]).toMatchObject({ default_values: [{ id: channels.ups.id }] });
    expect(fields[1]).toMatchObject({ default_values: [{ id: role.id }] });
    expect(fields[3]).toMatchObject({ value: 'Europe/Moscow' });
    const picked = (i: number) =>
      (fields[i] as { options: Array<{ value: string; default?: boolean }> }).options.find((o) => o.default)
        ?.value;
    expect(picked(2)).toBe('ru');
    expect(picked(4)).toBe('week');
  });

  it('in Russian, says what it could not do: a digest where files cannot be attached, an unknown zone', async () => {
    await settings.update(guild.id, { digest: null, timeZone: null }, Date.now());
    const modal = await openForm({ locale: 'ru' });
    expect(modal.title).toBe('Настройка бота');
    const answer = await submit(
      modal,
      {
        'setup:channel': [channels.noFiles.id],
        'setup:role': [],
        'setup:language': ['auto'],
        'setup:timezone': 'Mars/Olympus',
        'setup:digest': ['month'],
      },
      { locale: 'ru' },
    );
    expect(answer.outcome).toBe('setup:timezone:unknown,reminders-on,refused:missing-permission');
    const text = answerText(answer);
    expect(text).toContain('Настроено, но не всё');
    expect(text).toContain(`Напоминания: в <#${channels.noFiles.id}>`);
    expect(text).toContain('Сводка: не настроена');
    expect(text).toContain('Mars/Olympus');
    const saved = await settings.get(guild.id);
    expect(saved).toMatchObject({
      reminderChannelId: channels.noFiles.id,
      reminderRoleId: null,
      digest: null,
    });
    expect(saved?.timeZone).toBeNull();
  });

  it('refuses a submit from a member who cannot manage the server, and one the form did not ask for', async () => {
    await settings.update(guild.id, { reminderChannelId: channels.general.id }, Date.now());
    const modal = await openForm();
    const refused = await submit(
      modal,
      { 'setup:channel': [channels.ups.id] },
      { permissions: PermissionFlagsBits.SendMessages },
    );
    expect(refused.outcome).toBe('refused:not-manager');
    expect(answerText(refused)).toContain('Manage Server');
    // A form of another shape under the same custom_id (an old client, a forged submit).
    const forged: APIModalInteractionResponseCallbackData = {
      custom_id: 'setup',
      title: 'x',
      components: [
        {
          type: 18,
          label: 'x',
          component: { type: 4, custom_id: 'setup:channel', style: 1, required: true },
        },
      ],
    };
    const invalid = await submit(forged, { 'setup:channel': 'not a channel' });
    expect(invalid.outcome).toBe('refused:invalid-form');
    expect((await settings.get(guild.id))?.reminderChannelId).toBe(channels.general.id);
  });

  it('posts one welcome on joining, in the server language, pinging no one; its button opens the form', async () => {
    const systemChannel = makeTextChannel({ name: 'новости', position: 0 });
    const other = makeTextChannel({ name: 'чат', position: 1 });
    const joined = makeGuild({
      name: 'Новый сервер',
      preferredLocale: 'ru',
      channels: [systemChannel, other],
    });
    h.discord.addGuild(joined);
    const welcome = await h.discord.waitForMessage(systemChannel.id);
    expect(welcome.pings).toEqual(NOBODY);
    expect(welcome.allowedMentions).toEqual({ parse: [] });
    expect(welcome.body.flags).toBe(MessageFlags.IsComponentsV2);
    expect(welcome.text).toContain('Спасибо, что добавили меня');
    expect(JSON.stringify(welcome.body)).toContain('"custom_id":"setup:open"');
    expect(h.discord.specViolations()).toEqual([]);

    // Removed and invited back: not greeted again.
    await h.waitForLog((e) => e.msg === 'welcome posted' && e.guildId === joined.id);
    h.discord.removeGuild(joined.id);
    h.discord.addGuild(joined);
    await h.waitForLog((e) => e.msg === 'the server was welcomed before' && e.guildId === joined.id);
    expect(h.discord.postedMessages().filter((m) => m.guildId === joined.id)).toHaveLength(1);
    expect(await new WelcomeRepository(store).get(joined.id)).toMatchObject({
      channelId: systemChannel.id,
      messageId: welcome.id,
    });

    // The button: a member who cannot manage the server is told so; one who can gets the form.
    const denied = await h.click({
      guildId: joined.id,
      customId: 'setup:open',
      messageId: welcome.id,
      permissions: PermissionFlagsBits.SendMessages,
      locale: 'ru',
    });
    expect(denied.outcome).toBe('refused:not-manager');
    expect(answerText(denied)).toContain('Управление сервером');
    const opened = h.discord.sendButton({
      guildId: joined.id,
      customId: 'setup:open',
      messageId: welcome.id,
      permissions: MANAGE_GUILD,
    });
    expect((await opened.firstResponse()).type).toBe(CallbackType.Modal);
  });

  it('welcomes on start a server invited while the bot was not running, and none joined long before', async () => {
    const channelId = invitedMeanwhile.channels[0]?.id ?? '';
    const welcome = await h.discord.waitForMessage(channelId);
    expect(welcome.text).toContain('Thanks for adding me');
    for (const older of [guild, ruGuild]) {
      expect(await new WelcomeRepository(store).get(older.id)).toBeUndefined();
    }
  });

  it('skips a system channel where the bot may not post, for the next one', async () => {
    const guildId = snowflake();
    // @everyone may not send in the system channel, and the bot's role has no overwrite there.
    const closed = makeTextChannel({
      name: 'announcements',
      position: 0,
      permissionOverwrites: [{ id: guildId, type: 'role', deny: PermissionFlagsBits.SendMessages }],
    });
    const open = makeTextChannel({ name: 'chat', position: 1 });
    const joined = makeGuild({ id: guildId, name: 'Closed system channel', channels: [closed, open] });
    h.discord.addGuild(joined);
    const welcome = await h.discord.waitForMessage(open.id);
    expect(h.discord.channelMessages(closed.id)).toEqual([]);
    expect(welcome.text).toContain('Thanks for adding me');
  });

  it.each([
    ['en-US', 'Commands', 'Manage Server'],
    ['ru', 'Команды', 'Управление сервером'],
  ])('/help in %s lists every command with who may use it and where', async (locale, title, manage) => {
    const answer = await h.run({ guildId: ruGuild.id, name: 'help', locale });
    expect(answer.outcome).toBe('shown');
    const text = answerText(answer);
    expect(text).toContain(title);
    expect(text).toContain(manage);
    for (const name of ['up', 'bot', 'server', 'profile', 'settings', 'leaderboard', 'setup', 'help']) {
      expect(text).toMatch(new RegExp(`</${name}:\\d+>|/${name}\\b`));
    }
  });
});
