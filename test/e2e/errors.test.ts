/**
 * Every error path ends in one private answer: the public "thinking…" placeholder is deleted and
 * an ephemeral follow-up explains, with one log line at the error's level. The directory is
 * missing records, refuses the token, refuses the server, is down, is slow, answers nonsense.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeGuild } from '../discord/index.js';
import {
  DEFAULT_COOLDOWN_MS,
  IDS,
  NOT_UPDATED_SEED_MESSAGE,
  PRIVATE_BOT_SERVERS,
  TOKENS,
} from '../emulator/index.js';
import { expectPrivate, expectPublic, itLeavesNoTrace } from './expectations.js';
import {
  type Answer,
  closedPortUrl,
  fieldValue,
  type Harness,
  LEVEL,
  type LogEntry,
  newUser,
  optionString,
  startHarness,
} from './harness.js';

const freshGuild = makeGuild({ id: IDS.serverFresh, name: 'BotiCord Community' });
const cooldownGuild = makeGuild({ id: IDS.serverCooldown, name: 'Пиксельная Таверна' });
const notUpdatedGuild = makeGuild({ id: IDS.serverNotUpdated, name: 'Закрытый клуб' });
const unlistedGuild = makeGuild({ name: 'Not listed' });
const WRONG_TOKEN = 'emu-bot-wrong-9f8e7d6c5b4a39281706';

let h: Harness;

beforeAll(async () => {
  // Without the logger's scrubbing: a token must not reach a log line in the first place.
  h = await startHarness({
    guilds: [freshGuild, cooldownGuild, notUpdatedGuild, unlistedGuild],
    scrubSecrets: false,
  });
});
afterAll(async () => {
  await h?.close();
});
beforeEach(() => h.reset());

function bot(ref: string, guildId = freshGuild.id): Promise<Answer> {
  return h.run({ guildId, name: 'bot', options: [optionString('ref', ref)] });
}

function up(guildId: string): Promise<Answer> {
  return h.run({ guildId, name: 'up' });
}

/** The router's "command failed" line for this answer's user. */
function failureLine(answer: Answer): LogEntry {
  const line = h
    .entries()
    .find((e) => e.msg === 'command failed' && e.userId === answer.line.userId && e.command !== undefined);
  if (!line) throw new Error(`no "command failed" line for user ${String(answer.line.userId)}`);
  return line;
}

describe('not found', () => {
  it('a bot the directory does not know', async () => {
    const answer = await bot('100000000000000001');
    expect(answer.outcome).toBe('error:NotFound');
    expect(expectPrivate(answer).embed).toEqual({
      type: 'rich',
      color: 0xe74c3c,
      description: '❌ This bot is not in the directory.',
    });
    expect(failureLine(answer)).toMatchObject({ level: LEVEL.info, code: 'NotFound', command: 'bot' });
  });

  it('a server the directory does not know, by reference and as the current guild', async () => {
    const byRef = await h.run({
      guildId: freshGuild.id,
      name: 'server',
      options: [optionString('ref', 'nosuchserver')],
    });
    expect(expectPrivate(byRef).embed.description).toBe('❌ This server is not in the directory.');
    const current = await h.run({ guildId: unlistedGuild.id, name: 'server' });
    expect(h.emu.requests.map((r) => r.path)).toEqual([
      '/v2/server/nosuchserver',
      `/v2/server/${unlistedGuild.id}`,
    ]);
    expect(expectPrivate(current).embed.description).toBe('❌ This server is not in the directory.');
  });

  it('a user without a profile', async () => {
    const answer = await h.run({ guildId: freshGuild.id, name: 'profile', user: newUser('stranger') });
    expect(answer.outcome).toBe('error:NotFound');
    expect(expectPrivate(answer).embed.description).toBe('❌ This user has no profile in the directory.');
  });
});

describe('bad input', () => {
  it('a reference that tries another route is refused before anything is sent', async () => {
    const answer = await bot('../links/get');
    expect(answer.outcome).toBe('error:InvalidInput');
    expect(expectPrivate(answer).embed.description).toBe(
      '❌ That is not a bot reference. Give a bot ID, short code, mention or directory page link.',
    );
    const server = await h.run({
      guildId: freshGuild.id,
      name: 'server',
      options: [optionString('ref', '../links/get')],
    });
    expect(expectPrivate(server).embed.description).toMatch(/^❌ That is not a server reference\./);
    expect(h.emu.requests).toEqual([]);
  });

  it('commands that need a guild say so in a DM', async () => {
    const upInDm = await h.run({ name: 'up' });
    expect(upInDm.outcome).toBe('error:GuildOnly');
    const { embed } = expectPrivate(upInDm);
    expect(embed.title).toBe('❌ Could not raise the server');
    expect(embed.description).toBe('This command works only in a server.');
    // /server works in a DM with a reference; without one it says which is missing (anywhere.test.ts).
    const serverInDm = await h.run({ name: 'server' });
    expect(expectPrivate(serverInDm).embed.description).toBe(
      '❌ Outside a server, say which server: give its ID, short code or directory page link.',
    );
    expect(h.emu.requests).toEqual([]);
  });
});

