/**
 * Every command's success path through the real discord.js client, the Discord stand-in and the
 * directory emulator; the exact POST /server of an up; localization; mention safety; the
 * unknown command.
 */
import { type APIEmbed, MessageFlags } from 'discord.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeGuild, makeTextChannel, makeUser } from '../discord/index.js';
import {
  DEFAULT_COOLDOWN_MS,
  type Emulator,
  IDS,
  type RecordedRequest,
  TOKENS,
  upSuccessMessage,
} from '../emulator/index.js';
import { viewOf } from '../support/layout-view.js';
import { expectPrivate, expectPublic, itLeavesNoTrace } from './expectations.js';
import {
  type Answer,
  buttonsOf,
  fieldValue,
  type Harness,
  mentionProblems,
  newUser,
  optionString,
  sentMessages,
  startHarness,
  userOption,
} from './harness.js';

const ICON = '0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const owner = makeUser({ id: '150000000000000001', username: 'guild_owner', global_name: 'The Owner' });
const bumpsChannel = makeTextChannel({ name: 'bumps', position: 0 });
const freshGuild = makeGuild({
  id: IDS.serverFresh,
  name: 'BotiCord Community',
  icon: ICON,
  memberCount: 438,
  presenceCount: 120,
  owner_id: owner.id,
  channels: [bumpsChannel, 'chat'],
});
const boostedGuild = makeGuild({ id: IDS.serverBoosted, name: 'Аниме Уголок', memberCount: 5210 });
const cooldownGuild = makeGuild({ id: IDS.serverCooldown, name: 'Пиксельная Таверна' });
const hostileGuild = makeGuild({ id: '960000000000000077', name: '@everyone <@&123>' });
const kerdoku = makeUser({
  id: IDS.plainBot,
  username: 'kerdoku',
  global_name: 'Kerdoku',
  bot: true,
  avatar: 'c0ffee00c0ffee00c0ffee00c0ffee00',
});
const cipherka = makeUser({ id: IDS.profileUser, username: 'cipherka', global_name: 'Cipherka' });
const sqdsh = makeUser({ id: IDS.otherProfileUser, username: 'sqdsh', global_name: 'Sqdsh' });

let h: Harness;

