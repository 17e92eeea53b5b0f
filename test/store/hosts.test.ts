/**
 * Several hosts on one PostgreSQL (src/hosts/hosts.ts): each host's shards claimed and written,
 * the statistics read from every host's numbers, and one leader with a fencing token. Each host
 * here has a store (a connection pool) of its own on one schema, as separate machines would; the
 * lease and the staleness are scaled down to a second or two.
 */
import { describe, expect, it } from 'vitest';
import type { ShardState, ShardView } from '../../src/discord/shard-stats.js';
import { adoptOrphanedUps, hostJournalOwner } from '../../src/hosts/adopt.js';
import { Host, type HostOptions } from '../../src/hosts/hosts.js';
import { createLogger } from '../../src/log/logger.js';
import { openStore, StoreError, StoreUpJournal } from '../../src/store/index.js';
import type { StatsGate } from '../../src/tasks/stats-poster.js';
import { inspectSnapshot } from '../../src/tasks/stats-snapshot.js';
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('hosts of one bot on PostgreSQL', () => {
  it('claims each host its own shards, and refuses one that overlaps a live host or counts differently', async () => {
    const where = await place();
    const a = await hostOn(where, 'a', [0, 1]);
    await a.claim();
    await a.write();
    const b = await hostOn(where, 'b', [1, 2]);
    const refused = await b.claim().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as Error).message).toMatch(
      /^This host \(b\) may not run shards 1,2: shard 1 is run by host a \(seen \d+ s ago\)\. Give each host its own SHARD_IDS/,
    );
    const eight = await hostOn(where, 'c', [4, 5], { shardCount: 8 });
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
    const ready = await hostOn(where, 'c', [4, 5]);
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
