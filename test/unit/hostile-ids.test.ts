/** An ID that is not a snowflake never becomes a Discord route: no request, nothing gathered. */
import type { REST } from '@discordjs/rest';
import { describe, expect, it } from 'vitest';
import { fetchIdentity, gatherGuildStats } from '../../src/discord/lookups.js';

const HOSTILE = ['../guilds/722424773233213460', '../users/@me?x=', '@me', '..%2Fguilds%2F1', '1234', ''];

/** A REST that records every route asked for and answers a user or a guild. */
function recordingRest(guild: Record<string, unknown> = {}): { rest: REST; routes: string[] } {
  const routes: string[] = [];
  const get = async (route: string): Promise<unknown> => {
    routes.push(route);
    return route.startsWith('/guilds/')
      ? { id: '722424773233213460', name: 'g', icon: null, owner_id: '178404926869733376', ...guild }
      : { id: '178404926869733376', username: 'u', global_name: null, avatar: null, discriminator: '0' };
  };
  return { rest: { get } as unknown as REST, routes };
}

describe('IDs from a directory answer', () => {
  it.each(HOSTILE)('fetchIdentity(%j) asks Discord nothing and gives no identity', async (id) => {
    const { rest, routes } = recordingRest();
    await expect(fetchIdentity(rest, id, 1_000)).resolves.toBeNull();
    expect(routes).toEqual([]);
  });

  it('a snowflake is still asked for', async () => {
    const { rest, routes } = recordingRest();
    await expect(fetchIdentity(rest, '178404926869733376', 1_000)).resolves.toMatchObject({ name: 'u' });
    expect(routes).toEqual(['/users/178404926869733376']);
  });

  it.each(HOSTILE)('gatherGuildStats(%j) asks Discord nothing', async (id) => {
    const { rest, routes } = recordingRest();
    await expect(gatherGuildStats(rest, id, 1_000)).resolves.toEqual({});
    expect(routes).toEqual([]);
  });

  it("a guild's owner ID that is not a snowflake is not looked up", async () => {
    const { rest, routes } = recordingRest({ owner_id: '../users/@me' });
    const stats = await gatherGuildStats(rest, '722424773233213460', 1_000);
    expect(stats).toMatchObject({ name: 'g' });
    expect(stats.ownerId).toBeUndefined();
    expect(routes).toEqual(['/guilds/722424773233213460']);
  });
});
