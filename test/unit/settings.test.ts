/**
 * The /settings use case with fakes of our own boundaries (the settings and reminder repositories,
 * Discord's REST client, the command mentions): what is saved, what is posted, and what the admin
 * is told, above all when the confirmation cannot be posted.
 */
import { DiscordAPIError, MessageFlags, type REST } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { channelMessages } from '../../src/discord/messages.js';
import {
  channelPermissions,
  channelPermissionsLookup,
  fetchChannelPermissions,
} from '../../src/discord/permissions.js';
import { setReminders, turnRemindersOff } from '../../src/features/reminders/settings.js';
import { setLanguage, showSettings } from '../../src/features/settings/general.js';
import type { SettingsContext, SettingsDeps } from '../../src/features/settings/settings.js';
import { translator } from '../../src/i18n/index.js';
import { createLogger } from '../../src/log/logger.js';
import type { RenderedMessage } from '../../src/render/message.js';
import { missingPermissions, problemText } from '../../src/render/problems.js';
import { StoreUnavailableError } from '../../src/store/errors.js';
import type { GuildReminder, ReminderKey } from '../../src/store/reminders.js';
import type { GuildProblem } from '../../src/store/schema.js';
import type { GuildSettings, SettingsChange } from '../../src/store/settings.js';
import { viewOf } from '../support/layout-view.js';

const NOW = 1_700_000_000_000;
const GUILD = '722424773233213460';
const CHANNEL = '722424773233213461';
const ROLE = '722424773233213462';
const BOT = '722424773233213463';
const BOT_ROLE = '722424773233213464';
const UP_ID = '722424773233213465';

const VIEW = 1n << 10n;
const SEND = 1n << 11n;
const EMBED = 1n << 14n;
const MENTION_EVERYONE = 1n << 17n;
const ADMIN = 1n << 3n;

const en = translator('en-US');
const ru = translator('ru');

class MemorySettings {
  readonly rows = new Map<string, GuildSettings>();

  async get(guildId: string): Promise<GuildSettings | undefined> {
    return this.rows.get(guildId);
  }

  async update(guildId: string, change: SettingsChange, now: number): Promise<GuildSettings> {
    const old = this.rows.get(guildId) ?? {
      guildId,
      reminderChannelId: null,
      reminderRoleId: null,
      reminderTemplate: null,
      publicLanguage: 'auto' as const,
      problem: null,
      updatedAt: now,
      timeZone: null,
      thanksTemplate: null,
      reminderEarlyMs: null,
      reminderRepeat: null,
      digest: null,
      liveChannelId: null,
    };
    const next: GuildSettings = {
      ...old,
      ...(change.reminderChannelId === undefined ? {} : { reminderChannelId: change.reminderChannelId }),
      ...(change.reminderRoleId === undefined ? {} : { reminderRoleId: change.reminderRoleId }),
      ...(change.reminderTemplate === undefined ? {} : { reminderTemplate: change.reminderTemplate }),
      ...(change.publicLanguage === undefined ? {} : { publicLanguage: change.publicLanguage }),
      ...(change.timeZone === undefined ? {} : { timeZone: change.timeZone }),
      ...(change.thanksTemplate === undefined ? {} : { thanksTemplate: change.thanksTemplate }),
      ...(change.problem === undefined
        ? {}
        : { problem: change.problem === null ? null : { reason: change.problem, at: now } }),
      updatedAt: now,
    };
    this.rows.set(guildId, next);
    return next;
  }
}

function apiError(status: number, code: number, method = 'POST'): DiscordAPIError {
  return new DiscordAPIError({ code, message: `error ${code}` }, code, status, method, '/x', {});
}

interface Requested {
  method: 'GET' | 'POST' | 'DELETE';
  route: string;
  body?: unknown;
}

/** A REST client whose routes answer what a test gives (a value, or an error to throw). */
function fakeRest(routes: Record<string, unknown>) {
  const requests: Requested[] = [];
  const answer = async (method: Requested['method'], route: string, body?: unknown) => {
    requests.push({ method, route, body });
    const key = `${method} ${route}`;
    if (!(key in routes)) throw apiError(404, 0, method);
    const value = routes[key];
    if (value instanceof Error) throw value;
    return value;
  };
  const rest = {
    get: (route: string) => answer('GET', route),
    post: (route: string, options: { body?: unknown }) => answer('POST', route, options.body),
    delete: (route: string) => answer('DELETE', route),
  } as unknown as REST;
  return { rest, requests };
}

