// The bot's own messages (src/discord/messages.ts: postMessage, sendDirectMessage) through
// discord.js's REST client, on the bot's REST agent, against the Discord stand-in: each failure
// Discord answers is sorted into what admins can fix and what trying again may fix, 429s are
// waited out, and a nonce sent twice gives one message.

import { PermissionFlagsBits, REST, type RESTOptions } from 'discord.js';
import type { Dispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postMessage, sendDirectMessage } from '../../src/discord/messages.js';
import { createDiscordRestAgent } from '../../src/gateway/rest-agent.js';
import {
  botRoleOf,
  type DiscordStandIn,
  type GuildFixture,
  makeGuild,
  makeUser,
  startDiscordStandIn,
  type UserFixture,
} from './index.js';

let si: DiscordStandIn;
let agent: Dispatcher;
let guild: GuildFixture;
let channelId: string;
const friend: UserFixture = makeUser({ username: 'friend' });
const secluded: UserFixture = makeUser({ username: 'secluded', dmsClosed: true });

beforeEach(async () => {
  guild = makeGuild({ channels: ['reminders'] });
  channelId = guild.channels[0]!.id;
  si = await startDiscordStandIn({ guilds: [guild], users: [friend, secluded] });
  agent = createDiscordRestAgent();
});

afterEach(async () => {
  await si.close();
  await agent.close();
});

/** discord.js's REST client as the bot's Client makes it: its defaults (3 retries, 15 s), the bot's agent. */
function rest(options: Partial<RESTOptions> = {}): REST {
  return new REST({
    api: si.restUrl,
    agent: agent as unknown as RESTOptions['agent'],
    ...options,
  }).setToken(si.token);
}

const reminder = {
  content: 'The server can be raised again: </up:123456789012345678>',
  allowedMentions: { parse: [] as [] },
};