describe('/up outcomes that are not a success', () => {
  it('"not yet" during the cooldown is private', async () => {
    const answer = await up(cooldownGuild.id);
    expect(answer.outcome).toBe('cooldown');
    const { embed } = expectPrivate(answer);
    expect(embed.title).toBe('⏳ Not yet');
    expect(embed.color).toBe(0xf1c40f);
    expect(embed.description).toMatch(
      /^❌ Сервер пока нельзя поднять! Следующий \*\*UP\*\* будет доступен через/,
    );
    expect(fieldValue(embed, 'Ups')).toBe('17');
    const last = h.emu.state.ups.get(cooldownGuild.id) ?? 0;
    const unix = Math.floor((last + DEFAULT_COOLDOWN_MS) / 1000);
    expect(fieldValue(embed, 'Next up')).toBe(`<t:${unix}:R> (<t:${unix}:f>)`);
  });

  it('updated: false is private, with the warning look and a warning for the operator', async () => {
    const answer = await up(notUpdatedGuild.id);
    expect(answer.outcome).toBe('notUpdated');
    const { embed } = expectPrivate(answer);
    expect(embed.title).toBe('⚠️ The directory did not update the server');
    expect(embed.color).toBe(0xe67e22);
    expect(embed.description).toBe(NOT_UPDATED_SEED_MESSAGE.replace(':x:', '❌'));
    const warning = h.entries().find((e) => e.msg === 'the directory did not update the server');
    expect(warning).toMatchObject({ level: LEVEL.warn, guildId: notUpdatedGuild.id });
  });
});