/** The guild's parts for the permission look-up: @everyone, the bot's role, the bot, the channel. */
function guildRoutes(options: {
  bot?: bigint;
  everyone?: bigint;
  overwrites?: unknown[];
  channelHidden?: boolean;
}) {
  const channel = { id: CHANNEL, type: 0, guild_id: GUILD, permission_overwrites: options.overwrites ?? [] };
  return {
    [`GET /channels/${CHANNEL}`]: options.channelHidden ? apiError(403, 50001, 'GET') : channel,
    [`GET /guilds/${GUILD}/channels`]: [channel],
    [`GET /guilds/${GUILD}/roles`]: [
      { id: GUILD, permissions: String(options.everyone ?? 0n) },
      { id: BOT_ROLE, permissions: String(options.bot ?? VIEW | SEND | EMBED) },
    ],
    [`GET /guilds/${GUILD}/members/${BOT}`]: { roles: [BOT_ROLE], user: { id: BOT } },
  };
}

function setup(routes: Record<string, unknown> = {}) {
  const settings = new MemorySettings();
  const cancelled: ReminderKey[] = [];
  let guildReminder: GuildReminder | undefined;
  const { rest, requests } = fakeRest({
    [`POST /channels/${CHANNEL}/messages`]: { id: '900000000000000001' },
    ...routes,
  });
  const chosen: Array<[string, string | null]> = [];
  const deps: SettingsDeps = {
    settings: settings as unknown as SettingsDeps['settings'],
    reminderRoleChosen: (guildId, roleId) => void chosen.push([guildId, roleId]),
    reminders: {
      getGuild: async () => guildReminder,
      retime: async () => undefined,
      cancel: async (key: ReminderKey) => {
        cancelled.push(key);
      },
    } as unknown as SettingsDeps['reminders'],
    messages: channelMessages(rest),
    permissions: channelPermissionsLookup(rest),
    commands: { mention: async (name: string) => `</${name}:${UP_ID}>` } as SettingsDeps['commands'],
    now: () => NOW,
    logger: createLogger({ level: 'silent' }),
  };
  return {
    deps,
    settings,
    chosen,
    cancelled,
    requests,
    setReminder(reminder: Partial<GuildReminder>) {
      guildReminder = {
        key: { kind: 'guild', guildId: GUILD },
        dueAt: NOW + 3_600_000,
        cooldownMs: null,
        nextUpAt: NOW + 3_600_000,
        state: 'scheduled',
        claimedBy: null,
        claimExpiresAt: null,
        nonce: null,
        sentAt: null,
        failure: null,
        updatedAt: NOW,
        traceParent: null,
        ...reminder,
      } as GuildReminder;
    },
    posts: () => requests.filter((r) => r.method === 'POST'),
  };
}

function context(overrides: Partial<SettingsContext> = {}): SettingsContext {
  return { guildId: GUILD, guildLocale: 'en-US', botId: BOT, t: en, ...overrides };
}

/** Every text of the answer, embed or layout. */
function text(message: RenderedMessage): string {
  return viewOf(message).texts.join('\n');
}

const request = { channelId: CHANNEL, resolvedChannel: { type: 0 }, roleId: null, message: null };

