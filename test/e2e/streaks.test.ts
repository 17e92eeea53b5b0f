/**
 * Streaks and reaction times end to end, on both engines, through the unmodified discord.js
 * client (issue 25): `/settings timezone` (an unknown name refused, in the user's language; a
 * known one kept and shown), an /up that keeps the server's streak and the member's days says so
 * on its answer, one that ends a member's streak says that, and /leaderboard shows the fastest
 * ups and the streaks, pinging nobody.
 */
import { PermissionFlagsBits } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HistoryRepository, ReminderRepository } from '../../src/store/index.js';
import { commandOption, makeGuild } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { ENGINES, freshPlace, type Place } from '../store/places.js';
import { viewOf } from '../support/layout-view.js';
import {
  type Answer,
  embedOf,
  embedText,
  type Harness,
  mentionProblems,
  privateMessage,
  publicMessage,
  startHarness,
} from './harness.js';

const guild = makeGuild({ id: IDS.serverFresh, name: 'Streaky' });
const anna = { id: '320000000000000001', username: 'anna' };
const boris = { id: '320000000000000002', username: 'boris' };
const vera = { id: '320000000000000003', username: 'vera' };
const DAY = 86_400_000;

/** What each message of the answer (its edits and follow-ups) could ping: nothing. */
function pingsNobody(answer: Answer): string[] {
  return answer.requests
    .filter((r) => r.method === 'PATCH' || (r.method === 'POST' && r.path.includes('/webhooks/')))
    .flatMap((r) => mentionProblems(r.body as Record<string, unknown>));
}
const MIN = 60_000;

