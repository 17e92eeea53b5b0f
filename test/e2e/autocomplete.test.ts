/**
 * /bot and /server suggest as the user types (autocomplete, issue 24), through the real discord.js
 * client, the Discord stand-in and the directory emulator: the user's own bots, what was looked up
 * in this place, this server first for /server; answered from memory (callback type 8, never a
 * deferral), with no directory request per keystroke: the user's bots are asked once, in the
 * background, and show from the next keystroke on.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeGuild, makeUser, snowflake } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { itLeavesNoTrace } from './expectations.js';
import { type Harness, optionString, startHarness } from './harness.js';

const home = makeGuild({ id: IDS.serverFresh, name: 'BotiCord Community', memberCount: 438 });
const other = makeGuild({ id: '960000000000000088', name: 'Another Place' });
const kerdoku = makeUser({ id: IDS.plainBot, username: 'kerdoku', global_name: 'Kerdoku', bot: true });
/** A developer in the directory: the emulator has bots of hers. */
const cipherka = makeUser({ id: IDS.profileUser, username: 'cipherka', global_name: 'Cipherka' });

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ guilds: [home, other], users: [kerdoku, cipherka] });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => h.reset());

interface Choice {
  name: string;
  value: string;
}

/** One keystroke: the `ref` typed so far; the choices the bot answered with. */
async function typed(
  name: 'bot' | 'server',
  text: string,
  where: { guildId?: string; externalGuild?: { id: string }; user?: { id: string; username: string } },
): Promise<Choice[]> {
  const handle = h.discord.sendCommand({
    name,
    autocomplete: true,
    options: [{ ...optionString('ref', text), focused: true } as ReturnType<typeof optionString>],
    ...where,
  });
  const response = await handle.firstResponse(3_000);
  expect(response.type).toBe(8);
  return (response.data as { choices: Choice[] }).choices;
}

const directoryRequests = () => h.emu.requests.map((r) => `${r.method} ${r.path}`);
const someone = () => ({ id: snowflake(), username: `typist_${Math.random().toString(36).slice(2, 8)}` });

describe('autocomplete of /bot and /server', () => {
  it('/bot suggests a bot looked up in this server, and no directory request per keystroke', async () => {
    await h.run({ guildId: home.id, name: 'bot', options: [optionString('ref', 'kerdoku')] });
    const looked = h.emu.requests.length;
    const user = someone();
    const answers: Choice[][] = [];
    for (const text of ['', 'k', 'ke', 'ker', 'kerd', 'KERDO', 'x']) {
      answers.push(await typed('bot', text, { guildId: home.id, user }));
    }
    const kerdokuChoice = { name: 'Kerdoku (kerdoku)', value: 'kerdoku' };
    expect(answers.slice(0, 6)).toEqual(Array.from({ length: 6 }, () => [kerdokuChoice]));
    expect(answers[6]).toEqual([]);
    // Seven keystrokes: one look-up of the typist's own bots (in the background), nothing else.
    expect(directoryRequests().slice(looked)).toEqual([`GET /v2/bots/${user.id}`]);
    // Another server does not see this one's look-ups.
    expect(await typed('bot', 'ker', { guildId: other.id, user })).toEqual([]);
  });

  it("/bot suggests the developer's own bots from the next keystroke, anywhere", async () => {
    const first = await typed('bot', '', { user: cipherka });
    expect(first).toEqual([]);
    await expect
      .poll(() => directoryRequests(), { timeout: 3_000 })
      .toContain(`GET /v2/bots/${IDS.profileUser}`);
    let next: Choice[] = [];
    await expect
      .poll(
        async () => {
          next = await typed('bot', '', { user: cipherka });
          return next.length;
        },
        { timeout: 3_000 },
      )
      .toBeGreaterThan(0);
    for (const choice of next) {
      expect(choice.name.length).toBeLessThanOrEqual(100);
      expect(choice.value.length).toBeGreaterThan(0);
    }
    // Asked once: the keystrokes after are answered from memory.
    const asked = directoryRequests().filter((r) => r === `GET /v2/bots/${IDS.profileUser}`).length;
    await typed('bot', next[0]?.value.slice(0, 2) ?? '', { user: cipherka });
    expect(directoryRequests().filter((r) => r === `GET /v2/bots/${IDS.profileUser}`)).toHaveLength(asked);
  });

  it('/server suggests this server first, by name, then what was looked up here', async () => {
    await h.run({ guildId: home.id, name: 'server', options: [optionString('ref', 'boticord')] });
    const choices = await typed('server', '', { guildId: home.id, user: someone() });
    expect(choices[0]).toEqual({ name: 'BotiCord Community', value: home.id });
    expect(choices).toContainEqual({ name: 'BotiCord Community', value: 'boticord' });
    // Typing narrows them.
    expect(await typed('server', 'boticord', { guildId: home.id, user: someone() })).toEqual([
      { name: 'BotiCord Community', value: home.id },
      { name: 'BotiCord Community', value: 'boticord' },
    ]);
  });

  it('/server in a server the bot is not in suggests it as "This server"', async () => {
    const external = '970000000000000003';
    expect(await typed('server', '', { externalGuild: { id: external }, user: someone() })).toEqual([
      { name: 'This server', value: external },
    ]);
  });
});

describe('autocomplete, all in all', () => {
  itLeavesNoTrace(() => h);
});