describe('/settings reminders', () => {
  it('posts a confirmation that pings no one, then saves channel, role and text', async () => {
    const s = setup();
    await s.settings.update(GUILD, { problem: 'channel-deleted' }, NOW - 1);
    const answer = await setReminders(s.deps, context(), {
      ...request,
      roleId: ROLE,
      roleMentionable: true,
      message: '  {role} time to /up {server}: {command} at {time}  ',
    });
    expect(answer.outcome).toBe('reminders-on');
    // The role whose deletion the gateway watch looks out for from now on.
    expect(s.chosen).toEqual([[GUILD, ROLE]]);
    const [post] = s.posts();
    expect(post?.route).toBe(`/channels/${CHANNEL}/messages`);
    const body = post?.body as { allowed_mentions: unknown; content?: string; flags?: number };
    expect(body.allowed_mentions).toEqual({ parse: [] });
    expect(body.content).toBeUndefined();
    // A Components V2 notice: the flag on the post, the text in the layout.
    expect(body.flags).toBe(MessageFlags.IsComponentsV2);
    expect(viewOf(body).description).toContain(`<@&${ROLE}>`);
    expect(viewOf(body).description).toContain(`</up:${UP_ID}>`);
    expect(s.settings.rows.get(GUILD)).toMatchObject({
      reminderChannelId: CHANNEL,
      reminderRoleId: ROLE,
      reminderTemplate: '{role} time to /up {server}: {command} at {time}',
      problem: null,
    });
    const shown = text(answer.message);
    expect(shown).toContain(`<#${CHANNEL}>`);
    expect(shown).toContain(`<@&${ROLE}>`);
    expect(shown).toContain('{role} time to /up {server}: {command} at {time}');
  });

  it.each([
    ['a voice channel', { type: 2 }],
    ['a category', { type: 4 }],
    ['a forum', { type: 15 }],
    ['a text channel of another server', { type: 0, guildId: '722424773233213999' }],
    ['a channel Discord did not resolve', undefined],
  ] as const)('refuses %s before posting anything: nothing saved', async (_what, resolvedChannel) => {
    const s = setup();
    const answer = await setReminders(s.deps, context(), { ...request, resolvedChannel });
    expect(answer.outcome).toBe('refused:channel-type');
    expect(text(answer.message)).toContain(en('settings.post.notTextChannel', { channel: `<#${CHANNEL}>` }));
    expect(s.posts()).toEqual([]);
    expect(s.settings.rows.get(GUILD)).toBeUndefined();
  });

  it('takes an announcement channel of this server', async () => {
    const s = setup();
    const answer = await setReminders(s.deps, context(), {
      ...request,
      resolvedChannel: { type: 5, guildId: GUILD },
    });
    expect(answer.outcome).toBe('reminders-on');
    expect(s.settings.rows.get(GUILD)).toMatchObject({ reminderChannelId: CHANNEL });
  });

  it('without a role or text: no mention, and the default text is shown', async () => {
    const s = setup();
    const answer = await setReminders(s.deps, context(), request);
    expect(s.settings.rows.get(GUILD)).toMatchObject({ reminderRoleId: null, reminderTemplate: null });
    expect(JSON.stringify(s.posts()[0]?.body)).not.toContain('<@');
    expect(text(answer.message)).toContain(en('reminders.default'));
    expect(text(answer.message)).toContain(en('settings.value.noRole'));
  });

  it('posts the confirmation in the server’s public language, answers in the user’s', async () => {
    const s = setup();
    await setReminders(s.deps, context({ guildLocale: 'ru' }), request);
    expect(JSON.stringify(s.posts()[0]?.body)).toContain(ru('settings.confirmation.title'));
    await s.settings.update(GUILD, { publicLanguage: 'en-US' }, NOW);
    const answer = await setReminders(s.deps, context({ guildLocale: 'ru', t: ru }), request);
    expect(JSON.stringify(s.posts()[1]?.body)).toContain(en('settings.confirmation.title'));
    expect(viewOf(answer.message).title).toBe(ru('settings.title.remindersOn'));
  });

  it.each([
    ['an unknown placeholder', '{role} go {serverr}', '`{serverr}`'],
    ['more than 1,000 characters', 'x'.repeat(1_001), '1,001'],
    ['only spaces', '   ', '`message`'],
  ])('refuses %s: nothing posted or saved, the placeholders and default shown', async (_, message, why) => {
    const s = setup();
    const answer = await setReminders(s.deps, context(), { ...request, message });
    expect(answer.outcome).toMatch(/^refused:template-/);
    expect(s.requests).toEqual([]);
    expect(s.settings.rows.size).toBe(0);
    const shown = text(answer.message);
    expect(shown).toContain(why);
    for (const p of ['{role}', '{command}', '{server}', '{time}']) expect(shown).toContain(p);
    expect(shown).toContain(en('reminders.default'));
  });

  it('shows a hostile text as typed, in one code block it cannot end, and posts none of it', async () => {
    const s = setup();
    const hostile = '```\n@everyone <@&1> {role}\u202e ``` **x**';
    const answer = await setReminders(s.deps, context(), { ...request, message: hostile });
    const description = text(answer.message);
    expect(description.match(/```/g)).toHaveLength(2);
    expect(description).toContain('ˋˋˋ\n@everyone <@&1> {role} ˋˋˋ **x**');
    expect(JSON.stringify(s.posts()[0]?.body)).not.toContain('@everyone');
  });

  it('counts the limit in characters, as Discord does: 1,000 emoji pass', async () => {
    const s = setup();
    const answer = await setReminders(s.deps, context(), { ...request, message: '🔔'.repeat(1_000) });
    expect(answer.outcome).toBe('reminders-on');
  });

  it('refuses @everyone as the role', async () => {
    const s = setup();
    const answer = await setReminders(s.deps, context(), { ...request, roleId: GUILD });
    expect(answer.outcome).toBe('refused:everyone');
    expect(s.requests).toEqual([]);
  });

  it('50013: saves nothing and names only the permission the bot lacks there', async () => {
    const s = setup({
      [`POST /channels/${CHANNEL}/messages`]: apiError(403, 50013),
      ...guildRoutes({ overwrites: [{ id: BOT_ROLE, type: 0, allow: '0', deny: String(SEND) }] }),
    });
    s.settings.rows.clear();
    const answer = await setReminders(s.deps, context(), request);
    expect(answer.outcome).toBe('refused:missing-permission');
    expect(s.settings.rows.size).toBe(0);
    const shown = text(answer.message);
    expect(shown).toContain('**Send Messages**');
    expect(shown).not.toContain('View Channel');
    expect(shown).toContain(`<#${CHANNEL}>`);
    expect(shown).toContain('Edit Channel › Permissions');
  });

  it('50001: the channel hidden from the bot is found in the guild’s list; View Channel named', async () => {
    const s = setup({
      [`POST /channels/${CHANNEL}/messages`]: apiError(403, 50001),
      ...guildRoutes({
        channelHidden: true,
        overwrites: [{ id: GUILD, type: 0, allow: '0', deny: String(VIEW) }],
      }),
    });
    const answer = await setReminders(s.deps, context({ t: ru }), request);
    expect(answer.outcome).toBe('refused:missing-access');
    expect(s.settings.rows.size).toBe(0);
    expect(s.requests.map((r) => `${r.method} ${r.route}`)).toContain(`GET /guilds/${GUILD}/channels`);
    const shown = text(answer.message);
    expect(shown).toContain('«Просматривать канал»');
    expect(shown).not.toContain('«Отправлять сообщения»');
  });

  it('a member overwrite for the bot outweighs its roles', async () => {
    const s = setup({
      [`POST /channels/${CHANNEL}/messages`]: apiError(403, 50013),
      ...guildRoutes({
        overwrites: [
          { id: BOT_ROLE, type: 0, allow: String(SEND), deny: '0' },
          { id: BOT, type: 1, allow: '0', deny: String(SEND) },
        ],
      }),
    });
    const shown = text((await setReminders(s.deps, context(), request)).message);
    expect(shown).toContain('**Send Messages**');
    expect(shown).not.toContain('Embed Links');
  });

  it('names both when the bot’s permissions cannot be read', async () => {
    const s = setup({ [`POST /channels/${CHANNEL}/messages`]: apiError(403, 50013) });
    const shown = text((await setReminders(s.deps, context(), request)).message);
    // Components V2 posts need no Embed Links: it is not asked for.
    expect(shown).toContain('**View Channel** and **Send Messages**');
    expect(shown).not.toContain('Embed Links');
    expect(s.settings.rows.size).toBe(0);
  });

  it('a deleted channel (10003) and a refusal of another kind save nothing', async () => {
    const gone = setup({ [`POST /channels/${CHANNEL}/messages`]: apiError(404, 10003) });
    const answer = await setReminders(gone.deps, context(), request);
    expect(answer.outcome).toBe('refused:channel-deleted');
    expect(text(answer.message)).toContain(en('settings.post.channelDeleted'));
    const odd = setup({ [`POST /channels/${CHANNEL}/messages`]: apiError(400, 50083) });
    const refused = await setReminders(odd.deps, context(), request);
    expect(refused.outcome).toBe('refused:rejected');
    expect(text(refused.message)).toContain('50083');
    expect(gone.settings.rows.size + odd.settings.rows.size).toBe(0);
  });

  it('a transient failure: try again, nothing saved', async () => {
    const s = setup({ [`POST /channels/${CHANNEL}/messages`]: new Error('socket hang up') });
    const answer = await setReminders(s.deps, context(), request);
    expect(answer.outcome).toBe('failed:transient');
    expect(text(answer.message)).toContain('try again');
    expect(s.settings.rows.size).toBe(0);
  });

  it('the store lost after the confirmation was posted: the confirmation is deleted and the error goes on', async () => {
    const s = setup({ [`DELETE /channels/${CHANNEL}/messages/900000000000000001`]: undefined });
    const lost = new StoreUnavailableError('the store is not answering');
    s.settings.update = async () => {
      throw lost;
    };
    await expect(setReminders(s.deps, context(), request)).rejects.toBe(lost);
    expect(s.posts()).toHaveLength(1);
    expect(s.requests.filter((r) => r.method === 'DELETE').map((r) => r.route)).toEqual([
      `/channels/${CHANNEL}/messages/900000000000000001`,
    ]);
    expect(s.settings.rows.size).toBe(0);
  });

  it('warns when the role will not ping: not mentionable and no Mention Everyone', async () => {
    const s = setup(guildRoutes({}));
    const answer = await setReminders(s.deps, context(), {
      ...request,
      roleId: ROLE,
      roleMentionable: false,
    });
    expect(answer.outcome).toBe('reminders-on');
    expect(text(answer.message)).toContain('Allow anyone to @mention this role');
    const allowed = setup(guildRoutes({ bot: VIEW | SEND | EMBED | MENTION_EVERYONE }));
    const fine = await setReminders(allowed.deps, context(), {
      ...request,
      roleId: ROLE,
      roleMentionable: false,
    });
    expect(text(fine.message)).not.toContain('Allow anyone to @mention this role');
    const mentionable = setup();
    const plain = await setReminders(mentionable.deps, context(), {
      ...request,
      roleId: ROLE,
      roleMentionable: true,
    });
    expect(text(plain.message)).not.toContain('Allow anyone to @mention this role');
    expect(mentionable.requests.filter((r) => r.method === 'GET')).toEqual([]);
  });
});

describe('/settings reminders-off, language, show', () => {
  it('reminders-off clears channel, role and text, and cancels the server’s reminder only', async () => {
    const s = setup();
    await setReminders(s.deps, context(), { ...request, roleId: ROLE, message: '{role}' });
    const answer = await turnRemindersOff(s.deps, context());
    expect(s.chosen).toEqual([
      [GUILD, ROLE],
      [GUILD, null],
    ]);
    expect(answer.outcome).toBe('reminders-off');
    expect(s.settings.rows.get(GUILD)).toMatchObject({
      reminderChannelId: null,
      reminderRoleId: null,
      reminderTemplate: null,
    });
    expect(s.cancelled).toEqual([{ kind: 'guild', guildId: GUILD }]);
    expect(text(answer.message)).toContain(en('settings.value.off'));
  });

  it('language: saved, and said in the user’s language', async () => {
    const s = setup();
    const answer = await setLanguage(s.deps, context({ t: ru }), 'en-US');
    expect(answer.outcome).toBe('language:en-US');
    expect(s.settings.rows.get(GUILD)?.publicLanguage).toBe('en-US');
    expect(text(answer.message)).toContain('**английский**');
    const auto = await setLanguage(s.deps, context({ guildLocale: 'ru' }), 'auto');
    expect(text(auto.message)).toContain("Auto: the server's language (Russian)");
  });

  it('show: defaults for a server never set up', async () => {
    const s = setup();
    const answer = await showSettings(s.deps, context());
    expect(answer.outcome).toBe('shown');
    expect(text(answer.message)).toContain(en('settings.value.off'));
    expect(text(answer.message)).toContain("Auto: the server's language (English)");
  });

  it('show: the next reminder as <t:…:R>, and the problem with how to fix it', async () => {
    const s = setup();
    await setReminders(s.deps, context(), { ...request, roleId: ROLE });
    await s.settings.update(GUILD, { problem: 'missing-permission:SendMessages' }, NOW - 60_000);
    s.setReminder({ dueAt: NOW + 3_600_000 });
    const answer = await showSettings(s.deps, context());
    expect(answer.outcome).toBe('shown:problem');
    const shown = text(answer.message);
    expect(shown).toContain(`<t:${(NOW + 3_600_000) / 1000}:R>`);
    expect(shown).toContain('it lacks **Send Messages** there');
    expect(shown).toContain(`<t:${(NOW - 60_000) / 1000}:R>`);
    s.setReminder({ state: 'sent' });
    expect(text((await showSettings(s.deps, context())).message)).toContain(en('settings.value.nextNone'));
  });
});

describe('problemText', () => {
  const where = { channelId: CHANNEL, roleId: ROLE };

  it.each<[GuildProblem, string]>([
    ['channel-deleted', `The reminder channel (<#${CHANNEL}>) was deleted`],
    ['role-deleted', `(<@&${ROLE}>) was deleted`],
    ['missing-permission:SendMessages', '**Send Messages**'],
    ['missing-permission:ViewChannel,EmbedLinks', '**View Channel** and **Embed Links**'],
    ['missing-permission:50001', '**View Channel**'],
    ['missing-permission:AttachFiles', '**Attach Files**'],
  ])('%s', (problem, expected) => {
    expect(problemText(problem, en, where)).toContain(expected);
    expect(problemText(problem, ru, where)).not.toBe(problemText(problem, en, where));
  });

  it('an unreadable permission still says where and what to check', () => {
    const textOf = problemText('missing-permission:???', en, { channelId: null, roleId: null });
    expect(textOf).toContain('the reminder channel');
    expect(textOf).toContain('View Channel and Send Messages');
    expect(missingPermissions('missing-permission:__proto__')).toEqual([]);
  });

  it('"Notify me" that could not give the role says what to grant and where, in both languages', () => {
    const role = '123456789012345678';
    expect(problemText('cannot-give-role', en, { channelId: null, roleId: role })).toBe(
      `A member pressed "Notify me", but the bot could not give them <@&${role}>: grant it Manage Roles and move its role above <@&${role}> (Server Settings › Roles).`,
    );
    expect(problemText('cannot-give-role', ru, { channelId: null, roleId: role })).toContain(
      '«Управлять ролями»',
    );
  });
});

describe('channel permissions', () => {
  const roles = [
    { id: GUILD, permissions: String(VIEW | SEND) },
    { id: BOT_ROLE, permissions: String(EMBED) },
  ];
  const base = { guildId: GUILD, roles, memberRoles: [BOT_ROLE], userId: BOT };

  it('applies @everyone, then the roles together, then the member', () => {
    expect(channelPermissions({ ...base, overwrites: [] })).toBe(VIEW | SEND | EMBED);
    const everyoneDenied = [{ id: GUILD, type: 0 as const, allow: '0', deny: String(VIEW) }];
    expect(channelPermissions({ ...base, overwrites: everyoneDenied })).toBe(SEND | EMBED);
    const roleAllows = [
      ...everyoneDenied,
      { id: BOT_ROLE, type: 0 as const, allow: String(VIEW), deny: '0' },
    ];
    expect(channelPermissions({ ...base, overwrites: roleAllows })).toBe(VIEW | SEND | EMBED);
    const memberDenies = [...roleAllows, { id: BOT, type: 1 as const, allow: '0', deny: String(VIEW) }];
    expect(channelPermissions({ ...base, overwrites: memberDenies })).toBe(SEND | EMBED);
  });

  it('Administrator overrides every overwrite', () => {
    const admin = [{ id: BOT_ROLE, permissions: String(ADMIN) }];
    const denied = [{ id: BOT, type: 1 as const, allow: '0', deny: String(VIEW | SEND) }];
    const bits = channelPermissions({ ...base, roles: admin, overwrites: denied });
    expect(bits & (VIEW | SEND)).toBe(VIEW | SEND);
  });

  it('null when a part cannot be had, or an id is not a snowflake', async () => {
    const { rest } = fakeRest({});
    expect(
      await fetchChannelPermissions(rest, { guildId: GUILD, channelId: CHANNEL, userId: BOT }, 1_000),
    ).toBeNull();
    const { rest: full, requests } = fakeRest(guildRoutes({}));
    expect(
      await fetchChannelPermissions(full, { guildId: GUILD, channelId: '../guilds', userId: BOT }, 1_000),
    ).toBeNull();
    expect(requests).toEqual([]);
  });

  it('gives up after the timeout when Discord does not answer', async () => {
    const rest = { get: () => new Promise(() => {}) } as unknown as REST;
    const started = Date.now();
    expect(
      await fetchChannelPermissions(rest, { guildId: GUILD, channelId: CHANNEL, userId: BOT }, 50),
    ).toBeNull();
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
