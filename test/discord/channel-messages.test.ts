// The stand-in's messages outside interactions: Create Message in guild channels and DMs, its
// checks (unknown channel, permissions from roles and overwrites, limits, closed DMs), nonce
// dedupe, pings, and the controls tests use (deleting, changing permissions, failing and holding
// posts). Driven through discord.js's own REST client and, where events matter, a real Client.

import { once } from 'node:events';
import {
  type APIChannel,
  type APIMessage,
  type APIRole,
  DiscordAPIError,
  Events,
  OverwriteType,
  PermissionFlagsBits,
  REST,
  Routes,
} from 'discord.js';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { sleep } from '../support/wait.js';
import {
  botRoleOf,
  DEFAULT_BOT_PERMISSIONS,
  type DiscordStandIn,
  type GuildFixture,
  makeGuild,
  makeRole,
  makeTextChannel,
  makeUser,
} from './index.js';
import { standInSession } from './test-session.js';

const session = standInSession();
const start = session.start;

/** discord.js's REST client, as the bot uses it (retries: 0 unless a test wants discord.js's own). */
function rest(si: DiscordStandIn, retries = 0): REST {
  return new REST({ api: si.restUrl, retries }).setToken(si.token);
}

function post(r: REST, channelId: string, body: Record<string, unknown>): Promise<APIMessage> {
  return r.post(Routes.channelMessages(channelId), { body }) as Promise<APIMessage>;
}

/** The DiscordAPIError a request ends with (fails the test if it succeeds). */
async function apiError(promise: Promise<unknown>): Promise<DiscordAPIError> {
  const outcome = await promise.then(
    () => new Error('expected the request to fail'),
    (e: unknown) => e,
  );
  if (!(outcome instanceof DiscordAPIError)) throw outcome;
  return outcome;
}

const NO_PINGS = { parse: [] };

function guildWithChannels(): { guild: GuildFixture; general: string; news: string } {
  const general = makeTextChannel({ name: 'general', position: 0 });
  const news = makeTextChannel({ name: 'news', position: 1 });
  const guild = makeGuild({ name: 'Reminders', channels: [general, news] });
  return { guild, general: general.id, news: news.id };
}

