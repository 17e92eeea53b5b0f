/**
 * Gateway sessions that outlive the process (store/gateway-sessions.ts), on both engines: a
 * shard's session and guilds come back as saved; only the shards asked for, with the same shard
 * count and young enough; a new session replaces the shard's guilds, an incremental save upserts
 * and deletes; a save list is all or nothing; tens of thousands of guilds fit in one save.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type GatewaySave,
  GatewaySessionRepository,
  type Store,
  type StoredGatewaySession,
  StoreError,
} from '../../src/store/index.js';
import { ENGINES, freshStore } from './places.js';

const T0 = 1_700_000_000_000;
const MAX_AGE = 60_000;
const IDENTITY = JSON.stringify({ user: { id: '1', username: 'bot' }, application: { id: '1', flags: 0 } });

const session = (shardId: number, more: Partial<StoredGatewaySession> = {}): StoredGatewaySession => ({
  shardId,
  shardCount: 4,
  sessionId: `session-${shardId}`,
  sequence: 42,
  resumeUrl: 'wss://gateway-us-east1-b.discord.gg',
  identity: IDENTITY,
  savedAt: T0,
  ...more,
});

const guild = (id: string, name = `guild ${id}`) => ({ guildId: id, packet: JSON.stringify({ id, name }) });

const fresh = (
  shardId: number,
  guilds: ReturnType<typeof guild>[],
  more: Partial<StoredGatewaySession> = {},
) => ({ shardId, session: session(shardId, more), replace: true, guilds, gone: [] }) satisfies GatewaySave;

const ids = (packets: string[] | undefined) =>
  (packets ?? []).map((p) => (JSON.parse(p) as { id: string }).id).sort();

describe.each(ENGINES)('gateway sessions (%s)', (engine) => {
  let store: Store;
  let done: () => Promise<void>;
  let sessions: GatewaySessionRepository;

  beforeEach(async () => {
    ({ store, done } = await freshStore(engine));
    sessions = new GatewaySessionRepository(store);
  });
  afterEach(() => done());

  const load = (shardIds: number[] = [0, 1, 2, 3], now = T0) => sessions.load(shardIds, 4, MAX_AGE, now);

  it('gives back the session and guilds as saved', async () => {
    const guilds = [guild('10', 'Ünïcode ✓'), guild('11'), guild('12')];
    await sessions.save([fresh(1, guilds)]);
    const loaded = await load();
    expect([...loaded.keys()]).toEqual([1]);
    expect(loaded.get(1)?.session).toEqual(session(1));
    expect([...(loaded.get(1)?.guilds ?? [])].sort()).toEqual(guilds.map((g) => g.packet).sort());
  });

  it('loads only the shards asked for, with this shard count, young enough; leaves the others', async () => {
    await sessions.save([
      fresh(0, [guild('10')]),
      fresh(1, [guild('11')], { savedAt: T0 - MAX_AGE }),
      fresh(2, [guild('12')], { savedAt: T0 - MAX_AGE - 1 }),
      fresh(3, [guild('13')], { shardCount: 8 }),
    ]);
    expect([...(await load([0, 1, 2, 3])).keys()].sort()).toEqual([0, 1]);
    expect([...(await load([1, 2, 3])).keys()]).toEqual([1]);
    expect((await load([])).size).toBe(0);
    const eight = await sessions.load([3], 8, MAX_AGE, T0);
    expect(ids(eight.get(3)?.guilds)).toEqual(['13']);
    // Not loaded is not deleted.
    expect(ids((await sessions.load([2], 4, MAX_AGE, T0 - 1)).get(2)?.guilds)).toEqual(['12']);
  });

  it('a new session replaces the shard’s guilds, not other shards’', async () => {
    await sessions.save([fresh(0, [guild('10'), guild('11')]), fresh(1, [guild('20'), guild('21')])]);
    await sessions.save([
      fresh(0, [guild('11', 'renamed'), guild('12')], { sessionId: 'again', sequence: 1 }),
    ]);
    const loaded = await load();
    expect(loaded.get(0)?.session).toMatchObject({ sessionId: 'again', sequence: 1 });
    expect(ids(loaded.get(0)?.guilds)).toEqual(['11', '12']);
    expect(loaded.get(0)?.guilds).toContain(guild('11', 'renamed').packet);
    expect(ids(loaded.get(1)?.guilds)).toEqual(['20', '21']);
  });

  it('an incremental save upserts its guilds and deletes the gone ones', async () => {
    await sessions.save([fresh(0, [guild('10'), guild('11'), guild('12')])]);
    await sessions.save([
      {
        shardId: 0,
        session: session(0, { sequence: 99, savedAt: T0 + 5 }),
        replace: false,
        guilds: [guild('11', 'renamed'), guild('13')],
        gone: ['12', 'never-there'],
      },
    ]);
    const loaded = await load([0], T0 + 5);
    expect(loaded.get(0)?.session).toEqual(session(0, { sequence: 99, savedAt: T0 + 5 }));
    expect(ids(loaded.get(0)?.guilds)).toEqual(['10', '11', '13']);
    expect(loaded.get(0)?.guilds).toContain(guild('11', 'renamed').packet);
  });

  it('a guild moves from one shard to another', async () => {
    await sessions.save([fresh(0, [guild('10'), guild('11')]), fresh(1, [guild('20')])]);
    await sessions.save([
      {
        shardId: 1,
        session: session(1, { sequence: 50 }),
        replace: false,
        guilds: [guild('11', 'moved')],
        gone: [],
      },
    ]);
    let loaded = await load();
    expect(ids(loaded.get(0)?.guilds)).toEqual(['10']);
    expect(ids(loaded.get(1)?.guilds)).toEqual(['11', '20']);
    // Shard 0 saying it lost the guild after the move does not take it from shard 1.
    await sessions.save([{ shardId: 0, session: session(0), replace: false, guilds: [], gone: ['11'] }]);
    loaded = await load();
    expect(ids(loaded.get(1)?.guilds)).toEqual(['11', '20']);
  });

  it('no session deletes the shard’s session and guilds, and only its own', async () => {
    await sessions.save([fresh(0, [guild('10')]), fresh(1, [guild('20')])]);
    await sessions.save([{ shardId: 0, session: null, replace: false, guilds: [guild('99')], gone: [] }]);
    const loaded = await load();
    expect([...loaded.keys()]).toEqual([1]);
    expect(ids(loaded.get(1)?.guilds)).toEqual(['20']);
    const left = await store.run((db) => db.selectFrom('gateway_guilds').select('guild_id').execute());
    expect(left.map((r) => r.guild_id)).toEqual(['20']);
  });

  it('a save list is all or nothing', async () => {
    await sessions.save([fresh(1, [guild('20')])]);
    const failing = sessions.save([
      fresh(0, [guild('10')]),
      { shardId: 1, session: null, replace: false, guilds: [], gone: [] },
      fresh(2, [{ guildId: '30', packet: null as never }]),
    ]);
    await expect(failing).rejects.toBeInstanceOf(StoreError);
    const loaded = await load();
    expect([...loaded.keys()]).toEqual([1]);
    expect(ids(loaded.get(1)?.guilds)).toEqual(['20']);
    const guilds = await store.run((db) => db.selectFrom('gateway_guilds').select('guild_id').execute());
    expect(guilds.map((r) => r.guild_id)).toEqual(['20']);
  });

  it('saves and loads 22,000 guilds in one save (past both engines’ bound-value limits unchunked)', async () => {
    const many = Array.from({ length: 22_000 }, (_, i) =>
      guild(String(100_000_000_000_000_000n + BigInt(i))),
    );
    await sessions.save([fresh(0, many)]);
    const loaded = await load([0]);
    expect(loaded.get(0)?.guilds).toHaveLength(22_000);
    expect(ids(loaded.get(0)?.guilds)).toEqual(many.map((g) => g.guildId).sort());
    // And replaced by a new session in one save too.
    await sessions.save([fresh(0, many.slice(11_000), { sessionId: 'again' })]);
    expect((await load([0])).get(0)?.guilds).toHaveLength(11_000);
  });

  it('keeps sequences above 2^31 as numbers', async () => {
    const sequence = 2 ** 31 + 12_345;
    await sessions.save([fresh(0, [], { sequence }), fresh(1, [], { sequence: 2 ** 40 })]);
    const loaded = await load();
    expect(loaded.get(0)?.session.sequence).toBe(sequence);
    expect(loaded.get(1)?.session.sequence).toBe(2 ** 40);
    expect(typeof loaded.get(0)?.session.savedAt).toBe('number');
    expect(loaded.get(0)?.guilds).toEqual([]);
  });
});
