/**
 * The caches turned off in discord-client.ts (channels and roles), end to end: discord.js keeps
 * none, the gateway events about them go through discord.js's own handlers without an error and
 * the bot answers after them, the channel a leave report names follows the gateway, and /up
 * names the channel it was used in whatever its kind.
 */
import { ChannelType, Events } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ChannelKind,
  channelPayload,
  type GuildFixture,
  makeGuild,
  makeRole,
  makeTextChannel,
  type RecordedRestRequest,
  restGuildPayload,
  snowflake,
} from '../discord/index.js';
import type { RecordedRequest } from '../emulator/index.js';
import { itLeavesNoTrace } from './expectations.js';
import { type Harness, LEVEL, startHarness } from './harness.js';

const welcome = makeTextChannel({ name: 'welcome', position: 0 });
const offTopic = makeTextChannel({ name: 'off-topic', position: 1 });
const lounge = makeTextChannel({ name: 'Lounge', type: ChannelKind.GuildVoice, position: 0 });
const stage = makeTextChannel({ name: 'Town Hall', type: 13, position: 1 });
/** The guild the events are about: system channel #welcome, then #off-topic, a voice and a stage channel. */
const busy = makeGuild({
  name: 'Busy Guild',
  channels: [welcome, offTopic, lounge, stage],
  roles: [makeRole({ name: 'Moderator', position: 2, permissions: '8' })],
});
/** Left after its system channel was renamed. */
const renamed = makeGuild({ name: 'Renamed Guild', channels: ['hello', 'chat'] });
/** Left after its system channel was unset and its first text channel deleted. */
const shrunk = makeGuild({ name: 'Shrunk Guild', channels: ['first', 'second', 'third'] });

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ guilds: [busy, renamed, shrunk] });
});
afterAll(async () => {
  await h?.close();
});

function dispatch(event: string, data: unknown): void {
  expect(h.discord.dispatch(0, event, data)).toBe('sent');
}

function fixture(id: string): GuildFixture {
  const guild = h.discord.guilds.get(id);
  if (!guild) throw new Error(`no guild ${id}`);
  return guild;
}

/** GUILD_UPDATE as Discord sends it: the guild without its GUILD_CREATE-only fields. */
function guildUpdate(guild: GuildFixture, changes: Record<string, unknown>): Record<string, unknown> {
  return { ...restGuildPayload(guild, false), ...changes };
}

