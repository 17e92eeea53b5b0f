/**
 * One noisy server does not starve the others (issue 23), end to end through the real bot, on
 * SQLite and on PostgreSQL: a server whose admin floods the webhook, its channel slow (Discord
 * holds its posts), has 1,000 events waiting; another server's next event is still announced
 * within 5 s. Past WEBHOOK_SERVER_PENDING waiting, the noisy server's next delivery is answered
 * 429 and nothing is stored, while the other server's deliveries go on.
 */
import type { APIEmbed } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { makeGuild, makeTextChannel } from '../discord/index.js';
import { ENGINES, freshPlace, type Place } from '../store/places.js';
import { type Harness, setUpWebhook, startHarness } from './harness.js';

/** The noisy server's events: as many as its cap, so the next one is over it. */
const WAITING = 1_000;
const ANNA = '310000000000000001';
const BORIS = '310000000000000002';

describe.each(ENGINES)('one noisy server and the others (%s)', (engine) => {
  const noisyChannel = makeTextChannel({ name: 'directory-events' });
  const quietChannel = makeTextChannel({ name: 'directory-events' });
  const noisy = makeGuild({ name: 'Noisy', channels: [noisyChannel] });
  const quiet = makeGuild({ name: 'Quiet', channels: [quietChannel] });
  const keys = new Map([
    [noisy.id, 'hk_noisy-server-key-0001'],
    [quiet.id, 'hk_quiet-server-key-0002'],
  ]);
  let h: Harness;
  let place: Place;
  let store: Store;
  /** When the noisy server's events were written on the directory (a millisecond apart). */
  const base = Date.now() - 3_600_000;

  beforeAll(async () => {
    place = await freshPlace(engine);
    store = await openStore(place.options);
    h = await startHarness({
      guilds: [noisy, quiet],
      env: {
        ...place.env,
        WEBHOOK_PORT: '0',
        WEBHOOK_HOST: '127.0.0.1',
        // The source limit out of the way: what is tested is the server's own.
        WEBHOOK_RATE_LIMIT: '100000/1000',
        WEBHOOK_SERVER_PENDING: String(WAITING),
        WEBHOOK_SERVER_RATE: '100000/60000',
      },
    });
    for (const [guildId, key] of keys) {
      const channel = guildId === noisy.id ? noisyChannel : quietChannel;
      await setUpWebhook(h, { guildId, key, channelId: channel.id });
    }
  }, 60_000);
  afterAll(async () => {
    await h?.discord.releasePosts(noisyChannel.id, 'drop');
    await h?.close();
    await store?.close();
    await place?.remove();
  });

  /** Events of a server in the store, whatever their state. */
  async function stored(guildId: string): Promise<number> {
    const rows = await store.run((db) =>
      db.selectFrom('webhook_events').select('id').where('guild_id', '=', guildId).execute(),
    );
    return rows.length;
  }

  const comment = (guildId: string, user: string, at: number, text: string) =>
    h.emu.webhooks.comment(guildId, 'new', { user, at, new: text });

  it(`with ${WAITING} events of one server waiting, another server's next event is announced within 5 s`, async () => {
    // The noisy server's channel is slow: Discord holds its posts.
    h.discord.holdPosts(noisyChannel.id);
    for (let i = 0; i < WAITING; i += 50) {
      const statuses = await Promise.all(
        Array.from({ length: 50 }, (_, j) => comment(noisy.id, ANNA, base + i + j, `comment ${i + j}`)),
      );
      expect(statuses.every((s) => s === 200)).toBe(true);
    }
    expect(await stored(noisy.id)).toBe(WAITING);
    // Its first is being posted, the rest wait behind it.
    await h.discord.waitForHeldPost(noisyChannel.id, 10_000);

    const quietBefore = h.discord.channelMessages(quietChannel.id).length;
    const started = Date.now();
    expect(await comment(quiet.id, BORIS, Date.now() - 1_000, 'Over here')).toBe(200);
    const announced = await h.discord.waitForMessage(
      quietChannel.id,
      (m) => (m.embeds[0] as APIEmbed | undefined)?.description === '> Over here',
      5_000,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(h.discord.channelMessages(quietChannel.id)).toHaveLength(quietBefore + 1);
    expect((announced.embeds[0] as APIEmbed).title).toBe('💬 New comment on the directory');
    // The noisy server's channel is still stuck on its first: its events did not go first.
    const noisyComments = h.discord
      .channelMessages(noisyChannel.id)
      .filter((m) => (m.embeds[0] as APIEmbed | undefined)?.title === '💬 New comment on the directory');
    expect(noisyComments).toEqual([]);
  }, 90_000);

  it('past its cap of events waiting, a server gets 429 and nothing is stored; a repeat is 200, the others go on', async () => {
    expect(await stored(noisy.id)).toBe(WAITING);
    expect(await comment(noisy.id, ANNA, Date.now() - 1_000, 'one too many')).toBe(429);
    expect(await stored(noisy.id)).toBe(WAITING);
    // Delivered again: stored already, so answered 200 (the directory does not try it again).
    expect(await comment(noisy.id, ANNA, base, 'comment 0')).toBe(200);
    expect(await stored(noisy.id)).toBe(WAITING);
    const quietBefore = await stored(quiet.id);
    expect(await comment(quiet.id, BORIS, Date.now() - 500, 'Still here')).toBe(200);
    expect(await stored(quiet.id)).toBe(quietBefore + 1);
    expect(h.unhandled).toEqual([]);
  });
});