describe('Create Message in guild channels', () => {
  it("deletes the bot's own message once: then it is Discord's 10008, to delete or to edit", async () => {
    const { guild, general } = guildWithChannels();
    const si = await start({ guilds: [guild] });
    const r = rest(si);
    const kept = await post(r, general, { content: 'kept', allowed_mentions: NO_PINGS });
    const gone = await post(r, general, { content: 'gone', allowed_mentions: NO_PINGS });
    await r.delete(Routes.channelMessage(general, gone.id));
    expect(si.liveMessages(general).map((m) => m.content)).toEqual(['kept']);
    expect(si.channelMessages(general).find((m) => m.id === gone.id)?.deletedAt).toEqual(expect.any(Number));
    expect((await apiError(r.delete(Routes.channelMessage(general, gone.id)))).code).toBe(10008);
    const edit = r.patch(Routes.channelMessage(general, gone.id), { body: { content: 'x' } });
    expect((await apiError(edit)).code).toBe(10008);
    expect((await apiError(r.delete(Routes.channelMessage(general, '1')))).code).toBe(10008);
    expect(si.liveMessages(general).map((m) => m.id)).toEqual([kept.id]);
  });

  it("lets go of the messages created before a time, with their nonces: a long benchmark's trim", async () => {
    const { guild, general, news } = guildWithChannels();
    const si = await start({ guilds: [guild] });
    const r = rest(si);
    await post(r, general, {
      content: 'old',
      nonce: 'n-old',
      enforce_nonce: true,
      allowed_mentions: NO_PINGS,
    });
    await post(r, news, { content: 'old too', allowed_mentions: NO_PINGS });
    await sleep(5);
    const cut = Date.now();
    await post(r, general, { content: 'new', allowed_mentions: NO_PINGS });
    const gone = si.forgetMessagesBefore(cut);
    expect(gone.map((m) => m.content)).toEqual(['old', 'old too']);
    expect(si.postedMessages().map((m) => m.content)).toEqual(['new']);
    expect(si.channelMessages(general).map((m) => m.content)).toEqual(['new']);
    expect(si.channelMessages(news)).toEqual([]);
    // Its nonce is let go too: the same nonce now makes a new message.
    const again = await post(r, general, {
      content: 'old',
      nonce: 'n-old',
      enforce_nonce: true,
      allowed_mentions: NO_PINGS,
    });
    expect(si.channelMessages(general).map((m) => m.id)).toContain(again.id);
    expect(si.forgetMessagesBefore(0)).toEqual([]);
  });

  it('creates a message by the bot and records the whole request body', async () => {
    const { guild, general } = guildWithChannels();
    const si = await start({ guilds: [guild] });
    const r = rest(si);
    const body = {
      content: 'Time to raise the server: </up:123456789012345678>',
      embeds: [{ title: 'Reminder', description: 'The next up is possible' }],
      allowed_mentions: NO_PINGS,
      nonce: 'reminder-42',
      enforce_nonce: true,
    };
    const before = Date.now();
    const waiting = si.waitForMessage(general);
    const message = await post(r, general, body);

    expect(message.author.id).toBe(si.botUser.id);
    expect(message.channel_id).toBe(general);
    expect(message.id).toMatch(/^\d{17,20}$/);
    expect(message.nonce).toBe('reminder-42');
    expect(message.embeds).toEqual([
      { type: 'rich', title: 'Reminder', description: 'The next up is possible' },
    ]);
    const seen = await waiting;
    expect(seen).toMatchObject({
      id: message.id,
      channelId: general,
      guildId: guild.id,
      content: body.content,
      allowedMentions: NO_PINGS,
      nonce: 'reminder-42',
      enforceNonce: true,
      body,
      pings: { everyone: false, users: [], roles: [] },
      repeats: 0,
    });
    expect(seen.receivedAt).toBeGreaterThanOrEqual(before);
    expect(seen.receivedAt).toBeLessThanOrEqual(Date.now());
    expect(si.channelMessages(general).map((m) => m.id)).toEqual([message.id]);
    expect(si.postedMessages()).toHaveLength(1);
    // The channel now says which message is its last, as Discord's GET /channels/{id} does.
    const channel = (await r.get(Routes.channel(general))) as APIChannel & { last_message_id: string };
    expect(channel.last_message_id).toBe(message.id);
  });

  it('refuses what Discord refuses: unknown channel, bad bodies, non-text channels', async () => {
    const { guild, general } = guildWithChannels();
    const category = makeTextChannel({ name: 'Category', type: 4 });
    guild.channels.push(category);
    const si = await start({ guilds: [guild] });
    const r = rest(si);

    const unknown = await apiError(post(r, '123456789012345678', { content: 'hi' }));
    expect(unknown).toMatchObject({ status: 404, code: 10003, message: 'Unknown Channel' });
    expect((await apiError(post(r, category.id, { content: 'hi' }))).code).toBe(50008);
    expect((await apiError(post(r, general, { content: '' }))).code).toBe(50006);

    const invalid = async (body: Record<string, unknown>) => {
      const error = await apiError(post(r, general, body));
      expect(error.status).toBe(400);
      expect(error.code).toBe(50035);
      return (error.rawError as { errors: unknown }).errors;
    };
    expect(await invalid({ content: 'x'.repeat(2001) })).toMatchObject({
      content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] },
    });
    expect(await invalid({ content: 'hi', nonce: 'n'.repeat(26), enforce_nonce: true })).toMatchObject({
      nonce: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 25 or fewer in length.' }] },
    });
    expect(await invalid({ content: 'hi', enforce_nonce: 'yes' })).toMatchObject({
      enforce_nonce: { _errors: [{ code: 'BASE_TYPE_BOOLEAN' }] },
    });
    expect(
      await invalid({ content: 'hi', allowed_mentions: { parse: ['users'], users: ['123456789012345678'] } }),
    ).toMatchObject({
      allowed_mentions: { _errors: [{ code: 'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE' }] },
    });
    expect(await invalid({ content: 'hi', allowed_mentions: { parse: ['here'] } })).toMatchObject({
      allowed_mentions: { parse: { '0': { _errors: [{ code: 'BASE_TYPE_CHOICES' }] } } },
    });
    expect(await invalid({ content: 'hi', allowed_mentions: { roles: ['not-an-id'] } })).toMatchObject({
      allowed_mentions: { roles: { '0': { _errors: [{ code: 'NUMBER_TYPE_COERCE' }] } } },
    });
    expect(await invalid({ embeds: [{ title: 't'.repeat(257) }] })).toMatchObject({
      embeds: { '0': { title: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] } } },
    });
    // An empty id list beside parse is allowed, as on Discord; a 25-character nonce too.
    await post(r, general, {
      content: 'ok',
      allowed_mentions: { parse: ['users'], users: [] },
      nonce: 'n'.repeat(25),
    });
    expect(si.channelMessages(general).map((m) => m.content)).toEqual(['ok']);
  });

  it("computes the bot's permissions from @everyone, its roles, Administrator and the overwrites", async () => {
    const { guild, general } = guildWithChannels();
    const si = await start({ guilds: [guild] });
    const r = rest(si);
    const stored = si.guilds.get(guild.id)!;
    const botRole = botRoleOf(stored, si.botUser.id)!;
    const botId = si.botUser.id;
    const text = { content: 'plain', allowed_mentions: NO_PINGS };
    const embed = { embeds: [{ description: 'with an embed' }], allowed_mentions: NO_PINGS };
    const code = async (body: Record<string, unknown>) =>
      post(r, general, body).then(
        () => 200,
        (e: unknown) => (e instanceof DiscordAPIError ? e.code : e),
      );

    // Granted by the managed role: both go through.
    expect([await code(text), await code(embed)]).toEqual([200, 200]);

    // @everyone cannot see the channel, and the bot's role has nothing that brings it back.
    si.setChannelOverwrites(general, [{ id: guild.id, type: 'role', deny: PermissionFlagsBits.ViewChannel }]);
    expect(await code(text)).toBe(50001);
    // The role's overwrite allows it again (role overwrites come after @everyone's).
    si.setChannelOverwrites(general, [
      { id: guild.id, type: 'role', deny: PermissionFlagsBits.ViewChannel },
      { id: botRole.id, type: 'role', allow: PermissionFlagsBits.ViewChannel },
    ]);
    expect(await code(text)).toBe(200);
    // A member overwrite for the bot comes last: Send Messages denied there wins.
    si.setChannelOverwrites(general, [
      { id: botRole.id, type: 'role', allow: PermissionFlagsBits.SendMessages },
      { id: botId, type: 'member', deny: PermissionFlagsBits.SendMessages },
    ]);
    expect(await code(text)).toBe(50013);
    si.setChannelOverwrites(general, []);

    // Embed Links neither from @everyone nor from the role: text still goes, an embed does not.
    const everyoneBase = PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages;
    si.setRolePermissions(guild.id, guild.id, everyoneBase);
    si.setRolePermissions(
      guild.id,
      botRole.id,
      BigInt(DEFAULT_BOT_PERMISSIONS) & ~PermissionFlagsBits.EmbedLinks,
    );
    expect(await code(text)).toBe(200);
    expect(await code(embed)).toBe(50013);
    // @everyone's permissions count too: granting Embed Links there is enough.
    si.setRolePermissions(guild.id, guild.id, everyoneBase | PermissionFlagsBits.EmbedLinks);
    expect(await code(embed)).toBe(200);

    // Administrator overrides every overwrite.
    const admin = si.addRole(guild.id, { name: 'Admin', permissions: PermissionFlagsBits.Administrator });
    si.setMemberRoles(guild.id, botId, [botRole.id, admin.id]);
    si.setChannelOverwrites(general, [{ id: botId, type: 'member', deny: PermissionFlagsBits.ViewChannel }]);
    expect(await code(embed)).toBe(200);
    // Its role deleted: the member overwrite applies again.
    si.deleteRole(guild.id, admin.id);
    expect(await code(text)).toBe(50001);
    const err = await apiError(post(r, general, text));
    expect(err).toMatchObject({ status: 403, message: 'Missing Access' });

    const sent = si.channelMessages(general);
    expect(sent.every((m) => m.message.author.id === botId)).toBe(true);
    expect(sent).toHaveLength(6);
  });

  it('answers a repeated nonce with enforce_nonce with the first message, for a few minutes', async () => {
    const { guild, general, news } = guildWithChannels();
    const si = await start({ guilds: [guild], nonceWindowMs: 400 });
    const r = rest(si);
    const body = { content: 'once', allowed_mentions: NO_PINGS, nonce: 'r-1', enforce_nonce: true };
    const first = await post(r, general, body);
    const second = await post(r, general, { ...body, content: 'twice' });
    expect(second.id).toBe(first.id);
    expect(second.content).toBe('once');
    expect(si.channelMessages(general)).toHaveLength(1);
    expect(si.channelMessages(general)[0]!.repeats).toBe(1);

    // Without enforce_nonce the nonce is only echoed; another channel is another scope.
    const loose = await post(r, general, { ...body, enforce_nonce: false });
    expect(loose.id).not.toBe(first.id);
    const elsewhere = await post(r, news, body);
    expect(elsewhere.id).not.toBe(first.id);

    // Past the window the nonce is forgotten.
    await sleep(450);
    const later = await post(r, general, body);
    expect(later.id).not.toBe(first.id);
    expect(si.channelMessages(general).map((m) => m.content)).toEqual(['once', 'once', 'once']);
  });

  it('says whom a message pings: mentions filtered by allowed_mentions, mentionable roles, Mention Everyone', async () => {
    const member = makeUser({ username: 'member' });
    const quiet = makeRole({ name: 'Quiet' });
    const loud = makeRole({ name: 'Loud', mentionable: true });
    const { guild, general } = guildWithChannels();
    guild.roles.push(quiet, loud);
    const si = await start({ guilds: [guild], users: [member] });
    const r = rest(si);
    const content = `@everyone <@&${quiet.id}> <@&${loud.id}> <@!${member.id}> <@${member.id}>`;
    const pings = async (allowed?: Record<string, unknown>) => {
      const sent = await post(r, general, allowed ? { content, allowed_mentions: allowed } : { content });
      const posted = si.channelMessages(general).find((m) => m.id === sent.id)!;
      expect(sent.mention_everyone).toBe(posted.pings.everyone);
      expect(sent.mention_roles).toEqual(posted.pings.roles);
      return posted.pings;
    };

    expect(await pings({ parse: [] })).toEqual({ everyone: false, users: [], roles: [] });
    expect(await pings({ parse: [], roles: [quiet.id, loud.id], users: [member.id] })).toEqual({
      everyone: false,
      users: [member.id],
      roles: [loud.id],
    });
    // No allowed_mentions: every type is parsed; @everyone still needs Mention Everyone.
    expect(await pings()).toEqual({ everyone: false, users: [member.id], roles: [loud.id] });
    const botRole = botRoleOf(si.guilds.get(guild.id)!, si.botUser.id)!;
    si.setRolePermissions(
      guild.id,
      botRole.id,
      BigInt(DEFAULT_BOT_PERMISSIONS) | PermissionFlagsBits.MentionEveryone,
    );
    expect(await pings()).toEqual({ everyone: true, users: [member.id], roles: [quiet.id, loud.id] });
    expect(await pings({ parse: ['roles'] })).toEqual({
      everyone: false,
      users: [],
      roles: [quiet.id, loud.id],
    });
    // A role named in `roles` but not in the content pings no one.
    const none = await post(r, general, { content: 'hello', allowed_mentions: { roles: [loud.id] } });
    expect(none.mention_roles).toEqual([]);
  });
});

