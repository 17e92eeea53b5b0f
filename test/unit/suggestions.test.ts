/**
 * What /bot and /server suggest as the user types (src/interactions/suggestions.ts): from
 * memory only, the user's bots asked once per 10 minutes in the background, every choice within
 * Discord's limits, and what one place looked up never shown in another.
 */
import { describe, expect, it } from 'vitest';
import type { BotReference } from '../../src/directory/index.js';
import {
  LookupSuggestions,
  MAX_CHOICES,
  OWN_BOTS_TTL_MS,
  placeOf,
} from '../../src/interactions/suggestions.js';
import { createLogger } from '../../src/log/logger.js';

function suggestions(ownBots: (userId: string) => Promise<readonly BotReference[]>) {
  let now = 1_000_000;
  const asked: string[] = [];
  const s = new LookupSuggestions({
    ownBots: (userId) => {
      asked.push(userId);
      return ownBots(userId);
    },
    now: () => now,
    logger: createLogger({ level: 'silent' }),
  });
  return { s, asked, later: (ms: number) => (now += ms) };
}
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('lookup suggestions', () => {
  it("answers at once without the user's bots, asks for them once, and shows them from then on", async () => {
    let answer: (bots: BotReference[]) => void = () => {};
    const { s, asked, later } = suggestions(
      () =>
        new Promise<BotReference[]>((resolve) => {
          answer = resolve;
        }),
    );
    const ask = () => s.choices({ kind: 'bot', place: 'g1', userId: 'u1', typed: '' });
    expect(ask()).toEqual([]);
    expect(ask()).toEqual([]);
    expect(asked).toEqual(['u1']);
    answer([
      { id: '724663360934772797', shortCode: 'kerdoku' },
      { id: '724663360934772798', shortCode: null },
    ]);
    await settle();
    expect(ask()).toEqual([
      { name: 'kerdoku (724663360934772797)', value: 'kerdoku' },
      { name: '724663360934772798', value: '724663360934772798' },
    ]);
    expect(asked).toEqual(['u1']);
    // Stale after the TTL: asked again, the old list shown meanwhile.
    later(OWN_BOTS_TTL_MS);
    expect(ask()).toHaveLength(2);
    expect(asked).toEqual(['u1', 'u1']);
  });

  it('a failed look-up of the bots is not asked again before the TTL', async () => {
    const { s, asked, later } = suggestions(() => Promise.reject(new Error('no token')));
    const ask = () => s.choices({ kind: 'bot', place: 'g1', userId: 'u2', typed: 'x' });
    ask();
    await settle();
    ask();
    expect(asked).toEqual(['u2']);
    later(OWN_BOTS_TTL_MS);
    ask();
    expect(asked).toEqual(['u2', 'u2']);
  });

  it("keeps each place's look-ups apart, newest first, no value twice, and filters on what is typed", () => {
    const { s } = suggestions(async () => []);
    s.lookedUp('g1', 'server', 'BotiCord Community', 'boticord');
    s.lookedUp('g1', 'server', 'Пиксельная Таверна', '935101411530891304');
    s.lookedUp('g1', 'server', 'BotiCord Community', 'boticord');
    s.lookedUp('g1', 'bot', 'Kerdoku (kerdoku)', 'kerdoku');
    const servers = (typed: string, place = 'g1') => s.choices({ kind: 'server', place, userId: 'u', typed });
    expect(servers('')).toEqual([
      { name: 'BotiCord Community', value: 'boticord' },
      { name: 'Пиксельная Таверна', value: '935101411530891304' },
    ]);
    expect(servers('таверна')).toEqual([{ name: 'Пиксельная Таверна', value: '935101411530891304' }]);
    expect(servers('9351')).toEqual([{ name: 'Пиксельная Таверна', value: '935101411530891304' }]);
    expect(servers('', 'g2')).toEqual([]);
    expect(
      s.choices({
        kind: 'server',
        place: 'g1',
        userId: 'u',
        typed: '',
        first: { name: 'Here', value: 'boticord' },
      }),
    ).toEqual([
      { name: 'Here', value: 'boticord' },
      { name: 'Пиксельная Таверна', value: '935101411530891304' },
    ]);
  });

  it("never gives more than Discord's 25 choices, and keeps a place's last 10 look-ups", async () => {
    const bots = Array.from({ length: 40 }, (_, i) => ({
      id: String(800000000000000000 + i),
      shortCode: `b${i}`,
    }));
    const { s } = suggestions(async () => bots);
    for (let i = 0; i < 15; i++) s.lookedUp('g1', 'bot', `Bot ${i}`, `r${i}`);
    s.choices({ kind: 'bot', place: 'g1', userId: 'dev', typed: '' });
    await settle();
    expect(s.choices({ kind: 'bot', place: 'g1', userId: 'dev', typed: '' })).toHaveLength(MAX_CHOICES);
    expect(
      s.choices({ kind: 'bot', place: 'g1', userId: 'someone', typed: 'Bot' }).map((c) => c.value),
    ).toEqual(['r14', 'r13', 'r12', 'r11', 'r10', 'r9', 'r8', 'r7', 'r6', 'r5']);
  });

  it("makes a choice's text one line without control characters, cut to Discord's 100", () => {
    const { s } = suggestions(async () => []);
    s.lookedUp('g0', 'server', 'Evil\u202e name\n\twith  spaces\u0007', 'evil');
    s.lookedUp('g0', 'server', 'x'.repeat(150), 'long');
    const [long, evil] = s
      .choices({ kind: 'server', place: 'g0', userId: 'u', typed: '' })
      .map((c) => c.name);
    expect(evil).toBe('Evil name with spaces');
    expect(long).toHaveLength(100);
    expect(long?.endsWith('…')).toBe(true);
    s.lookedUp('g1', 'server', '\u0000\u0007', 'gone');
    s.lookedUp('g1', 'server', 'A name', 'v'.repeat(101));
    expect(s.choices({ kind: 'server', place: 'g1', userId: 'u', typed: '' })).toEqual([]);
  });

  it('remembers a server by its id, and outside a server by the user', () => {
    expect(placeOf({ guildId: '1', user: { id: '2' } })).toBe('1');
    expect(placeOf({ guildId: null, user: { id: '2' } })).toBe('user:2');
  });
});
