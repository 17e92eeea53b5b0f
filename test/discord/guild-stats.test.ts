/**
 * An up's guild statistics from what the bot knows (src/discord/guild-stats.ts), against the
 * Discord stand-in over real sockets: the gateway's guild gives most of them at once, the owner's
 * name and the online count come from a background refresh that an up waits for only when nothing
 * waits before it, and a guild not in the cache is asked of Discord as before.
 */
import { REST } from '@discordjs/rest';
import { describe, expect, it } from 'vitest';
import { type CachedGuild, GuildStatsSource } from '../../src/discord/guild-stats.js';
import { createLogger } from '../../src/log/logger.js';
import { type GuildFixture, makeGuild, makeUser } from './index.js';
import { standInSession } from './test-session.js';

const session = standInSession();

const silent = createLogger({ level: 'silent' });

function cachedOf(guilds: readonly GuildFixture[]): (id: string) => CachedGuild | undefined {
  const byId = new Map(guilds.map((g) => [g.id, g]));
  return (id) => {
    const g = byId.get(id);
    return g && { name: g.name, icon: g.icon, memberCount: g.member_count, ownerId: g.owner_id };
  };
}

async function world(n: number, options: { cachedCount?: number } = {}) {
  const guilds = Array.from({ length: n }, (_, i) => makeGuild({ name: `Guild ${i}`, memberCount: 90 + i }));
  const owners = guilds.map((g, i) => makeUser({ id: g.owner_id, username: `owner${i}` }));
  const si = await session.start({ guilds, users: owners });
  const rest = new REST({ api: si.restUrl, retries: 0 }).setToken(si.token);
  const inCache = guilds.slice(0, options.cachedCount ?? n);
  const source = new GuildStatsSource({ rest, cached: cachedOf(inCache), timeoutMs: 2_000, logger: silent });
  const restRequests = () =>
    si.requests.filter((r) => r.path.startsWith('/guilds') || r.path.startsWith('/users'));
  return { si, guilds, source, restRequests };
}

describe('guild statistics for an up', () => {
  it('the first up of a guild waits briefly for the owner and online count; the next asks Discord nothing', async () => {
    const { guilds, source, restRequests } = await world(1);
    const g = guilds[0] as GuildFixture;
    const first = await source.stats(g.id);
    expect(first).toEqual({
      name: 'Guild 0',
      membersAll: 90,
      membersOnline: 30,
      ownerId: g.owner_id,
      ownerTag: 'owner0',
      ...(g.icon ? { avatar: expect.stringContaining(g.icon) } : {}),
    });
    expect(restRequests()).toHaveLength(2);
    const started = performance.now();
    expect(await source.stats(g.id)).toEqual(first);
    expect(performance.now() - started).toBeLessThan(50);
    expect(restRequests()).toHaveLength(2);
  });

  it('a burst of ups never waits in line for Discord: what the gateway gave at once, the rest in the background', async () => {
    const { guilds, source, restRequests } = await world(40);
    const started = performance.now();
    const all = await Promise.all(guilds.map((g) => source.stats(g.id)));
    const tookMs = performance.now() - started;
    // The first may wait its 300 ms; the others go at once with what the gateway gave.
    expect(tookMs).toBeLessThan(1_000);
    for (const [i, stats] of all.entries()) {
      expect(stats).toMatchObject({ name: `Guild ${i}`, membersAll: 90 + i, ownerId: guilds[i]?.owner_id });
    }
    expect(all.filter((s) => s.ownerTag === undefined).length).toBeGreaterThanOrEqual(38);
    expect(source.waiting).toBeGreaterThanOrEqual(38);
    // Without the refresher running, nothing more was asked of Discord.
    const asked = restRequests().length;
    expect(asked).toBeLessThanOrEqual(4);

    // The refresher (a background task) catches up, one guild per run.
    source.task.start();
    try {
      const deadline = performance.now() + 30_000;
      while (source.waiting > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(source.waiting).toBe(0);
      const later = await Promise.all(guilds.map((g) => source.stats(g.id)));
      expect(later.every((s, i) => s.ownerTag === `owner${i}` && typeof s.membersOnline === 'number')).toBe(
        true,
      );
    } finally {
      await source.task.stop();
    }
  }, 60_000);

  it("a guild not in the cache (a gone host's) is asked of Discord, within the bound", async () => {
    const { guilds, source, restRequests } = await world(2, { cachedCount: 1 });
    const gone = guilds[1] as GuildFixture;
    expect(await source.stats(gone.id)).toMatchObject({
      name: 'Guild 1',
      membersAll: 91,
      ownerTag: 'owner1',
    });
    expect(restRequests().map((r) => r.path)).toEqual([`/guilds/${gone.id}`, `/users/${gone.owner_id}`]);
  });
});
