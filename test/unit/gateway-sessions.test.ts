/**
 * What a gateway session keeps of the bot's guilds, and when (src/gateway/gateway-sessions.ts,
 * src/gateway/guild-snapshot.ts), without a gateway: a guild written as a packet reads back in
 * another client as the bot knew it; the saves carry the session with exactly the guilds that
 * changed since the last one (all of them for a new session), keep what a failed save had for
 * the next, and stop at close; a restored session gives discord.js a READY and its guilds, marked
 * as restored, and an identify after it says which restored guilds are gone.
 */
import type { SessionInfo } from '@discordjs/ws';
import type { Client, Guild } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { ChannelNames } from '../../src/gateway/channel-names.js';
import { createDiscordClient } from '../../src/gateway/client.js';
import { GatewaySessions, RESTORED } from '../../src/gateway/gateway-sessions.js';
import { guildPacket } from '../../src/gateway/guild-snapshot.js';
import { createLogger } from '../../src/log/logger.js';
import type { GatewaySave, GatewaySnapshot } from '../../src/store/index.js';

const logger = createLogger({ level: 'silent' });
const BOT = { id: '900000000000000001', username: 'bot', discriminator: '0', avatar: null };

function guildCreate(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    name: `Guild ${id}`,
    icon: 'a1b2c3',
    owner_id: '800000000000000001',
    member_count: 1234,
    preferred_locale: 'ru',
    features: ['COMMUNITY'],
    joined_at: '2026-01-02T03:04:05.000Z',
    system_channel_id: `${id}2`,
    channels: [
      { id: `${id}1`, name: 'general', type: 0 },
      { id: `${id}2`, name: 'welcome', type: 0 },
      { id: `${id}3`, name: 'news', type: 5 },
      { id: `${id}4`, name: 'voice', type: 2 },
    ],
    roles: [{ id, name: '@everyone', permissions: '0', position: 0 }],
    ...extra,
  };
}

/** A client (never logged in) with these guilds in its cache, as the gateway would have put them. */
function clientWith(guilds: Array<{ data: Record<string, unknown>; shardId: number }>): {
  client: Client;
  channels: ChannelNames;
} {
  const { client } = createDiscordClient({ shards: 2, apiUrl: 'http://127.0.0.1:9/api' });
  const channels = new ChannelNames();
  for (const { data, shardId } of guilds) add(client, channels, data, shardId);
  return { client, channels };
}

function add(client: Client, channels: ChannelNames, data: Record<string, unknown>, shardId: number): Guild {
  channels.handle('GUILD_CREATE', data);
  const manager = client.guilds as unknown as { _add(data: unknown): Guild };
  return manager._add({ ...data, shardId });
}

function session(sessionId: string, sequence: number, shardId = 0): SessionInfo {
  return { sessionId, sequence, resumeURL: 'wss://resume.example', shardId, shardCount: 2 };
}

class FakeRepository {
  saves: GatewaySave[][] = [];
  failNext = false;
  loaded = new Map<number, GatewaySnapshot>();
  async load(): Promise<Map<number, GatewaySnapshot>> {
    return this.loaded;
  }
  async save(saves: readonly GatewaySave[]): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('the store is away');
    }
    this.saves.push([...saves]);
  }
  last(): GatewaySave[] {
    return this.saves.at(-1) ?? [];
  }
}