describe('postMessage', () => {
  it('posts with the allowed_mentions given, and a nonce with enforce_nonce: one message for two posts', async () => {
    const r = rest();
    const role = si.addRole(guild.id, { name: 'Bumpers', mentionable: true });
    const message = {
      content: `<@&${role.id}> the server can be raised again`,
      allowedMentions: { parse: [] as [], roles: [role.id] },
      nonce: 'reminder-1-1700000000',
    };
    const first = await postMessage(r, channelId, message);
    const second = await postMessage(r, channelId, message);
    expect(first).toEqual({ ok: true, messageId: expect.stringMatching(/^\d+$/) });
    expect(second).toEqual(first);
    const [posted, ...more] = si.channelMessages(channelId);
    expect(more).toEqual([]);
    expect(posted).toMatchObject({
      id: first.ok ? first.messageId : '',
      allowedMentions: { parse: [], roles: [role.id] },
      nonce: 'reminder-1-1700000000',
      enforceNonce: true,
      pings: { everyone: false, users: [], roles: [role.id] },
      repeats: 1,
    });

    // Without a nonce, no enforce_nonce either: each post is a message.
    await postMessage(r, channelId, reminder);
    await postMessage(r, channelId, reminder);
    const loose = si.channelMessages(channelId).slice(1);
    expect(loose).toHaveLength(2);
    expect(loose[0]!.body).toEqual({ content: reminder.content, allowed_mentions: { parse: [] } });
  });

  it('sorts what Discord refuses into what admins can fix', async () => {
    const r = rest();
    const botRole = botRoleOf(si.guilds.get(guild.id)!, si.botUser.id)!;
    const post = (message = reminder) => postMessage(r, channelId, message);

    expect(await postMessage(r, '123456789012345678', reminder)).toEqual({
      ok: false,
      failure: { kind: 'channel-deleted', code: 10003 },
    });

    si.setChannelOverwrites(channelId, [
      { id: guild.id, type: 'role', deny: PermissionFlagsBits.ViewChannel },
    ]);
    expect(await post()).toEqual({ ok: false, failure: { kind: 'missing-access', code: 50001 } });

    si.setChannelOverwrites(channelId, [
      { id: botRole.id, type: 'role', deny: PermissionFlagsBits.SendMessages },
    ]);
    expect(await post()).toEqual({ ok: false, failure: { kind: 'missing-permission', code: 50013 } });

    // Embed Links missing: the text goes, the embed does not.
    si.setChannelOverwrites(channelId, [
      { id: guild.id, type: 'role', deny: PermissionFlagsBits.EmbedLinks },
    ]);
    si.setRolePermissions(
      guild.id,
      botRole.id,
      PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages,
    );
    expect((await post()).ok).toBe(true);
    const withEmbed = { ...reminder, embeds: [{ description: 'next up: <t:1700000000:R>' }] };
    expect(await post(withEmbed)).toEqual({
      ok: false,
      failure: { kind: 'missing-permission', code: 50013 },
    });

    si.deleteChannel(channelId);
    expect(await post()).toEqual({ ok: false, failure: { kind: 'channel-deleted', code: 10003 } });

    // A refusal nobody can fix by granting something: rejected, with its code.
    const other = si.addChannel(guild.id, { name: 'other' });
    const tooLong = await postMessage(r, other.id, { ...reminder, content: 'x'.repeat(2001) });
    expect(tooLong).toEqual({ ok: false, failure: { kind: 'rejected', code: 50035, status: 400 } });
    expect(si.postedMessages()).toHaveLength(1);
  });

  it('waits out a 429 and a 500 discord.js retries; reports a 5xx that lasts, a timeout, a lost connection', async () => {
    si.failPosts(channelId, { status: 429, retryAfter: 0.4 });
    const started = performance.now();
    expect((await postMessage(rest(), channelId, reminder)).ok).toBe(true);
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);

    si.failPosts(channelId, { status: 503, times: 1 });
    expect((await postMessage(rest(), channelId, reminder)).ok).toBe(true);

    // More 500s than discord.js's 3 retries.
    si.failPosts(channelId, { status: 500, times: 4 });
    expect(await postMessage(rest(), channelId, reminder)).toEqual({
      ok: false,
      failure: { kind: 'transient', status: 500 },
    });

    // No answer within discord.js's timeout; then the connection lost.
    si.holdPosts(channelId);
    expect(await postMessage(rest({ timeout: 150, retries: 0 }), channelId, reminder)).toEqual({
      ok: false,
      failure: { kind: 'transient' },
    });
    for (const held of si.heldPosts(channelId)) await held.drop();
    const lost = postMessage(rest({ retries: 0 }), channelId, reminder);
    await (await si.waitForHeldPost(channelId)).drop();
    expect(await lost).toEqual({ ok: false, failure: { kind: 'transient' } });
    await si.releasePosts(channelId);
    expect(si.channelMessages(channelId)).toHaveLength(2);
  });
});

describe('sendDirectMessage', () => {
  it('opens the DM channel and posts there, with the nonce deduplicated', async () => {
    const r = rest();
    const message = {
      content: 'Your server can be raised again',
      allowedMentions: { parse: [] as [] },
      nonce: 'dm-7',
    };
    const first = await sendDirectMessage(r, friend.id, message);
    const second = await sendDirectMessage(r, friend.id, message);
    expect(first.ok).toBe(true);
    expect(second).toEqual(first);
    expect(si.dmMessages(friend.id)).toMatchObject([
      { recipientId: friend.id, channelId: si.dmChannelId(friend.id), nonce: 'dm-7', repeats: 1 },
    ]);
  });

  it('reports closed DMs (50007) and an unknown user (10013) as DMs closed', async () => {
    const r = rest();
    expect(await sendDirectMessage(r, secluded.id, reminder)).toEqual({
      ok: false,
      failure: { kind: 'dms-closed', code: 50007 },
    });
    expect(await sendDirectMessage(r, '123456789012345678', reminder)).toEqual({
      ok: false,
      failure: { kind: 'dms-closed', code: 10013 },
    });
    si.setDmsClosed(secluded.id, false);
    expect((await sendDirectMessage(r, secluded.id, reminder)).ok).toBe(true);
    expect(si.dmMessages(secluded.id)).toHaveLength(1);
  });
});