describe('the directory misbehaves', () => {
  it('invalid answers (drift) are reported as unreadable and logged as errors', async () => {
    h.emu.faults.add({ kind: 'drift', path: /^\/bot\// });
    const answer = await bot('kerdoku');
    expect(answer.outcome).toBe('error:InvalidResponse');
    expect(expectPrivate(answer).embed.description).toBe(
      '❌ The directory sent an answer the bot cannot read. Try again later.',
    );
    expect(failureLine(answer)).toMatchObject({ level: LEVEL.error, code: 'InvalidResponse' });
  });

  it('a 502 HTML page: the look-up is retried, then "not answering"', async () => {
    h.emu.faults.add({ kind: 'html', status: 502, path: /^\/bot\// });
    const answer = await bot('kerdoku');
    expect(answer.outcome).toBe('error:Unavailable');
    expect(expectPrivate(answer).embed.description).toBe(
      '❌ The directory is not answering right now. Try again in a few minutes.',
    );
    expect(h.emu.requests.filter((r) => r.path === '/v2/bot/kerdoku')).toHaveLength(3);
    expect(failureLine(answer)).toMatchObject({ level: LEVEL.warn, code: 'Unavailable' });
  });

  it('a 502 HTML page on /up: not repeated (the up may have happened), answered privately', async () => {
    h.emu.faults.add({ kind: 'html', status: 502, method: 'POST', path: /^\/server$/ });
    const answer = await up(freshGuild.id);
    expect(answer.outcome).toBe('error:Unavailable');
    const { embed } = expectPrivate(answer);
    expect(embed.title).toBe('❌ Could not raise the server');
    expect(embed.description).toBe('The directory is not answering right now. Try again in a few minutes.');
    expect(h.emu.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('slower than 3 s: deferred in time, answered through the deferral', async () => {
    h.emu.faults.add({ kind: 'latency', ms: 3_500, path: /^\/bot\//, times: 1 });
    const answer = await bot('kerdoku');
    const first = await answer.handle.firstResponse();
    expect(first.type).toBe(5);
    expect(first.at - answer.handle.sentAt).toBeLessThan(3_000);
    expect(answer.outcome).toBe('shown');
    const { embed } = expectPublic(answer);
    expect(embed.title).toBe('Bot kerdoku');
    const edit = answer.requests.find((r) => r.method === 'PATCH');
    expect((edit?.at ?? 0) - answer.handle.sentAt).toBeGreaterThan(3_400);
    expect(edit?.status).toBe(200);
  });
});

describe('configuration problems and refusals', () => {
  it('connection refused: "not answering" for look-ups and ups', async () => {
    await h.restartBot({ DIRECTORY_API_URL: await closedPortUrl() });
    const lookUp = await bot('kerdoku');
    expect(lookUp.outcome).toBe('error:Unavailable');
    expect(expectPrivate(lookUp).embed.description).toBe(
      '❌ The directory is not answering right now. Try again in a few minutes.',
    );
    const raise = await up(freshGuild.id);
    expect(raise.outcome).toBe('error:Unavailable');
    expect(expectPrivate(raise).embed.description).toBe(
      'The directory is not answering right now. Try again in a few minutes.',
    );
  });

  it('a wrong directory token: "misconfigured" for the user, an error line for the operator', async () => {
    await h.restartBot({ DIRECTORY_TOKEN: WRONG_TOKEN });
    const answer = await up(freshGuild.id);
    expect(answer.outcome).toBe('error:Unauthorized');
    expect(h.emu.requests.map((r) => r.headers.authorization)).toEqual([`Bot ${WRONG_TOKEN}`]);
    const { embed } = expectPrivate(answer);
    expect(embed.title).toBe('❌ Could not raise the server');
    expect(embed.description).toBe(
      "The bot is misconfigured: the directory refused its token. The bot's operator has been told.",
    );
    expect(failureLine(answer)).toMatchObject({ level: LEVEL.error, code: 'Unauthorized', command: 'up' });
    // The card still works: look-ups need no token.
    expect((await bot('kerdoku')).outcome).toBe('shown');
  });

  it('a PrivateBot token on a server it may not raise: the refusal explains why', async () => {
    await h.restartBot({ DIRECTORY_TOKEN: TOKENS.privateBot, DIRECTORY_TOKEN_KIND: 'PrivateBot' });
    expect(PRIVATE_BOT_SERVERS).not.toContain(freshGuild.id);
    const answer = await up(freshGuild.id);
    expect(answer.outcome).toBe('error:Forbidden');
    expect(h.emu.requests.map((r) => r.headers.authorization)).toEqual([`PrivateBot ${TOKENS.privateBot}`]);
    const { embed } = expectPrivate(answer);
    expect(embed.description).toBe(
      'The directory refused: this server is not among the servers this bot may raise.',
    );
    expect(failureLine(answer)).toMatchObject({ level: LEVEL.warn, code: 'Forbidden' });
    // On one of its five servers the same token gets through (here: "not yet").
    expect((await up(cooldownGuild.id)).outcome).toBe('cooldown');
  });
});

describe('Discord refuses the deferral', () => {
  const CALLBACK = /^\/interactions\/\d+\/[^/]+\/callback$/;

  it('a 429: the deferral is sent again after the wait, and the answer arrives', async () => {
    h.discord.injectRestFault({
      method: 'POST',
      path: CALLBACK,
      status: 429,
      body: { message: 'You are being rate limited.', retry_after: 0.3, global: false },
      headers: { 'retry-after': '1' },
      times: 1,
    });
    const answer = await bot('kerdoku');
    const callbacks = answer.requests.filter((r) => CALLBACK.test(r.path));
    expect(callbacks.map((r) => r.status)).toEqual([429, 204]);
    const [first, second] = callbacks;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(250);
    expect(answer.outcome).toBe('shown');
    expect(expectPublic(answer).embed.title).toBe('Bot kerdoku');
  });

  it('an interaction Discord no longer knows: one warning, nothing more sent, the directory not asked', async () => {
    h.discord.injectRestFault({
      method: 'POST',
      path: CALLBACK,
      status: 404,
      body: { message: 'Unknown interaction', code: 10062 },
      times: 1,
    });
    const answer = await up(freshGuild.id);
    expect(answer.outcome).toBe('unanswered');
    expect(answer.requests.map((r) => r.status)).toEqual([404]);
    expect(h.emu.requests.filter((r) => r.method === 'POST')).toEqual([]);
    const warnings = h
      .entries()
      .filter((e) => e.msg === 'could not answer the interaction' && e.guildId === freshGuild.id);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: LEVEL.warn, err: { status: 404, code: 10062 } });
    expect(h.lines.filter((line) => line.includes(answer.handle.token))).toEqual([]);
  });
});

itLeavesNoTrace(() => h);