describe('a guild as a packet', () => {
  it('reads back in another client as the bot knew it, channels included, and says nothing of roles', () => {
    const { client, channels } = clientWith([{ data: guildCreate('100000000000000001'), shardId: 1 }]);
    const guild = client.guilds.cache.get('100000000000000001') as Guild;
    const packet = guildPacket(guild, channels);
    expect(packet).not.toHaveProperty('roles');
    expect(packet).not.toHaveProperty('members');

    // As a restore gives it: the READY lists it unavailable, then its GUILD_CREATE comes.
    const again = clientWith([
      { data: { id: guild.id, unavailable: true }, shardId: 1 },
      { data: JSON.parse(JSON.stringify(packet)), shardId: 1 },
    ]);
    const restored = again.client.guilds.cache.get(guild.id) as Guild;
    for (const field of [
      'name',
      'icon',
      'ownerId',
      'memberCount',
      'preferredLocale',
      'features',
      'joinedTimestamp',
      'systemChannelId',
      'shardId',
      'available',
    ] as const)
      expect(restored[field], field).toEqual(guild[field]);
    expect(restored.iconURL()).toBe(guild.iconURL());
    expect(again.channels.reportChannel(guild.id)).toEqual({ id: `${guild.id}2`, name: 'welcome' });
    expect(again.channels.guildChannels(guild.id)).toEqual(channels.guildChannels(guild.id));
  });

  it('an unavailable guild is only its id, said unavailable', () => {
    const { client, channels } = clientWith([
      { data: { id: '100000000000000002', unavailable: true }, shardId: 0 },
    ]);
    const guild = client.guilds.cache.get('100000000000000002') as Guild;
    expect(guildPacket(guild, channels)).toEqual({ id: '100000000000000002', unavailable: true });
  });
});

describe('saving the sessions', () => {
  const G1 = '100000000000000011';
  const G2 = '100000000000000012';
  const G3 = '100000000000000013';

  function keeper() {
    const world = clientWith([
      { data: guildCreate(G1), shardId: 0 },
      { data: guildCreate(G2), shardId: 0 },
      { data: guildCreate(G3), shardId: 1 },
    ]);
    const repository = new FakeRepository();
    const sessions = new GatewaySessions({
      repository,
      client: world.client,
      channels: world.channels,
      logger,
      now: () => 1_000,
      saveEveryMs: 3_600_000,
    });
    sessions.start();
    world.client.ws.emit('READY', { user: BOT, application: { id: BOT.id, flags: 0 } }, 0);
    return { ...world, repository, sessions };
  }

  it('a new session saves the shard with all its guilds, then only what changed, then nothing', async () => {
    const { client, repository, sessions } = keeper();
    sessions.update(0, session('s1', 5));
    await sessions.save();
    const [first] = repository.last();
    expect(first).toMatchObject({ shardId: 0, replace: true, gone: [] });
    expect(first?.session).toMatchObject({
      sessionId: 's1',
      sequence: 5,
      resumeUrl: 'wss://resume.example',
      savedAt: 1_000,
    });
    expect(JSON.parse(first?.session?.identity ?? '{}')).toEqual({
      user: BOT,
      application: { id: BOT.id, flags: 0 },
    });
    expect(first?.guilds.map((g) => g.guildId).sort()).toEqual([G1, G2]);

    await sessions.save();
    expect(repository.saves).toHaveLength(1);

    // A channel renamed in G1, a sequence further on.
    client.ws.emit('CHANNEL_UPDATE', { id: `${G1}1`, guild_id: G1, name: 'chat', type: 0 }, 0);
    sessions.update(0, session('s1', 9));
    await sessions.save();
    expect(repository.last()).toEqual([
      expect.objectContaining({
        shardId: 0,
        replace: false,
        gone: [],
        guilds: [expect.objectContaining({ guildId: G1 })],
      }),
    ]);
    expect(repository.last()[0]?.session?.sequence).toBe(9);

    // G2 left: gone from the cache, and from the snapshot.
    client.guilds.cache.delete(G2);
    client.ws.emit('GUILD_DELETE', { id: G2 }, 0);
    sessions.update(0, session('s1', 10));
    await sessions.save();
    expect(repository.last()).toEqual([expect.objectContaining({ replace: false, guilds: [], gone: [G2] })]);
  });

  it('a failed save leaves its changes to the next one; an invalid session is saved as none; close saves last', async () => {
    const { client, repository, sessions } = keeper();
    sessions.update(0, session('s1', 5));
    await sessions.save();
    client.ws.emit('GUILD_UPDATE', { id: G1, name: 'Renamed' }, 0);
    sessions.update(0, session('s1', 6));
    repository.failNext = true;
    await sessions.save();
    expect(repository.saves).toHaveLength(1);
    await sessions.save();
    expect(repository.last()).toEqual([
      expect.objectContaining({ replace: false, guilds: [expect.objectContaining({ guildId: G1 })] }),
    ]);

    sessions.update(0, null);
    await sessions.close();
    expect(repository.last()).toEqual([{ shardId: 0, session: null, replace: true, guilds: [], gone: [] }]);
    sessions.update(0, session('s2', 1));
    await sessions.save();
    expect(repository.saves).toHaveLength(3);
  });

  it('nothing is saved before a READY or a restore says who the bot is', async () => {
    const world = clientWith([{ data: guildCreate(G1), shardId: 0 }]);
    const repository = new FakeRepository();
    const sessions = new GatewaySessions({
      repository,
      client: world.client,
      channels: world.channels,
      logger,
    });
    sessions.update(0, session('s1', 5));
    await sessions.save();
    expect(repository.saves).toEqual([]);
  });
});

