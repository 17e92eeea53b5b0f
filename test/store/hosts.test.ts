/**
 * Several hosts on one PostgreSQL (src/hosts/hosts.ts): each host's shards claimed and written,
 * the statistics read from every host's numbers, and one leader with a fencing token. Each host
 * here has a store (a connection pool) of its own on one schema, as separate machines would; the
 * lease and the staleness are scaled down to a second or two.
 */
import { describe, expect, it } from 'vitest';
import type { ShardState, ShardView } from '../../src/gateway/shard-stats.js';
import { adoptOrphanedUps, hostJournalOwner } from '../../src/hosts/adopt.js';
import { Host, type HostOptions } from '../../src/hosts/hosts.js';
import { HostRepository } from '../../src/hosts/store.js';
import { createLogger } from '../../src/log/logger.js';
import { openStore, StoreError, StoreUpJournal } from '../../src/store/index.js';
import type { StatsGate } from '../../src/tasks/stats-poster.js';
import { inspectSnapshot } from '../../src/tasks/stats-snapshot.js';
import { HAS_POSTGRES } from '../support/postgres.js';
import { type Place, perTest } from './places.js';

const logger = createLogger({ level: 'silent' });
const { place, undo } = perTest();

/** What a host's Discord client shows: its shards, ready, with some guilds each. */
function localShards(ids: readonly number[], ready = true): ShardView {
  const shards: ShardState[] = ids.map((id) => ({
    id,
    ready,
    guilds: 10 + id,
    members: 100 * (id + 1),
    ping: 40,
  }));
  return {
    snapshot: () => ({ expectedShards: 6, shards }),
    latest: () => ({ snapshot: { expectedShards: 6, shards }, connected: true, guilds: shards.length }),
  };
}

async function hostOn(
  where: Place,
  id: string,
  shardIds: number[],
  options: Partial<HostOptions> = {},
): Promise<Host> {
  const store = await openStore(where.options);
  undo(() => store.close());
  return new Host({
    store,
    host: id,
    shardIds,
    shardCount: 6,
    local: localShards(shardIds),
    logger,
    statsIntervalMs: 1_500,
    staleMs: 1_500,
    leaseMs: 1_000,
    ...options,
  });
}