describe('DMs', () => {
  it('opens one DM channel per user, posts there, and refuses closed DMs with 50007', async () => {
    const open = makeUser({ username: 'open' });
    const closed = makeUser({ username: 'closed', dmsClosed: true });
    const si = await start({ users: [open, closed] });
    // The flag is the stand-in's own: no payload shows it.
    expect(JSON.stringify(closed)).not.toContain('dmsClosed');
    const r = rest(si);
    const dm = (await r.post(Routes.userChannels(), { body: { recipient_id: open.id } })) as APIChannel & {
      recipients: { id: string }[];
    };
    expect(dm.type).toBe(1);
    expect(dm.recipients.map((u) => u.id)).toEqual([open.id]);
    const again = (await r.post(Routes.userChannels(), { body: { recipient_id: open.id } })) as APIChannel;
    expect(again.id).toBe(dm.id);
    expect(si.dmChannelId(open.id)).toBe(dm.id);

    const waiting = si.waitForDm(open.id, (m) => m.content === 'your reminder');
    const sent = await post(r, dm.id, {
      content: 'your reminder',
      allowed_mentions: NO_PINGS,
      nonce: 'dm-1',
    });
    expect((await waiting).id).toBe(sent.id);
    expect(si.dmMessages(open.id)).toMatchObject([
      { id: sent.id, channelId: dm.id, recipientId: open.id, nonce: 'dm-1', allowedMentions: NO_PINGS },
    ]);
    expect(si.dmMessages(open.id)[0]!.guildId).toBeUndefined();
    expect(((await r.get(Routes.channel(dm.id))) as APIChannel).id).toBe(dm.id);

    // Opening the DM channel works even when DMs are closed; posting there does not.
    const closedDm = (await r.post(Routes.userChannels(), {
      body: { recipient_id: closed.id },
    })) as APIChannel;
    const refused = await apiError(post(r, closedDm.id, { content: 'hi' }));
    expect(refused).toMatchObject({ status: 403, code: 50007, message: 'Cannot send messages to this user' });
    si.setDmsClosed(closed.id, false);
    await post(r, closedDm.id, { content: 'now open' });
    si.setDmsClosed(open.id);
    expect((await apiError(post(r, dm.id, { content: 'closed now' }))).code).toBe(50007);
    expect(si.dmMessages(closed.id).map((m) => m.content)).toEqual(['now open']);

    // A DM channel opened ahead by the test is the one the bot gets; posts there can be held.
    const late = makeUser({ username: 'late' });
    si.addUser(late);
    const ahead = si.openDmChannel(late.id);
    si.holdPosts(ahead);
    const lateDm = (await r.post(Routes.userChannels(), { body: { recipient_id: late.id } })) as APIChannel;
    expect(lateDm.id).toBe(ahead);
    const held = post(r, ahead, { content: 'held DM' });
    await (await si.waitForHeldPost(ahead)).complete();
    expect((await held).content).toBe('held DM');
    expect(() => si.openDmChannel('123456789012345678')).toThrow(/unknown user/);

    const unknown = await apiError(
      r.post(Routes.userChannels(), { body: { recipient_id: '123456789012345678' } }),
    );
    expect(unknown).toMatchObject({ status: 404, code: 10013 });
    expect((await apiError(r.post(Routes.userChannels(), { body: {} }))).code).toBe(50035);
  });
});

