/**
 * /leaderboard end to end, on both engines: successful ups through /up are recorded, once each;
 * the answer ranks the server's members with their counts, says where the asker stands, is in
 * their language, and its mentions ping nobody.
 */
import { MessageFlags } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HistoryRepository } from '../../src/store/index.js';
import { commandOption, makeGuild } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { ENGINES, freshPlace, type Place } from '../store/places.js';
import { viewOf } from '../support/layout-view.js';
import { embedOf, type Harness, publicMessage, startHarness } from './harness.js';

const guild = makeGuild({ id: IDS.serverFresh, name: 'Свежий сервер' });
const anna = { id: '310000000000000001', username: 'anna', global_name: 'Анна' };
const boris = { id: '310000000000000002', username: 'boris' };
const vera = { id: '310000000000000003', username: 'vera' };

/** The image's size from its IHDR, or null when these bytes are not a PNG. */
function isPng(data: Buffer): { width: number; height: number } | null {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (!data.subarray(0, 8).equals(signature) || data.toString('latin1', 12, 16) !== 'IHDR') return null;
  return { width: data.readUInt32BE(16), height: data.readUInt32BE(20) };
}

describe.each(ENGINES)('/leaderboard (%s)', (engine) => {
  let h: Harness;
  let place: Place;

  beforeAll(async () => {
    place = await freshPlace(engine);
    // The directory lets a server be raised again at once: every /up below is a success.
    h = await startHarness({ guilds: [guild], emulator: { cooldownMs: 1 }, env: { ...place.env } });
  });
  afterAll(async () => {
    await h?.close();
    await place?.remove();
  });

  it('ranks the members by their ups, tells the asker their place, and pings nobody', async () => {
    expect(h.bot.store.engine).toBe(engine);
    const empty = await h.run({ guildId: guild.id, name: 'leaderboard', user: anna });
    expect(empty.outcome).toBe('empty');
    expect(embedOf(publicMessage(empty)).description).toContain('No up through this bot in this period yet');

    for (const user of [boris, anna, boris, vera, boris, anna]) {
      const up = await h.run({ guildId: guild.id, name: 'up', user });
      expect(up.outcome).toBe('success');
    }
    const history = new HistoryRepository(h.bot.store);
    expect((await history.members(guild.id, 0)).map((m) => [m.userId, m.ups])).toEqual([
      [boris.id, 3],
      [anna.id, 2],
      [vera.id, 1],
    ]);

    const board = await h.run({ guildId: guild.id, name: 'leaderboard', user: vera });
    expect(board.outcome).toBe('shown');
    const boardMessage = publicMessage(board);
    // A Components V2 layout: the flag on the message, no embed.
    expect((boardMessage.flags ?? 0) & MessageFlags.IsComponentsV2).toBe(MessageFlags.IsComponentsV2);
    expect(boardMessage.embeds ?? []).toEqual([]);
    const embed = embedOf(boardMessage);
    expect(embed.title).toBe('Who kept this server up: the last 30 days');
    expect(embed.description).toBe(
      [`**1.** <@${boris.id}>: 3 ups`, `**2.** <@${anna.id}>: 2 ups`, `**3.** <@${vera.id}>: 1 up`].join(
        '\n',
      ),
    );
    expect(embed.fields?.[0]).toEqual({ name: 'You', value: '#3 with 1 up' });
    expect(embed.footer?.text).toBe('6 ups by 3 members in this period');
    // The chart: a real PNG of a sane size, a MediaGallery item with its alt text, its numbers in the text too.
    const today = new Date();
    const dd = `${String(today.getUTCDate()).padStart(2, '0')}.${String(today.getUTCMonth() + 1).padStart(2, '0')}`;
    // The chart's text last; before it, the fastest ups and the streaks when there are some (these
    // ups came a few ms apart, with or without a known window: streaks.test.ts tells them apart).
    const body = viewOf(boardMessage).body;
    expect(body.at(-1)).toBe(`**Ups per day (UTC)**\n${dd}: 6`);
    for (const part of body.slice(0, -1)) expect(part).toMatch(/^\*\*(⚡|🔥) /u);
    expect(viewOf(boardMessage).images).toEqual([
      { url: 'attachment://ups.png', description: `Who kept this server up: the last 30 days. ${dd}: 6` },
    ]);
    const png = board.requests.flatMap((r) => r.files ?? []).find((f) => f.filename === 'ups.png');
    expect(png?.contentType).toBe('image/png');
    expect(isPng(png!.data)).toEqual({ width: 960, height: 480 });
    expect(png!.size).toBeGreaterThan(5_000);
    expect(png!.size).toBeLessThan(1_000_000);
    const edited = board.requests.find((r) => r.method === 'PATCH')?.body as
      | { attachments?: Array<{ description?: string }> }
      | undefined;
    const attachments = edited?.attachments;
    expect(attachments?.[0]?.description).toBe(`Who kept this server up: the last 30 days. ${dd}: 6`);
    // Mentions that ping nobody: the answer allows no mention at all.
    const edit = board.requests.find((r) => r.method === 'PATCH');
    expect((edit?.body as { allowed_mentions?: unknown } | undefined)?.allowed_mentions).toEqual({
      parse: [],
      replied_user: false,
    });

    // This server's card carries its ups of the last 30 days as a chart too; another's does not.
    const card = await h.run({ guildId: guild.id, name: 'server', user: vera });
    const cardMessage = publicMessage(card);
    expect(viewOf(cardMessage).body).toEqual([`**Ups in the last 30 days · Ups per day (UTC)**\n${dd}: 6`]);
    expect(viewOf(cardMessage).images).toEqual([
      { url: 'attachment://ups.png', description: `Ups in the last 30 days. ${dd}: 6` },
    ]);
    const cardPng = card.requests.flatMap((r) => r.files ?? []).find((f) => f.filename === 'ups.png');
    expect(isPng(cardPng!.data)).toEqual({ width: 960, height: 480 });
    const other = await h.run({
      guildId: guild.id,
      name: 'server',
      options: [commandOption.string('ref', IDS.serverBoosted)],
    });
    expect(viewOf(publicMessage(other)).images).toEqual([]);
    expect(other.requests.flatMap((r) => r.files ?? [])).toEqual([]);

    // In Russian, for a week, asked by someone with no up.
    const ru = await h.run({
      guildId: guild.id,
      name: 'leaderboard',
      locale: 'ru',
      user: { id: '310000000000000009', username: 'gleb' },
      options: [commandOption.string('period', 'week')],
    });
    const ruEmbed = embedOf(publicMessage(ru));
    expect(ruEmbed.title).toBe('Кто поднимал сервер: последние 7 дней');
    expect(ruEmbed.description?.split('\n')[0]).toBe(`**1.** <@${boris.id}>: 3 апа`);
    expect(ruEmbed.fields?.[0]?.value).toBe(
      'В этом периоде у вас пока нет апов: используйте /up, когда сервер можно поднять.',
    );
    expect(ruEmbed.footer?.text).toBe('6 апов от 3 участников за этот период');
  });
});