/** The shards' table as any process of the bot sees it. */
async function repositoryOn(where: Place): Promise<HostRepository> {
  const store = await openStore(where.options);
  undo(() => store.close());
  return new HostRepository(store);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!HAS_POSTGRES)('hosts of one bot on PostgreSQL', () => {
  it('claims each host its own shards, and refuses one that overlaps a live host or counts differently', async () => {
    const where = await place();
    const a = await hostOn(where, 'a', [0, 1]);
    await a.claim();
    await a.write();
    // The hosts refused judge host a alive by a staleness far longer than a loaded machine's pauses
    // (a pool opened, a claim made): with 1.5 s, b once found a already stale and took shard 1.
    const b = await hostOn(where, 'b', [1, 2], { staleMs: 30_000 });
    const refused = await b.claim().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as Error).message).toMatch(
      /^This host \(b\) may not run shards 1,2: shard 1 is run by host a \(seen \d+ s ago\)\. Give each host its own SHARD_IDS/,
    );
    const eight = await hostOn(where, 'c', [4, 5], { shardCount: 8, staleMs: 30_000 });
    await expect(eight.claim()).rejects.toThrow(/host a runs shard 0 of SHARD_COUNT=6/);
    await (await hostOn(where, 'b', [2, 3])).claim();
    // A host that stopped gives its shards up at once; one that died, once they are stale.
    await a.stop();
    await (await hostOn(where, 'd', [0])).claim();
    const e = await hostOn(where, 'e', [4, 5]);
    await e.claim();
    await e.write();
    await sleep(1_600);
    await (await hostOn(where, 'f', [4, 5])).claim();
  });

  it('counts every shard from the store for the statistics, and nothing while one is stale or missing', async () => {
    const where = await place();
    const hosts = await Promise.all([
      hostOn(where, 'a', [0, 1]),
      hostOn(where, 'b', [2, 3]),
      hostOn(where, 'c', [4, 5], { local: localShards([4, 5], false) }),
    ]);
    for (const host of hosts) {
      await host.claim();
      await host.write();
    }
    const view = hosts[0]!.view();
    // Shard 4 and 5 are not ready yet.
    expect(inspectSnapshot(await view.snapshot())).toMatchObject({ kind: 'not-ready', notReady: [4, 5] });
    // The same process of c (its instance), its shards now ready.
    const ready = await hostOn(where, 'c', [4, 5], { instance: hosts[2]!.instance });
    await ready.write();
    expect(inspectSnapshot(await view.snapshot())).toEqual({
      kind: 'ready',
      totals: { servers: 10 * 6 + 15, shards: 6, users: 100 * 21 },
    });
    // Readiness and metrics stay each host's own: two shards, both expected.
    expect(view.latest().snapshot.expectedShards).toBe(2);
    expect(view.latest().snapshot.shards.map((s) => s.id)).toEqual([0, 1]);
    // Host b stops writing (it died): after the staleness, its shards count as missing.
    await sleep(1_600);
    await hosts[0]!.write();
    await ready.write();
    expect(inspectSnapshot(await view.snapshot())).toMatchObject({ kind: 'not-ready', missing: [2, 3] });
  });

  it('lets one host lead, one post per interval whoever leads, and fences a leader that froze', async () => {
    const where = await place();
    const a = await hostOn(where, 'a', [0, 1, 2]);
    const b = await hostOn(where, 'b', [3, 4, 5]);
    await a.renew();
    await b.renew();
    expect([a.leading, b.leading]).toEqual([true, false]);
    expect(await b.gate(0)).toEqual({ go: false, reason: 'not-leader' });

    const first = (await a.gate(0)) as Extract<StatsGate, { go: true }>;
    expect(first.go).toBe(true);
    expect(await first.stillValid()).toBe(true);
    // The same period again, even from the leader: refused, with when the next one is.
    const again = await a.gate(0);
    expect(again).toMatchObject({ go: false, reason: 'too-soon' });
    expect((again as { retryInMs: number }).retryInMs).toBeGreaterThan(1_000);

    // a freezes (no renewal): its lease runs out, b takes the lead with the next token.
    await sleep(1_100);
    expect(a.leading).toBe(false);
    await b.renew();
    expect(b.leading).toBe(true);
    // The interval since a's post is not over: b waits for it rather than post the period again.
    const early = await b.gate(0);
    expect(early).toMatchObject({ go: false, reason: 'too-soon' });
    await sleep((early as { retryInMs: number }).retryInMs + 50);
    const second = await b.gate(0);
    expect(second.go).toBe(true);

    // a wakes: its gate says it does not lead, and a claim it made before the freeze is fenced.
    expect(await a.gate(0)).toEqual({ go: false, reason: 'not-leader' });
    await sleep(2_100 - 1_100);
    expect(await first.stillValid()).toBe(false);
    // a renews: b holds a live lease (renewed as its timer would), so a stays a follower.
    await b.renew();
    await a.renew();
    expect([a.leading, b.leading]).toEqual([false, true]);
  });

  it('refuses a second live process with the same HOST_ID, whatever its shards, and lets the first lead alone', async () => {
    const where = await place();
    // a writes its shards as its heartbeat does, here every 300 ms.
    const a = await hostOn(where, 'a', [0, 1], { writeEveryMs: 300 });
    await a.claim();
    a.startWriting();
    undo(() => a.stop());
    const nameTaken =
      /^This host \(HOST_ID=a\) may not start: another live process holds that name \(it wrote its shards \d+ s ago\)\. Give each host its own HOST_ID/;
    // A cloned machine: same name, same shards.
    const clone = await hostOn(where, 'a', [0, 1], { writeEveryMs: 300 });
    const refused = await clone.claim().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as Error).message).toMatch(nameTaken);
    // Same name, other shards: refused all the same.
    await expect((await hostOn(where, 'a', [2, 3], { writeEveryMs: 300 })).claim()).rejects.toThrow(
      nameTaken,
    );
    // One name, one leader: the other process does not renew a's lease as its own.
    await a.renew();
    await clone.renew();
    expect([a.leading, clone.leading]).toEqual([true, false]);
    // a's shards are still a's: its writes go on, the clone's are refused.
    const shards = await repositoryOn(where);
    const numbers = [{ id: 0, ready: true, guilds: 1, members: 1 }];
    expect(await shards.write({ host: 'a', instance: clone.instance }, 6, numbers)).toEqual([0]);
    expect(await shards.write({ host: 'a', instance: a.instance }, 6, numbers)).toEqual([]);
  });

  it('lets a host restarted after its process died take over from it once it has written nothing more', async () => {
    const where = await place();
    const dead = await hostOn(where, 'a', [0, 1]);
    await dead.claim();
    await dead.write();
    await dead.renew();
    expect(dead.leading).toBe(true);
    // The process dies (no more writes); the host restarts at once, as an orchestrator would.
    const restarted = await hostOn(where, 'a', [0, 1]);
    await restarted.claim();
    await restarted.write();
    // The shards are the new process's: the old one's writes are refused.
    const shards = await repositoryOn(where);
    const numbers = [{ id: 1, ready: true, guilds: 1, members: 1 }];
    expect(await shards.write({ host: 'a', instance: dead.instance }, 6, numbers)).toEqual([1]);
    // The lead moves to the new process when the old one's lease runs out, and not back.
    await sleep(1_100);
    await restarted.renew();
    await dead.renew();
    expect([restarted.leading, dead.leading]).toEqual([true, false]);
  });

  it('answers the ups in flight of a host gone for the silence, once, from one host only', async () => {
    const where = await place();
    const [a, b, c] = await Promise.all([
      hostOn(where, 'a', [0, 1]),
      hostOn(where, 'b', [2, 3]),
      hostOn(where, 'c', [4, 5]),
    ]);
    for (const host of [a, b, c]) {
      await host!.claim();
      await host!.write();
    }
    const store = await openStore(where.options);
    undo(() => store.close());
    const journalOf = (host: string) => new StoreUpJournal(store, { owner: hostJournalOwner(host) });
    const entry = (n: number) => ({
      interactionId: `10000000000000000${n}`,
      token: `token-${n}`,
      applicationId: '20000000000000000',
      guildId: '30000000000000000',
      channelId: '40000000000000000',
      channelName: 'general',
      userId: '50000000000000000',
      locale: 'en-US',
      guildLocale: 'en-US',
      createdAt: Date.now(),
    });
    await journalOf('a').add(entry(1));
    await journalOf('a').add(entry(2));
    await journalOf('c').add(entry(3));
    // a stops writing (killed); b and c go on.
    await sleep(700);
    await b!.write();
    await c!.write();
    const answered: Record<string, string[]> = { b: [], c: [] };
    const adopter = (host: 'b', self: Host) =>
      adoptOrphanedUps({
        hosts: self,
        journal: journalOf(host),
        answer: async (entries) => {
          answered[host]!.push(...entries.map((e) => e.interactionId));
          return entries.length;
        },
        logger,
        silentMs: 500,
        everyMs: 60_000,
      });
    const orphans: number[][] = [];
    const fromB = adopter('b', b!);
    const fromC = adoptOrphanedUps({
      hosts: c!,
      journal: journalOf('c'),
      answer: async (entries) => {
        answered.c!.push(...entries.map((e) => e.interactionId));
        return entries.length;
      },
      logger,
      silentMs: 500,
      everyMs: 60_000,
      onOrphans: (shards) => orphans.push(shards),
    });
    undo(() => fromB.stop());
    undo(() => fromC.stop());
    await Promise.all([fromB.runNow(), fromC.runNow()]);
    // a's shards are orphaned: their guilds' reminders go out from the live hosts.
    expect(orphans).toEqual([[0, 1]]);
    // a's two ups, each answered by one host; c's own up (c lives) by nobody.
    expect([...answered.b!, ...answered.c!].sort()).toEqual(['100000000000000001', '100000000000000002']);
    expect(await journalOf('a').list()).toEqual([]);
    expect((await journalOf('c').list()).map((e) => e.interactionId)).toContain('100000000000000003');
  });
});