beforeAll(async () => {
  h = await startHarness({
    guilds: [freshGuild, boostedGuild, cooldownGuild, hostileGuild],
    users: [owner, kerdoku, cipherka, sqdsh],
  });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => h.reset());

function postsToServer(emu: Emulator): RecordedRequest[] {
  return emu.requests.filter((r) => r.method === 'POST' && r.path === '/v2/server');
}

function directoryPaths(emu: Emulator): string[] {
  return emu.requests.map((r) => `${r.method} ${r.path}`);
}

/** `<t:…:R> (<t:…:f>)` for the time the emulator will next allow an up of this server. */
function nextUpField(emu: Emulator, serverId: string): string {
  const last = emu.state.ups.get(serverId);
  if (last === undefined) throw new Error(`no up recorded for ${serverId}`);
  const unix = Math.floor((last + DEFAULT_COOLDOWN_MS) / 1000);
  return `<t:${unix}:R> (<t:${unix}:f>)`;
}

function upInGuild(guildId: string, locale?: string): Promise<Answer> {
  return h.run({ guildId, name: 'up', ...(locale ? { locale } : {}) });
}

describe('/up', () => {
  it('raises the server in public: the directory message with emoji, ups, boost and next up', async () => {
    const answer = await upInGuild(freshGuild.id);
    expect(answer.outcome).toBe('success');
    const { embed } = expectPublic(answer);
    expect(embed.title).toBe('⬆️ Server raised');
    expect(embed.color).toBe(0x2ecc71);
    expect(embed.description).toBe(upSuccessMessage(1, 'boticord').replace(':white_check_mark:', '✅'));
    expect(embed.description).not.toContain(':white_check_mark:');
    expect(fieldValue(embed, 'Ups')).toBe('63');
    expect(fieldValue(embed, 'Boost')).toBe('No');
    expect(fieldValue(embed, 'Next up')).toBe(nextUpField(h.emu, freshGuild.id));
    expect(fieldValue(embed, 'Next up')).toMatch(/^<t:\d+:R> \(<t:\d+:f>\)$/);
  });

  it('posts the guild statistics gathered from Discord, as the directory bot does', async () => {
    // The counts come from GET /guilds/:id?with_counts=true, newer than the gateway's cached guild,
    // asked at the first up of a guild in a new process (then kept 10 minutes).
    await h.restartBot();
    const fixture = h.discord.guilds.get(freshGuild.id);
    if (!fixture) throw new Error('guild fixture missing');
    Object.assign(fixture, { approximate_member_count: 440, approximate_presence_count: 121 });
    const answer = await upInGuild(freshGuild.id).finally(() =>
      Object.assign(fixture, { approximate_member_count: 438, approximate_presence_count: 120 }),
    );
    const posts = postsToServer(h.emu);
    expect(posts).toHaveLength(1);
    expect(posts[0]?.headers.authorization).toBe(`Bot ${TOKENS.serviceBot}`);
    expect(JSON.parse(posts[0]?.body ?? '')).toEqual({
      serverID: freshGuild.id,
      up: 1,
      status: 1,
      serverName: 'BotiCord Community',
      serverAvatar: `https://cdn.discordapp.com/icons/${freshGuild.id}/${ICON}.webp?size=512`,
      serverMembersAllCount: 440,
      serverMembersOnlineCount: 121,
      serverOwnerID: owner.id,
      serverOwnerTag: 'guild_owner',
      upUserID: String(answer.line.userId),
      upChannelID: bumpsChannel.id,
      upChannelName: 'bumps',
    });
    const guildFetch = h.discord.requests.find(
      (r) => r.method === 'GET' && r.path === `/guilds/${freshGuild.id}`,
    );
    expect(guildFetch?.query).toBe('with_counts=true');
  });

  it('the next up is the same whether the directory sends an epoch time or a duration', async () => {
    h.emu.setNextUpStyle('duration');
    try {
      const answer = await upInGuild(freshGuild.id);
      const value = fieldValue(expectPublic(answer).embed, 'Next up') ?? '';
      const [, relative, absolute] = /^<t:(\d+):R> \(<t:(\d+):f>\)$/.exec(value) ?? [];
      const expected = /^<t:(\d+):R>/.exec(nextUpField(h.emu, freshGuild.id))?.[1];
      expect(relative).toBe(absolute);
      expect(Math.abs(Number(relative) - Number(expected))).toBeLessThanOrEqual(1);
    } finally {
      h.emu.setNextUpStyle('epoch');
    }
  });

  it('a boosted server without an icon: two ups, boost yes, no serverAvatar', async () => {
    const answer = await upInGuild(boostedGuild.id);
    const { embed } = expectPublic(answer);
    expect(embed.description).toContain('**2 UP**');
    expect(fieldValue(embed, 'Ups')).toBe('242');
    expect(fieldValue(embed, 'Boost')).toBe('Yes');
    const body = JSON.parse(postsToServer(h.emu)[0]?.body ?? '{}') as Record<string, unknown>;
    expect(body).not.toHaveProperty('serverAvatar');
    expect(body).toMatchObject({ serverMembersAllCount: 5210, serverName: 'Аниме Уголок', up: 1, status: 1 });
  });

  it('when Discord refuses the guild statistics, the up goes with what the gateway gave', async () => {
    // A new process: nothing kept from the ups before.
    await h.restartBot();
    h.discord.injectRestFault({
      method: 'GET',
      path: new RegExp(`^/guilds/${freshGuild.id}$`),
      status: 403,
      body: { message: 'Missing Access', code: 50001 },
    });
    const answer = await upInGuild(freshGuild.id);
    expect(answer.outcome).toBe('success');
    expectPublic(answer);
    // Name, icon, member count (as of the connection) and owner; not the online count nor the
    // owner's name, which only Discord's REST has.
    expect(JSON.parse(postsToServer(h.emu)[0]?.body ?? '')).toEqual({
      serverID: freshGuild.id,
      up: 1,
      status: 1,
      serverName: 'BotiCord Community',
      serverAvatar: `https://cdn.discordapp.com/icons/${freshGuild.id}/${ICON}.webp?size=512`,
      serverMembersAllCount: freshGuild.member_count,
      serverOwnerID: owner.id,
      upUserID: String(answer.line.userId),
      upChannelID: bumpsChannel.id,
      upChannelName: 'bumps',
    });
    expect(h.entries().some((e) => e.msg?.startsWith('guild statistics not refreshed'))).toBe(true);
  });
});

describe('/bot', () => {
  it.each([
    ['an ID', IDS.plainBot, IDS.plainBot],
    ['a short code', 'kerdoku', 'kerdoku'],
    ['a mention', `<@${IDS.plainBot}>`, IDS.plainBot],
    ['a nickname mention', `<@!${IDS.plainBot}>`, IDS.plainBot],
    ['a page URL', 'https://boticord.top/bot/kerdoku', 'kerdoku'],
    ['a short-link page URL', `https://bcord.cc/b/${IDS.plainBot}`, IDS.plainBot],
  ])('shows the card for %s', async (_what, ref, asked) => {
    const answer = await h.run({ guildId: freshGuild.id, name: 'bot', options: [optionString('ref', ref)] });
    expect(answer.outcome).toBe('shown');
    expect(directoryPaths(h.emu)).toEqual([`GET /v2/bot/${asked}`]);
    const { message, embed } = expectPublic(answer);
    // A Components V2 card: the flag on the edit that fills the deferral in (never on the
    // deferral), no content or embed beside it.
    const edit = answer.requests.find((r) => r.method === 'PATCH' && r.path.endsWith('/messages/@original'));
    expect((edit?.body as { flags?: number } | undefined)?.flags).toBe(MessageFlags.IsComponentsV2);
    expect(message.embeds ?? []).toEqual([]);
    expect(message.content ?? '').toBe('');
    expect((message.flags ?? 0) & MessageFlags.IsComponentsV2).toBe(MessageFlags.IsComponentsV2);
    expect(embed.title).toBe('Bot Kerdoku');
    expect(embed.thumbnail?.url).toBe(
      `https://cdn.discordapp.com/avatars/${IDS.plainBot}/c0ffee00c0ffee00c0ffee00c0ffee00.png?size=256`,
    );
    expect(embed.description).toContain('Удобный и дружелюбный бот');
    expect(fieldValue(embed, 'Prefix')).toBe('`?`');
    expect(fieldValue(embed, 'Library')).toBe('discordpy');
    expect(fieldValue(embed, 'Ups')).toBe('37');
    expect(fieldValue(embed, 'Developers')).toBe(`<@${IDS.plainBotOwner}>`);
    expect(fieldValue(embed, 'Statistics')).toBe('2,558 servers · 3 shards · 348,986 users');
    expect(embed.footer?.text).toBe(`${IDS.plainBot} · kerdoku`);
    expect(buttonsOf(message)).toEqual([
      expect.objectContaining({ label: 'Site', url: 'https://kerdoku.top/' }),
      expect.objectContaining({ label: 'Support server', url: 'https://discord.gg/5qXgJvr' }),
      expect.objectContaining({ label: 'Directory page', url: `https://boticord.top/bot/${IDS.plainBot}` }),
      expect.objectContaining({ label: 'Comments', custom_id: `comments:o:b:${IDS.plainBot}:0` }),
    ]);
  });
});

describe('/server', () => {
  it('with a reference shows that server', async () => {
    const answer = await h.run({
      guildId: cooldownGuild.id,
      name: 'server',
      options: [optionString('ref', 'boticord')],
    });
    expect(answer.outcome).toBe('shown');
    expect(directoryPaths(h.emu)).toEqual(['GET /v2/server/boticord']);
    const { message, embed } = expectPublic(answer);
    expect(embed.title).toBe('Server BotiCord Community');
    expect(embed.description).toBe('short text\n\nlong text');
    expect(fieldValue(embed, 'Members')).toBe('438 members · 0 online');
    expect(fieldValue(embed, 'Ups')).toBe('62');
    expect(fieldValue(embed, 'Badge')).toBe('STAFF');
    expect(embed.thumbnail?.url).toContain(`https://cdn.discordapp.com/icons/${IDS.serverFresh}/`);
    expect(embed.footer?.text).toBe(`${IDS.serverFresh} · boticord`);
    expect(buttonsOf(message)).toContainEqual(
      expect.objectContaining({ label: 'Join', url: 'https://discord.gg/hkHjW8a' }),
    );
    expect(buttonsOf(message)).toContainEqual(
      expect.objectContaining({ label: 'Comments', custom_id: `comments:o:s:${IDS.serverFresh}:0` }),
    );
  });

  it('by page URL', async () => {
    const answer = await h.run({
      guildId: freshGuild.id,
      name: 'server',
      options: [optionString('ref', 'https://bcord.cc/s/boticord')],
    });
    expect(directoryPaths(h.emu)).toEqual(['GET /v2/server/boticord']);
    expect(expectPublic(answer).embed.title).toBe('Server BotiCord Community');
  });

  it('without a reference shows the current guild', async () => {
    const answer = await h.run({ guildId: cooldownGuild.id, name: 'server' });
    expect(directoryPaths(h.emu)).toEqual([`GET /v2/server/${IDS.serverCooldown}`]);
    const { embed } = expectPublic(answer);
    expect(embed.title).toBe('Server Пиксельная Таверна');
    expect(fieldValue(embed, 'Members')).toBe('1,200 members · 140 online');
    expect(fieldValue(embed, 'Owner')).toBe(`<@${IDS.otherProfileUser}>`);
  });
});

describe('/profile', () => {
  it('without a user shows the invoking user and their bots', async () => {
    const answer = await h.run({ guildId: freshGuild.id, name: 'profile', user: cipherka });
    expect(answer.outcome).toBe('shown');
    expect(directoryPaths(h.emu).sort()).toEqual([
      `GET /v2/bots/${IDS.profileUser}`,
      `GET /v2/profile/${IDS.profileUser}`,
    ]);
    const { message, embed } = expectPublic(answer);
    expect(embed.title).toBe('Profile of Cipherka');
    expect(embed.description).toMatch(/^> "Если вы не разделяете мою точку зрения/);
    expect(fieldValue(embed, 'Bots')).toBe(`<@${IDS.serviceBot}> · \`sonata\``);
    expect(fieldValue(embed, 'Short code')).toBe('`cipherka`');
    expect(fieldValue(embed, 'Links')).toBe('Steam: sadlycipherka');
    expect(buttonsOf(message)).toEqual([
      expect.objectContaining({ label: 'Site', url: 'https://sqdsh.top/' }),
      expect.objectContaining({ label: 'Git', url: 'https://git.sqdsh.top/me' }),
      expect.objectContaining({ label: 'Comments', custom_id: `comments:o:p:${IDS.profileUser}:0` }),
    ]);
  });

  it('with a user shows that user and their bots', async () => {
    const answer = await h.run({ guildId: freshGuild.id, name: 'profile', ...userOption(sqdsh) });
    expect(directoryPaths(h.emu).sort()).toEqual([
      `GET /v2/bots/${IDS.otherProfileUser}`,
      `GET /v2/profile/${IDS.otherProfileUser}`,
    ]);
    const { embed } = expectPublic(answer);
    expect(embed.title).toBe('Profile of Sqdsh');
    expect(embed.description).toBe('> Пишу ботов по вечерам');
    const bots = fieldValue(embed, 'Bots')?.split('\n') ?? [];
    expect(bots).toHaveLength(13);
    expect(bots[0]).toBe(`<@${IDS.privateBot}>`);
    expect(bots).toContain('<@900000000000000001> · `filler1`');
    expect(bots).toContain('<@900000000000000012> · `filler12`');
  });
});

describe('localization', () => {
  async function botCard(locale: string): Promise<APIEmbed> {
    const answer = await h.run({
      guildId: freshGuild.id,
      name: 'bot',
      locale,
      options: [optionString('ref', 'kerdoku')],
    });
    return expectPublic(answer).embed;
  }

  it('Russian for ru, English for en-US, and English as the fallback for de', async () => {
    const ru = await botCard('ru');
    expect(ru.title).toBe('Бот Kerdoku');
    expect(ru.fields?.map((f) => f.name)).toEqual(
      expect.arrayContaining(['Префикс', 'Библиотека', 'Апы', 'Статистика', 'Разработчики', 'Теги']),
    );
    expect(fieldValue(ru, 'Статистика')).toMatch(/^2\s558 серверов · 3 шарда · 348\s986 пользователей$/u);
    const en = await botCard('en-US');
    expect(en.title).toBe('Bot Kerdoku');
    expect(en.fields?.map((f) => f.name)).toEqual(
      expect.arrayContaining(['Prefix', 'Library', 'Ups', 'Statistics', 'Developers', 'Tags']),
    );
    const de = await botCard('de');
    expect(de).toEqual(en);
  });

  it('buttons, up results and errors follow the locale too', async () => {
    const ruCard = await h.run({
      guildId: freshGuild.id,
      name: 'bot',
      locale: 'ru',
      options: [optionString('ref', 'kerdoku')],
    });
    expect(buttonsOf(expectPublic(ruCard).message).map((b) => b.label)).toEqual([
      'Сайт',
      'Сервер поддержки',
      'Страница в каталоге',
      'Отзывы',
    ]);
    // The public success speaks the server's language (auto: the guild's locale, en-US here);
    // what only the user sees speaks theirs.
    const ruUp = expectPublic(await upInGuild(freshGuild.id, 'ru')).embed;
    expect(ruUp.title).toBe('⬆️ Server raised');
    const ruWait = expectPrivate(await upInGuild(freshGuild.id, 'ru')).embed;
    expect(ruWait.title).toContain('Пока рано');
    expect(ruWait.fields?.map((f) => f.name)).toEqual(['Апы', 'Буст', 'Следующий ап']);
    const missing = optionString('ref', '100000000000000001');
    const ruError = await h.run({ guildId: freshGuild.id, name: 'bot', locale: 'ru', options: [missing] });
    expect(expectPrivate(ruError).embed.description).toBe('❌ Этого бота нет в каталоге.');
    const deError = await h.run({ guildId: freshGuild.id, name: 'bot', locale: 'de', options: [missing] });
    expect(expectPrivate(deError).embed.description).toBe('❌ This bot is not in the directory.');
  });
});

describe('mention safety', () => {
  const HOSTILE = '@everyone @here <@&123> <@1234567890123456789>';

  function expectSafe(answer: Answer): string {
    const messages = sentMessages(answer.requests);
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.flatMap((m) => mentionProblems(m))).toEqual([]);
    return answer.view.followUps
      .concat(answer.view.original ? [answer.view.original] : [])
      .flatMap((m) => viewOf(m).prose)
      .join('\n');
  }

  it('a bot record full of mentions is shown broken', async () => {
    const bot = h.emu.state.bots.get(IDS.plainBot);
    if (!bot) throw new Error('seed bot missing');
    Object.assign(bot.information, {
      shortDescription: '@here <@1234567890123456789>',
      longDescription: HOSTILE,
      prefix: '@everyone',
      library: '<@&42>',
      tags: ['@here', '<@&7>'],
      developers: ['@everyone', IDS.plainBotOwner],
      status: '@here',
      badge: '<@&8>',
    });
    const answer = await h.run({
      guildId: freshGuild.id,
      name: 'bot',
      options: [optionString('ref', 'kerdoku')],
    });
    const text = expectSafe(answer);
    expect(text).toContain('@\u200bhere <\u200b@1234567890123456789>');
    expect(text).toContain('@\u200beveryone');
    expect(text).toContain('<\u200b@&42>');
  });

  it('a guild named "@everyone <@&123>" goes to the directory as is and comes back broken', async () => {
    const up = await upInGuild(hostileGuild.id);
    expect(up.outcome).toBe('success');
    expectSafe(up);
    expect(JSON.parse(postsToServer(h.emu)[0]?.body ?? '{}')).toMatchObject({
      serverName: '@everyone <@&123>',
    });
    const card = await h.run({ guildId: hostileGuild.id, name: 'server' });
    const { embed } = expectPublic(card);
    expect(embed.title).toBe('Server @\u200beveryone <\u200b@&123>');
    expectSafe(card);
  });

  it('server and profile records, comments and directory messages are broken too', async () => {
    const server = h.emu.state.servers.get(IDS.serverFresh);
    const profile = h.emu.state.profiles.get(IDS.profileUser);
    if (!server || !profile) throw new Error('seed records missing');
    Object.assign(server.information, {
      name: '@everyone <@&123>',
      shortDescription: HOSTILE,
      badge: '@here',
    });
    Object.assign(profile, { status: HOSTILE, badge: '@everyone' });
    h.emu.state.comments.bots.set(IDS.plainBot, [
      { userID: '@everyone', text: `look ${HOSTILE}`, vote: 1, isUpdated: false, createdAt: 1650000000000 },
    ]);
    const serverCard = await h.run({
      guildId: freshGuild.id,
      name: 'server',
      options: [optionString('ref', 'boticord')],
    });
    expect(expectSafe(serverCard)).toContain('Server @\u200beveryone <\u200b@&123>');
    expectSafe(await h.run({ guildId: freshGuild.id, name: 'profile', user: cipherka }));
    const comments = await h.click({ guildId: freshGuild.id, customId: `comments:o:b:${IDS.plainBot}:0` });
    expect(expectSafe(comments)).toContain('look @\u200beveryone @\u200bhere <\u200b@&123>');

    h.emu.faults.add({ kind: 'not-updated', message: `:warning: ${HOSTILE}`, times: 1 });
    const notUpdated = await upInGuild(freshGuild.id);
    expect(expectSafe(notUpdated)).toContain('⚠️ @\u200beveryone @\u200bhere <\u200b@&123>');
    h.emu.faults.add({ kind: 'status', status: 400, message: HOSTILE, method: 'POST', times: 1 });
    const refused = await upInGuild(freshGuild.id);
    expect(refused.outcome).toBe('error:BadRequest');
    expect(expectSafe(refused)).toContain('The directory did not accept the request: @\u200beveryone');
  });
});

describe('unknown command', () => {
  it('is answered privately at once and the bot keeps working', async () => {
    const answer = await h.run({ guildId: freshGuild.id, name: 'nope' });
    expect(answer.outcome).toBe('unknown');
    const callback = answer.requests[0]?.body as { type: number; data: { content: string; flags: number } };
    expect(callback.type).toBe(4);
    expect(callback.data.flags & 64).toBe(64);
    expect(callback.data.content).toBe('This command is not available any more.');
    expect(answer.view.original?.flags ?? 0).toBe(64);
    expect(h.emu.requests).toEqual([]);

    const after = await h.run({
      guildId: freshGuild.id,
      name: 'bot',
      options: [optionString('ref', 'kerdoku')],
    });
    expect(after.outcome).toBe('shown');
    expect(expectPublic(after).embed.title).toBe('Bot Kerdoku');
    const other = await h.run({ guildId: freshGuild.id, name: 'profile', user: newUser('nobody') });
    expect(other.outcome).toBe('error:NotFound');
  });
});

itLeavesNoTrace(() => h);
