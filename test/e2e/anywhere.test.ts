/**
 * The look-ups anywhere (issue 24): /bot, /server and /profile installed by a user as well as by a
 * server, through the real discord.js client, the Discord stand-in and the directory emulator: in a
 * server the bot is not in (nothing of it in the gateway's cache), in a DM or group DM between
 * users, and in the bot's DM. What the bot needs there is the interaction alone: it asks Discord
 * nothing about the server.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeGuild, makeUser } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { viewOf } from '../support/layout-view.js';
import { expectPrivate, expectPrivatelyDeferred, expectPublic, itLeavesNoTrace } from './expectations.js';
import { fieldValue, type Harness, optionString, startHarness } from './harness.js';

/** The server the bot is in; the other servers of these tests only the user installed the app in. */
const home = makeGuild({ id: IDS.serverFresh, name: 'BotiCord Community', memberCount: 438 });
const kerdoku = makeUser({ id: IDS.plainBot, username: 'kerdoku', global_name: 'Kerdoku', bot: true });
const cipherka = makeUser({ id: IDS.profileUser, username: 'cipherka', global_name: 'Cipherka' });
/** Neither in the directory. */
const nobody = makeUser({ id: '180000000000000009', username: 'nobody_here' });
const strangerBot = makeUser({ id: '180000000000000010', username: 'stranger_bot', bot: true });

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ guilds: [home], users: [kerdoku, cipherka, nobody, strangerBot] });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => h.reset());

function directoryPaths(): string[] {
  return h.emu.requests.map((r) => `${r.method} ${r.path}`);
}

/** Requests with the bot's token that name a server (a look-up of it, its channels, its members). */
function guildRequests(guildId: string): string[] {
  return h.discord.requests
    .filter(
      (r) =>
        r.path.includes(guildId) && !r.path.startsWith('/interactions/') && !r.path.startsWith('/webhooks/'),
    )
    .map((r) => `${r.method} ${r.path}`);
}

describe('/bot, /server and /profile where only the user installed the app', () => {
  it('/bot in a server the bot is not in shows the card in public', async () => {
    const external = '970000000000000001';
    const answer = await h.run({
      externalGuild: { id: external },
      name: 'bot',
      options: [optionString('ref', 'kerdoku')],
    });
    expect(answer.outcome).toBe('shown');
    const member = answer.handle.payload.member as { user: { id: string } };
    expect(answer.handle.payload.authorizing_integration_owners).toEqual({ '1': member.user.id });
    expect(directoryPaths()).toEqual(['GET /v2/bot/kerdoku']);
    const { embed } = expectPublic(answer);
    expect(embed.title).toBe('Bot Kerdoku');
    expect(fieldValue(embed, 'Library')).toBe('discordpy');
    expect(guildRequests(external)).toEqual([]);
    expect(h.bot.client.guilds.cache.has(external)).toBe(false);
  });

  it('/server without a reference in a server the bot is not in shows that server', async () => {
    const answer = await h.run({ externalGuild: { id: IDS.serverCooldown }, name: 'server' });
    expect(answer.outcome).toBe('shown');
    expect(directoryPaths()).toEqual([`GET /v2/server/${IDS.serverCooldown}`]);
    const { message, embed } = expectPublic(answer);
    expect(embed.title).toBe('Server Пиксельная Таверна');
    // No ups of it in the history (the bot is not there): the card without the chart.
    expect(viewOf(message).images).toEqual([]);
    expect(guildRequests(IDS.serverCooldown)).toEqual([]);
  });

  it('/profile in a DM between users (a private channel) shows the profile', async () => {
    const answer = await h.run({ privateChannel: true, name: 'profile', user: cipherka });
    expect(answer.outcome).toBe('shown');
    expect(answer.handle.payload.context).toBe(2);
    expect(directoryPaths()).toEqual([
      `GET /v2/profile/${IDS.profileUser}`,
      `GET /v2/bots/${IDS.profileUser}`,
    ]);
    expect(expectPublic(answer).embed.title).toContain('Cipherka');
  });

  it("/bot in the bot's DM shows the card", async () => {
    const answer = await h.run({ name: 'bot', options: [optionString('ref', IDS.plainBot)] });
    expect(answer.outcome).toBe('shown');
    expect(answer.handle.payload.context).toBe(1);
    expect(expectPublic(answer).embed.title).toBe('Bot Kerdoku');
  });

  it.each([
    ['en-US', 'Outside a server, say which server: give its ID, short code or directory page link.'],
    ['ru', 'Вне сервера укажите, какой сервер: его ID, короткий код или ссылку на страницу каталога.'],
  ])('/server without a reference in a DM says which is missing, privately (%s)', async (locale, text) => {
    const answer = await h.run({ privateChannel: true, name: 'server', locale });
    expect(directoryPaths()).toEqual([]);
    expect(answer.outcome).toBe('error:ServerNeeded');
    expect(expectPrivate(answer).embed.description).toBe(`❌ ${text}`);
  });
});

describe('"Directory card" in the context menu on a member', () => {
  const card = (
    targetId: string,
    where: { guildId?: string; externalGuild?: { id: string } },
    locale = 'en-US',
  ) => h.run({ type: 2, name: 'Directory card', targetId, locale, ...where });

  it("on a bot shows the bot's card, privately", async () => {
    const answer = await card(IDS.plainBot, { guildId: home.id });
    expect(answer.outcome).toBe('bot');
    expect(directoryPaths()).toEqual([`GET /v2/bot/${IDS.plainBot}`]);
    const { embed } = expectPrivatelyDeferred(answer);
    expect(embed.title).toBe('Bot Kerdoku');
  });

  it('on a person shows the profile and their bots, also where only the user installed the app', async () => {
    const answer = await card(IDS.profileUser, { externalGuild: { id: '970000000000000002' } });
    expect(answer.outcome).toBe('profile');
    expect(directoryPaths()).toEqual([
      `GET /v2/profile/${IDS.profileUser}`,
      `GET /v2/bots/${IDS.profileUser}`,
    ]);
    expect(expectPrivatelyDeferred(answer).embed.title).toContain('Cipherka');
  });

  it.each([
    ['en-US', 'a person', nobody.id, '❌ This user has no profile in the directory.'],
    ['ru', 'a person', nobody.id, '❌ У этого пользователя нет профиля в каталоге.'],
    ['en-US', 'a bot', strangerBot.id, '❌ This bot is not in the directory.'],
  ])('(%s) on %s the directory does not know says so, privately', async (locale, _what, id, text) => {
    const answer = await card(id, { guildId: home.id }, locale);
    expect(answer.outcome).toBe('not-found');
    expect(expectPrivatelyDeferred(answer).embed.description).toBe(text);
  });
});

describe('the look-ups anywhere', () => {
  itLeavesNoTrace(() => h);
});