describe('controls and REST reads', () => {
  it('tells a connected discord.js client of deleted and changed channels and roles; posts then fail', async () => {
    const { guild, general, news } = guildWithChannels();
    const role = makeRole({ name: 'Bumpers', permissions: '0' });
    guild.roles.push(role);
    const si = await start({ guilds: [guild] });
    const client = await session.connect(si);
    const cached = client.guilds.cache.get(guild.id)!;
    const r = rest(si);

    const updated = once(client, Events.ChannelUpdate);
    si.setChannelOverwrites(news, [
      { id: role.id, type: 'role', allow: PermissionFlagsBits.MentionEveryone },
    ]);
    await updated;
    const overwrite = cached.channels.cache.get(news)!;
    expect(
      'permissionOverwrites' in overwrite && overwrite.permissionOverwrites.cache.get(role.id)?.type,
    ).toBe(OverwriteType.Role);

    const roleUpdated = once(client, Events.GuildRoleUpdate);
    si.updateRole(guild.id, role.id, { mentionable: true, permissions: PermissionFlagsBits.ManageGuild });
    await roleUpdated;
    expect(cached.roles.cache.get(role.id)?.mentionable).toBe(true);
    expect(cached.roles.cache.get(role.id)?.permissions.has(PermissionFlagsBits.ManageGuild)).toBe(true);

    const roleDeleted = once(client, Events.GuildRoleDelete);
    const newsUpdated = once(client, Events.ChannelUpdate);
    si.deleteRole(guild.id, role.id);
    await Promise.all([roleDeleted, newsUpdated]);
    expect(cached.roles.cache.has(role.id)).toBe(false);
    const roles = (await r.get(Routes.guildRoles(guild.id))) as APIRole[];
    expect(roles.map((x) => x.id)).not.toContain(role.id);
    const channel = (await r.get(Routes.channel(news))) as APIChannel & { permission_overwrites: unknown[] };
    expect(channel.permission_overwrites).toEqual([]);

    const deleted = once(client, Events.ChannelDelete);
    await post(r, general, { content: 'before' });
    si.deleteChannel(general);
    await deleted;
    expect(cached.channels.cache.has(general)).toBe(false);
    expect((await apiError(post(r, general, { content: 'after' }))).code).toBe(10003);
    expect((await apiError(r.get(Routes.channel(general)))).code).toBe(10003);
    expect(si.channelMessages(general).map((m) => m.content)).toEqual(['before']);

    const added = once(client, Events.ChannelCreate);
    const fresh = si.addChannel(guild.id, { name: 'reminders' });
    await added;
    expect(cached.channels.cache.get(fresh.id)?.name).toBe('reminders');
    await post(r, fresh.id, { content: 'in the new channel' });

    // The bot left the guild: its channels answer Missing Access.
    si.removeGuild(guild.id);
    expect((await apiError(post(r, fresh.id, { content: 'gone' }))).code).toBe(50001);
  });

  it('serves what a bot reads to explain a permission problem: channel overwrites, roles, its member', async () => {
    const hidden = makeTextChannel({ name: 'hidden' });
    const guild = makeGuild({ channels: ['general', hidden] });
    guild.channels[1]!.permission_overwrites = [
      { id: guild.id, type: 0, allow: '0', deny: PermissionFlagsBits.ViewChannel.toString() },
    ];
    const si = await start({ guilds: [guild] });
    const client = await session.connect(si);
    const g = client.guilds.cache.get(guild.id)!;
    const general = guild.channels[0]!.id;

    const fetched = await client.channels.fetch(general, { force: true });
    expect(fetched?.id).toBe(general);
    const me = await g.members.fetchMe({ force: true });
    const botRole = botRoleOf(si.guilds.get(guild.id)!, si.botUser.id)!;
    expect(me.roles.cache.has(botRole.id)).toBe(true);
    const roles = await g.roles.fetch(undefined, { force: true });
    expect([...roles.keys()].sort()).toEqual([guild.id, botRole.id].sort());
    // discord.js computes the same as the stand-in from what it fetched.
    const text = g.channels.cache.get(general)!;
    expect(text.permissionsFor(me).has(PermissionFlagsBits.SendMessages)).toBe(true);
    const hiddenChannel = g.channels.cache.get(hidden.id)!;
    expect(hiddenChannel.permissionsFor(me).has(PermissionFlagsBits.ViewChannel)).toBe(false);
    // Reading a channel the bot cannot see: Missing Access, as on Discord.
    await expect(client.channels.fetch(hidden.id, { force: true })).rejects.toMatchObject({ code: 50001 });
    await expect(g.members.fetch({ user: '123456789012345678', force: true })).rejects.toMatchObject({
      code: 10007,
    });
  });
});