describe('restoring a session', () => {
  it('gives a READY listing every guild, then each guild, marked restored; an identify after it names the gone ones', async () => {
    const { client, channels } = clientWith([]);
    const repository = new FakeRepository();
    const G = '100000000000000021';
    const OUT = '100000000000000022';
    repository.loaded.set(1, {
      session: {
        shardId: 1,
        shardCount: 2,
        sessionId: 's9',
        sequence: 42,
        resumeUrl: 'wss://resume.example',
        identity: JSON.stringify({ user: BOT, application: { id: BOT.id, flags: 0 } }),
        savedAt: 900,
      },
      guilds: [JSON.stringify(guildCreate(G)), JSON.stringify({ id: OUT, unavailable: true }), 'not json'],
    });
    const sessions = new GatewaySessions({ repository, client, channels, logger, now: () => 1_000 });
    const restored = await sessions.restore([0, 1], 2);
    expect([...restored.keys()]).toEqual([1]);
    const shard = restored.get(1);
    expect(shard?.session).toEqual({
      sessionId: 's9',
      sequence: 42,
      resumeURL: 'wss://resume.example',
      shardId: 1,
      shardCount: 2,
    });
    expect(shard?.dispatches.map((d) => d.t)).toEqual(['READY', 'GUILD_CREATE', 'GUILD_DELETE']);
    expect(shard?.dispatches.every((d) => d.d[RESTORED] === true && d.s === 42)).toBe(true);
    expect(shard?.dispatches[0]?.d).toMatchObject({
      user: BOT,
      session_id: 's9',
      shard: [1, 2],
      guilds: [
        { id: G, unavailable: true },
        { id: OUT, unavailable: true },
      ],
    });
    expect(shard?.dispatches[2]?.d).toMatchObject({ id: OUT, unavailable: true });

    expect(sessions.identified(1, new Set([G])).map((d) => [d.t, d.d.id])).toEqual([['GUILD_DELETE', OUT]]);
    // Said once: a later identify has nothing restored left to end.
    expect(sessions.identified(1, new Set())).toEqual([]);
  });

  it('the expected shards are read from start() on, once; other shards are read when asked', async () => {
    const { client, channels } = clientWith([]);
    const asked: string[] = [];
    const sessions = new GatewaySessions({
      repository: {
        load: async (ids, count) => {
          asked.push(`${ids.join(',')}/${count}`);
          return new Map();
        },
        save: () => Promise.resolve(),
      },
      client,
      channels,
      logger,
      saveEveryMs: 3_600_000,
      expected: { shardIds: [1, 0], shardCount: 2 },
    });
    sessions.start();
    expect(asked).toEqual(['1,0/2']);
    await sessions.restore([0, 1], 2);
    expect(asked).toEqual(['1,0/2']);
    await sessions.restore([0, 1], 4);
    expect(asked).toEqual(['1,0/2', '0,1/4']);
    await sessions.close();
  });

  it('a store that cannot be read restores nothing (the shards identify)', async () => {
    const { client, channels } = clientWith([]);
    const sessions = new GatewaySessions({
      repository: {
        load: () => Promise.reject(new Error('down')),
        save: () => Promise.resolve(),
      },
      client,
      channels,
      logger,
    });
    expect((await sessions.restore([0], 1)).size).toBe(0);
  });
});