async function leaveReport(guildId: string): Promise<Record<string, unknown>> {
  h.discord.removeGuild(guildId);
  const deadline = Date.now() + 5_000;
  for (;;) {
    const post = h.emu.requests.find(
      (r: RecordedRequest) =>
        r.method === 'POST' && r.path === '/v2/server' && r.status !== 0 && r.body?.includes(guildId),
    );
    if (post) return JSON.parse(post.body ?? '{}') as Record<string, unknown>;
    if (Date.now() > deadline) throw new Error(`no leave report for ${guildId}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const serious = () => h.entries().filter((e) => e.level >= LEVEL.warn);

describe('channels and roles discord.js does not cache', () => {
  it('discord.js keeps no channel and no role, and interaction.channel is null', async () => {
    const client = h.bot.client;
    expect(client.guilds.cache.size).toBe(3);
    expect(client.channels.cache.size).toBe(0);
    const guild = client.guilds.cache.get(busy.id);
    expect(guild?.channels.cache.size).toBe(0);
    expect(guild?.roles.cache.size).toBe(0);
    expect(guild?.systemChannel).toBeNull();
    const seen = new Promise<unknown>((resolve) =>
      client.once(Events.InteractionCreate, (interaction) => resolve(interaction.channel)),
    );
    const answer = await h.run({ guildId: busy.id, channelId: welcome.id, name: 'up' });
    expect(answer.outcome).toBe('success');
    expect(await seen).toBeNull();
    // What ChannelNames keeps instead: one entry per guild.
    expect(h.bot.channels.guildCount).toBe(3);
  });

  it('channel, thread, role and stage events go through discord.js without an error; the bot answers after them', async () => {
    const client = h.bot.client;
    const emitted: string[] = [];
    const record = (name: string) => () => emitted.push(name);
    const events = [
      Events.ChannelCreate,
      Events.ChannelUpdate,
      Events.ChannelDelete,
      Events.ThreadCreate,
      Events.ThreadListSync,
      Events.GuildRoleCreate,
      Events.GuildUpdate,
    ] as const;
    const listeners = events.map((event) => [event, record(event)] as const);
    for (const [event, listener] of listeners) client.on(event, listener);
    const before = serious().length;
    try {
      const guildId = busy.id;
      const created = makeTextChannel({ name: 'created', position: 2 });
      const thread = {
        ...channelPayload(makeTextChannel({ name: 'a thread', type: ChannelType.PublicThread }), guildId),
        parent_id: offTopic.id,
        owner_id: h.discord.botUser.id,
        member_count: 1,
        message_count: 0,
        thread_metadata: {
          archived: false,
          auto_archive_duration: 1440,
          locked: false,
          archive_timestamp: '2026-01-01T00:00:00.000Z',
        },
      };
      const role = makeRole({ name: 'Fresh', position: 3 });
      dispatch('CHANNEL_CREATE', channelPayload(created, guildId));
      dispatch('CHANNEL_UPDATE', channelPayload({ ...offTopic, name: 'chatter', topic: 'renamed' }, guildId));
      dispatch(
        'CHANNEL_UPDATE',
        channelPayload({ ...created, type: ChannelKind.GuildAnnouncement }, guildId),
      );
      dispatch('CHANNEL_PINS_UPDATE', {
        guild_id: guildId,
        channel_id: offTopic.id,
        last_pin_timestamp: null,
      });
      dispatch('THREAD_CREATE', { ...thread, newly_created: true });
      dispatch('THREAD_UPDATE', { ...thread, name: 'the thread' });
      dispatch('THREAD_LIST_SYNC', {
        guild_id: guildId,
        channel_ids: [offTopic.id],
        threads: [thread],
        members: [],
      });
      dispatch('THREAD_MEMBERS_UPDATE', {
        id: thread.id,
        guild_id: guildId,
        member_count: 2,
        added_members: [],
      });
      dispatch('THREAD_MEMBER_UPDATE', {
        id: thread.id,
        guild_id: guildId,
        user_id: h.discord.botUser.id,
        join_timestamp: '2026-01-01T00:00:00.000Z',
        flags: 0,
      });
      dispatch('THREAD_DELETE', {
        id: thread.id,
        guild_id: guildId,
        parent_id: offTopic.id,
        type: ChannelType.PublicThread,
      });
      dispatch('GUILD_ROLE_CREATE', { guild_id: guildId, role });
      dispatch('GUILD_ROLE_UPDATE', { guild_id: guildId, role: { ...role, name: 'Fresher' } });
      dispatch('GUILD_ROLE_DELETE', { guild_id: guildId, role_id: role.id });
      const stageInstance = {
        id: snowflake(),
        guild_id: guildId,
        channel_id: stage.id,
        topic: 'Talk',
        privacy_level: 2,
        discoverable_disabled: false,
        guild_scheduled_event_id: null,
      };
      dispatch('STAGE_INSTANCE_CREATE', stageInstance);
      dispatch('STAGE_INSTANCE_UPDATE', { ...stageInstance, topic: 'More talk' });
      dispatch('STAGE_INSTANCE_DELETE', stageInstance);
      dispatch('GUILD_UPDATE', guildUpdate(fixture(guildId), { name: 'Busier Guild' }));
      dispatch('CHANNEL_DELETE', channelPayload(created, guildId));
      // The interaction comes after every event on the same socket: once it is answered, discord.js
      // has handled them all.
      const answer = await h.run({ guildId, channelId: welcome.id, name: 'up' });
      expect(answer.outcome).not.toMatch(/^error/);
    } finally {
      for (const [event, listener] of listeners) client.off(event, listener);
    }
    expect(serious().slice(before)).toEqual([]);
    expect(h.unhandled).toEqual([]);
    // discord.js handled them (what it cannot emit without a cached object is documented in discord-client.ts).
    expect(new Set(emitted)).toEqual(
      new Set([
        Events.ChannelCreate,
        Events.ThreadCreate,
        Events.ThreadListSync,
        Events.GuildRoleCreate,
        Events.GuildUpdate,
      ]),
    );
    expect(client.guilds.cache.get(busy.id)?.name).toBe('Busier Guild');
    expect(client.channels.cache.size).toBe(0);
  });

  it('/up names the channel it was used in, from the interaction, whatever its kind', async () => {
    h.reset();
    const answer = await h.run({
      guildId: busy.id,
      channelId: lounge.id,
      name: 'up',
      user: { id: snowflake(), username: 'voice_user' },
    });
    expect(answer.outcome).not.toMatch(/^error/);
    const post = h.emu.requests.find((r) => r.method === 'POST' && r.path === '/v2/server');
    expect(JSON.parse(post?.body ?? '{}')).toMatchObject({
      serverID: busy.id,
      upChannelID: lounge.id,
      upChannelName: 'Lounge',
    });
  });
});

describe('the channel a leave report names follows the gateway', () => {
  it('a renamed system channel is named as it is now', async () => {
    h.reset();
    const hello = fixture(renamed.id).channels[0];
    if (!hello) throw new Error('no channel');
    dispatch('CHANNEL_UPDATE', channelPayload({ ...hello, name: 'hello-there' }, renamed.id));
    const body = await leaveReport(renamed.id);
    expect(body).toMatchObject({
      serverID: renamed.id,
      status: 0,
      upChannelID: hello.id,
      upChannelName: 'hello-there',
    });
  });

  it('without a system channel, the first text channel that is still there', async () => {
    h.reset();
    const [first, second] = fixture(shrunk.id).channels;
    if (!first || !second) throw new Error('no channels');
    dispatch('GUILD_UPDATE', guildUpdate(fixture(shrunk.id), { system_channel_id: null }));
    dispatch('CHANNEL_DELETE', channelPayload(first, shrunk.id));
    const body = await leaveReport(shrunk.id);
    expect(body).toMatchObject({
      serverID: shrunk.id,
      status: 0,
      upChannelID: second.id,
      upChannelName: 'second',
    });
  });

  it('a guild left is forgotten', async () => {
    h.reset();
    await leaveReport(busy.id);
    expect(h.bot.channels.guildCount).toBe(0);
    expect(h.bot.channels.reportChannel(busy.id)).toBeUndefined();
    const sent: RecordedRestRequest[] = h.discord.requests.filter(
      (r) => r.method !== 'GET' && r.path.startsWith('/channels/'),
    );
    expect(sent).toEqual([]);
  });
});

itLeavesNoTrace(() => h);