describe.each(ENGINES)('streaks and reaction times (%s)', (engine) => {
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

  const settings = (sub: string, name: string, locale?: string): Promise<Answer> =>
    h.run({
      guildId: guild.id,
      name: 'settings',
      options: [commandOption.subcommand(sub, [commandOption.string('zone', name)])],
      permissions: PermissionFlagsBits.ManageGuild,
      ...(locale ? { locale } : {}),
    });

  it('/settings timezone: an unknown name changes nothing, in the asker’s language; a known one is kept', async () => {
    const unknown = await settings('timezone', 'Mars/Olympus_Mons');
    expect(unknown.outcome).toBe('timezone:unknown');
    expect(embedText(embedOf(privateMessage(unknown)))).toContain(
      '`Mars/Olympus_Mons` is not a time zone this bot knows. Write an IANA name, such as Europe/Moscow',
    );
    const russian = await settings('timezone', '@everyone', 'ru');
    expect(embedText(embedOf(privateMessage(russian)))).toContain('— не известный боту часовой пояс');
    expect(pingsNobody(russian)).toEqual([]);

    const known = await settings('timezone', 'europe/moscow');
    expect(known.outcome).toBe('timezone');
    const text = embedText(embedOf(privateMessage(known)));
    expect(text).toContain("The members' streaks now count days in **Europe/Moscow**.");
    expect(text).toContain('Time zone\nEurope/Moscow');
  });

  it('an /up says the streaks it keeps and the one it ends; /leaderboard shows the fastest and the streaks', async () => {
    const now = Date.now();
    const history = new HistoryRepository(h.bot.store);
    // Anna upped on the two days before today, each a minute after the up became possible.
    for (const days of [2, 1]) {
      const at = now - days * DAY;
      await history.record({
        id: `seed:a${days}`,
        guildId: guild.id,
        userId: anna.id,
        at,
        upCount: null,
        source: 'bot',
        possibleAt: at - MIN,
      });
    }
    // Boris upped four and three days ago: a streak of two days, over by today.
    for (const days of [4, 3]) {
      const at = now - days * DAY - 3 * 3_600_000;
      await history.record({
        id: `seed:b${days}`,
        guildId: guild.id,
        userId: boris.id,
        at,
        upCount: null,
        source: 'bot',
        possibleAt: at - 5 * MIN,
      });
    }
    // The up became possible 20 s ago.
    await new ReminderRepository(h.bot.store).scheduleGuild(
      guild.id,
      { dueAt: now - 20_000, nextUpAt: now - 20_000 },
      now - DAY,
    );

    // A thank-you line: a placeholder it does not know is refused (in the asker's language), then set.
    const thanks = (message?: string, locale?: string): Promise<Answer> =>
      h.run({
        guildId: guild.id,
        name: 'settings',
        options: [
          commandOption.subcommand('thanks', message ? [commandOption.string('message', message)] : []),
        ],
        permissions: PermissionFlagsBits.ManageGuild,
        ...(locale ? { locale } : {}),
      });
    const refused = await thanks('Спасибо {member} {role}', 'ru');
    expect(refused.outcome).toBe('refused:thanks-unknownPlaceholder');
    expect(embedText(embedOf(privateMessage(refused)))).toContain('`{role}`');
    expect(embedText(embedOf(privateMessage(refused)))).toContain('Подстановки: `{member}`');
    const set = await thanks('Thanks {member} for raising {server}: {ups} ups, {streak} days @everyone');
    expect(set.outcome).toBe('thanks');
    expect(embedText(embedOf(privateMessage(set)))).toContain('Thank-you line');

    const up = await h.run({ guildId: guild.id, name: 'up', user: anna });
    expect(up.outcome).toBe('success');
    const answer = embedOf(publicMessage(up));
    const streaks = answer.fields?.find((f) => f.name === 'Streaks');
    // Four windows on time in a row: boris's two, anna's two and this one count from the first known.
    expect(streaks?.value).toBe(
      ['🔥 The server: **5** ups on time in a row', '🔥 You: **3** days in a row'].join('\n'),
    );
    const thanked = answer.fields?.find((f) => f.name === 'Thank you')?.value ?? '';
    expect(thanked).toMatch(
      new RegExp(`^Thanks <@${anna.id}> for raising Streaky: [\\d,]+ ups, 3 days @\u200beveryone$`),
    );
    expect(pingsNobody(up)).toEqual([]);
    expect((await thanks()).outcome).toBe('thanks-off');

    const again = await h.run({ guildId: guild.id, name: 'up', user: boris });
    expect(again.outcome).toBe('success');
    expect(embedOf(publicMessage(again)).fields?.some((f) => f.name === 'Thank you')).toBe(false);
    expect(embedOf(publicMessage(again)).fields?.find((f) => f.name === 'Streaks')?.value).toBe(
      [
        '🔥 The server: **6** ups on time in a row',
        '💔 Your streak of 2 days ended; this up starts a new one',
      ].join('\n'),
    );

    const board = await h.run({ guildId: guild.id, name: 'leaderboard', user: vera, locale: 'ru' });
    expect(board.outcome).toBe('shown');
    const body = viewOf(publicMessage(board)).body.join('\n');
    expect(body).toContain('**⚡ Самые быстрые апы после того, как ап стал возможен**');
    // The fastest: the seeded minute and five minutes, and the two /up just now (a few ms to 20 s).
    expect(body).toMatch(/\*\*1\.\*\* <@\d+>: /);
    expect(body).toContain('**🔥 Серии**');
    expect(body).toContain('Сервер: сейчас 6 апов вовремя подряд (рекорд: 6)');
    expect(body).toContain(`<@${anna.id}>: рекорд — 3 дня подряд, сейчас 3`);
    expect(body).toContain(`<@${boris.id}>: рекорд — 2 дня подряд, сейчас 1`);
    expect(pingsNobody(board)).toEqual([]);

    const mine = await h.run({ guildId: guild.id, name: 'leaderboard', user: anna });
    expect(embedOf(publicMessage(mine)).fields).toContainEqual({
      name: 'Your streak',
      value: '3 days in a row at best, 3 now',
    });
  });
});
