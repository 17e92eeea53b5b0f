/**
 * A hostile or broken directory through the real bot: an ID that is a path steers no request
 * to Discord, a time past what a Date holds shows as unknown (never `NaN`), a body dripped a byte
 * at a time ends at the timeout, and a day-long Retry-After is told at once.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { drip, type HostileServer, startHostileServer } from '../contract/hostile-server.js';
import { makeGuild, makeUser, type RecordedRestRequest } from '../discord/index.js';
import { IDS } from '../emulator/index.js';
import { expectPrivate, expectPublic, itLeavesNoTrace } from './expectations.js';
import {
  type Answer,
  buttonsOf,
  type Harness,
  optionString,
  sentMessages,
  startHarness,
  visibleText,
} from './harness.js';

const guild = makeGuild({ id: IDS.serverFresh, name: 'BotiCord Community' });
const kerdoku = makeUser({ id: IDS.plainBot, username: 'kerdoku', global_name: 'Kerdoku', bot: true });

let h: Harness;
let hostile: HostileServer;

beforeAll(async () => {
  h = await startHarness({ guilds: [guild], users: [kerdoku] });
  hostile = await startHostileServer();
});
afterAll(async () => {
  await h?.close();
  await hostile?.close();
});
beforeEach(() => h.reset());

/** Adds a copy of the sample bot under another ID and short code. */
function seedBot(id: string, shortCode: string): void {
  const sample = h.emu.state.bots.get(IDS.plainBot);
  if (!sample) throw new Error('sample bot missing');
  h.emu.state.bots.set(id, { ...structuredClone(sample), id, shortCode });
}

/** The command's answer and the requests the bot sent Discord while it ran. */
async function withRequests(
  run: () => Promise<Answer>,
): Promise<{ answer: Answer; sent: RecordedRestRequest[] }> {
  const from = h.discord.requests.length;
  const answer = await run();
  return { answer, sent: h.discord.requests.slice(from) };
}

function bot(ref: string): Promise<Answer> {
  return h.run({ guildId: guild.id, name: 'bot', options: [optionString('ref', ref)] });
}

describe("IDs from the directory's answers", () => {
  it.each([
    ['a path to a guild', `../guilds/${IDS.serverFresh}`],
    ['the bot itself with a query', '../users/@me?x='],
    ['an encoded path', '..%2Fguilds%2F1'],
  ])('a bot whose id is %s gets its card, and Discord nothing but the answer', async (_what, id) => {
    seedBot(id, 'hostile');
    const { answer, sent } = await withRequests(() => bot('hostile'));
    expect(answer.outcome).toBe('shown');
    const { message, embed } = expectPublic(answer);
    // No identity from Discord: the card is named by its short code.
    expect(embed.title).toBe('Bot hostile');
    expect(embed.thumbnail).toBeUndefined();
    // The ID cannot travel in a custom_id: no comments button.
    expect(buttonsOf(message).map((b) => b.label)).not.toContain('Comments');
    // Only the interaction's own routes: no GET of a user, a guild or anything else.
    const elsewhere = sent.filter((r) => !/^\/(interactions|webhooks)\//.test(r.path));
    expect(elsewhere.map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });

  it('a bot with a real ID still gets its name and avatar from Discord', async () => {
    const { answer, sent } = await withRequests(() => bot('kerdoku'));
    expect(expectPublic(answer).embed.title).toBe('Bot Kerdoku');
    expect(sent.filter((r) => r.method === 'GET').map((r) => r.path)).toEqual([`/users/${IDS.plainBot}`]);
  });
});

describe('times out of range', () => {
  it('comments dated past what a Date holds show "time unknown", never NaN', async () => {
    h.emu.state.comments.bots.set(IDS.plainBot, [
      { userID: IDS.profileUser, text: 'far future', vote: 1, isUpdated: false, createdAt: 1e300 },
      { userID: IDS.otherProfileUser, text: 'just past', vote: -1, isUpdated: true, updatedAt: 8.64e15 + 1 },
    ]);
    const answer = await h.click({ guildId: guild.id, customId: `comments:o:b:${IDS.plainBot}:0` });
    expect(answer.outcome).toBe('page:0');
    const texts = sentMessages(answer.requests).map(visibleText).join('\n');
    expect(texts).toContain('far future');
    expect(texts).not.toMatch(/NaN|<t:-?\d*[^\d:]/);
    expect(texts.match(/ · time unknown/g)).toHaveLength(2);
  });
});

describe('deadlines', () => {
  it('a body dripped a byte every 400 ms: "not answering" soon after DIRECTORY_TIMEOUT_MS', async () => {
    hostile.handle((_req, res) => drip(res));
    await h.restartBot({
      DIRECTORY_API_URL: hostile.url,
      DIRECTORY_TIMEOUT_MS: '1000',
      DIRECTORY_MAX_RETRIES: '1',
    });
    const started = performance.now();
    const answer = await bot('kerdoku');
    expect(answer.outcome).toBe('error:Unavailable');
    expect(expectPrivate(answer).embed.description).toBe(
      '❌ The directory is not answering right now. Try again in a few minutes.',
    );
    // Two attempts of a second and one backoff.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(hostile.requests).toHaveLength(2);
  });

  it('/up answered 429 with Retry-After: 86400 says "busy, try again <t:…:R>" at once', async () => {
    await h.restartBot();
    h.emu.faults.add({ kind: 'rate-limit', retryAfterMs: 86_400_000, method: 'POST', path: /^\/server$/ });
    const started = Date.now();
    const answer = await h.run({ guildId: guild.id, name: 'up' });
    expect(answer.outcome).toBe('error:RateLimited');
    const description = expectPrivate(answer).embed.description ?? '';
    const match = /^The directory is busy\. Try again <t:(\d+):R>\.$/.exec(description);
    expect(match).not.toBeNull();
    expect(Number(match?.[1])).toBeGreaterThanOrEqual(Math.floor(started / 1000) + 86_399);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(h.emu.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['POST /v2/server 429']);
  });
});

itLeavesNoTrace(() => h);