describe('failing and holding posts', () => {
  it('fails the next posts with a status and code; discord.js retries a 500 and waits out a 429', async () => {
    const { guild, general } = guildWithChannels();
    const si = await start({ guilds: [guild] });
    const paths = () =>
      si.requests.filter((q) => q.path === `/channels/${general}/messages`).map((q) => q.status);

    si.failPosts(general, { status: 403, code: 50013 });
    const refused = await apiError(post(rest(si), general, { content: 'x' }));
    expect(refused).toMatchObject({ status: 403, code: 50013, message: 'Missing Permissions' });

    // discord.js's default: 3 retries of a 5xx.
    si.failPosts(general, { status: 500, times: 2 });
    const retried = await post(rest(si, 3), general, { content: 'after two 500s' });
    expect(retried.content).toBe('after two 500s');

    si.failPosts(general, { status: 429, retryAfter: 0.3 });
    const started = performance.now();
    await post(rest(si), general, { content: 'after a 429' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(paths()).toEqual([403, 500, 500, 200, 429, 200]);
    const limited = si.requests.find((q) => q.status === 429)!;
    expect(limited.response).toMatchObject({ retry_after: 0.3, global: false });
    expect(si.channelMessages(general).map((m) => m.content)).toEqual(['after two 500s', 'after a 429']);
  });

  it('holds a post until the test completes or drops it, even after the client went away', async () => {
    const { guild, general } = guildWithChannels();
    const si = await start({ guilds: [guild] });
    const r = rest(si);
    si.holdPosts(general);

    // Completed while the client waits: it gets the message.
    const pending = post(r, general, { content: 'held', nonce: 'h-1', enforce_nonce: true });
    const held = await si.waitForHeldPost(general);
    expect(held).toMatchObject({ channelId: general, clientGone: false, settled: false });
    expect(held.body).toMatchObject({ content: 'held' });
    expect(si.channelMessages(general)).toEqual([]);
    const recorded = await held.complete();
    expect(recorded.status).toBe(200);
    expect((await pending).content).toBe('held');
    expect(held.settled).toBe(true);

    // Dropped: the client sees its connection closed, and no message exists.
    const dropped = post(r, general, { content: 'lost' });
    const toDrop = await si.waitForHeldPost(general);
    expect((await toDrop.drop()).status).toBe(0);
    await expect(dropped).rejects.toThrow();

    // The client goes away (a killed bot); completing it still creates the message, without a crash.
    const controller = new AbortController();
    const orphan = request(`${si.restUrl}/v10/channels/${general}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${si.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'sent by a dead bot', nonce: 'h-2', enforce_nonce: true }),
      signal: controller.signal,
    }).catch((e: unknown) => e);
    const abandoned = await si.waitForHeldPost(general);
    controller.abort();
    await orphan;
    for (let i = 0; i < 50 && !abandoned.clientGone; i++) await sleep(10);
    expect(abandoned.clientGone).toBe(true);
    expect((await abandoned.complete()).status).toBe(200);
    // The bot, restarted, sends it again with the same nonce: Discord hands back that message.
    await si.releasePosts(general);
    const again = await post(r, general, {
      content: 'sent by a dead bot',
      nonce: 'h-2',
      enforce_nonce: true,
    });
    expect(si.channelMessages(general).map((m) => m.content)).toEqual(['held', 'sent by a dead bot']);
    expect(again.id).toBe(si.channelMessages(general)[1]!.id);

    // Held posts left at close are dropped, and close() does not hang on them.
    si.holdPosts(general);
    const last = post(r, general, { content: 'never' }).catch((e: unknown) => e);
    await si.waitForHeldPost(general);
    expect(si.heldPosts()).toHaveLength(1);
    await si.close();
    session.closed();
    expect(await last).toBeInstanceOf(Error);
  });
});
