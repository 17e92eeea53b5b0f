/** run(), the exit-code mapping and the readable formats, in process. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeFailure, UsageError } from '../../src/cli/errors.js';
import { clean, formatComments, formatUp, keyValues, relative, table } from '../../src/cli/format.js';
import { run } from '../../src/cli/run.js';
import { ConfigError } from '../../src/config/env.js';
import {
  BadRequestError,
  ForbiddenError,
  InvalidArgumentError,
  InvalidResponseError,
  NotFoundError,
  RateLimitedError,
  TokenKindNotAcceptedError,
  UnauthorizedError,
  UnavailableError,
} from '../../src/directory/errors.js';
import type { DirectoryComment, ServerUpResult } from '../../src/directory/types.js';
import { type Emulator, startEmulator, TOKENS } from '../emulator/index.js';

function capture() {
  let text = '';
  return {
    write(chunk: string, done: () => void) {
      text += chunk;
      done();
      return true;
    },
    get text() {
      return text;
    },
  };
}

async function runCli(argv: string[], env: Record<string, string> = {}) {
  const stdout = capture();
  const stderr = capture();
  const code = await run(argv, { stdout, stderr, env, now: () => Date.parse('2024-01-01T00:00:00Z') });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('describeFailure', () => {
  const ctx = { method: 'getBot', route: 'GET /bot/{ref}' };
  it.each([
    [new UsageError('missing <ref>', 'bot'), 2],
    [new ConfigError(['DIRECTORY_API_URL: expected an http(s) URL']), 2],
    [new InvalidArgumentError('bad'), 2],
    [new BadRequestError('Bad request', ctx), 2],
    [new UnauthorizedError('Unauthorized', ctx), 3],
    [new ForbiddenError('Forbidden', ctx), 3],
    [new TokenKindNotAcceptedError('postBotStats', 'Profile', ['Bot']), 3],
    [new NotFoundError('Bot not found', ctx), 4],
    [new RateLimitedError('Too many requests', ctx), 5],
    [new UnavailableError('the directory answered 503', { ...ctx, reason: 'status' }), 6],
    [new InvalidResponseError('not JSON', { ...ctx, excerpt: '<html>' }), 7],
    [new Error('boom'), 1],
    ['a string', 1],
  ])('%s → %i', (err, code) => {
    const failure = describeFailure(err);
    expect(failure.exitCode).toBe(code);
    expect(failure.message).not.toContain('\n');
  });

  it('prints the wait of a rate limit when known', () => {
    const err = new RateLimitedError('slow down', { retryAfterMs: 90_000 });
    expect(describeFailure(err).message).toBe('rate limited by the directory (slow down); try again in 90 s');
    expect(describeFailure(new RateLimitedError('x', { retryAfterMs: 300_000 })).message).toContain('5 min');
  });

  it('names the flag behind a bad configuration value', () => {
    const err = new ConfigError(['DIRECTORY_API_URL: expected an http(s) URL (got "x")', 'LOG_LEVEL: bad']);
    const failure = describeFailure(err, new Map([['DIRECTORY_API_URL', '--url']]));
    expect(failure.message).toBe(
      'invalid configuration: --url (DIRECTORY_API_URL): expected an http(s) URL (got "x"); LOG_LEVEL: bad',
    );
  });
});

describe('formats', () => {
  it('aligns keys and continues lists under the value column', () => {
    expect(
      keyValues([
        ['id', '1'],
        ['short code', null],
        ['tags', ['a', 'b']],
        ['ok', true],
      ]),
    ).toBe('id:         1\nshort code: -\ntags:       a\n            b\nok:         yes\n');
  });

  it('pads table columns except the last', () => {
    expect(table(['a', 'bb'], [['ccc', 'd']])).toBe('a    bb\nccc  d\n');
  });

  it('escapes terminal control characters in directory text', () => {
    expect(clean('red\u001b[31m\u0007 bell\r\nnext\ttab')).toBe('red\\u001b[31m\\u0007 bell\nnext tab');
  });

  it('says how long until the next up', () => {
    const now = Date.parse('2024-01-01T00:00:00Z');
    expect(relative(new Date(now - 1), now)).toBe('now');
    expect(relative(new Date(now + 30_000), now)).toBe('in 0h 1m');
    expect(relative(new Date(now + 3 * 3_600_000 + 59 * 60_000 + 5_000), now)).toBe('in 4h 0m');
    expect(relative(new Date(now + 26 * 3_600_000 + 5 * 60_000), now)).toBe('in 26h 5m');
  });

  it('shows an up result', () => {
    const now = Date.parse('2024-01-01T00:00:00Z');
    const result: ServerUpResult = {
      serverId: '722424773233213460',
      up: 1,
      updated: true,
      bumps: 7,
      boost: true,
      upSuccessfully: true,
      nextUpAt: new Date(now + 4 * 3_600_000),
      timeToNextUpInMs: now + 4 * 3_600_000,
      message: ':white_check_mark: done',
    };
    expect(formatUp(result, now)).toBe(
      [
        'message: :white_check_mark: done',
        'server:  722424773233213460',
        'updated: yes',
        'up:      registered',
        'bumps:   7',
        'boost:   yes',
        'next up: 2024-01-01T04:00:00.000Z (in 4h 0m)',
        '',
      ].join('\n'),
    );
  });

  it('shows comments with their vote, time and text', () => {
    const comments: DirectoryComment[] = [
      { userId: '1'.repeat(18), text: 'great\nbot', vote: 1, isUpdated: false, at: new Date(0) },
      { userId: '2'.repeat(18), text: 'meh', vote: 0, isUpdated: true, at: null },
      { userId: '3'.repeat(18), text: 'bad', vote: -1, isUpdated: false, at: new Date(1000) },
    ];
    expect(formatComments(comments)).toBe(
      [
        `👍 1970-01-01T00:00:00.000Z  ${'1'.repeat(18)}`,
        '    great',
        '    bot',
        `·  unknown time  ${'2'.repeat(18)}  (edited)`,
        '    meh',
        `👎 1970-01-01T00:00:01.000Z  ${'3'.repeat(18)}`,
        '    bad',
        '',
      ].join('\n'),
    );
    expect(formatComments([])).toBe('no comments\n');
  });
});

describe('run()', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startEmulator({ rateLimits: false });
  });
  afterAll(async () => {
    await emu.close();
  });

  it('prints help and the version without configuration', async () => {
    expect(await runCli(['--help'], { DIRECTORY_API_URL: 'not a url' })).toMatchObject({
      code: 0,
      stderr: '',
    });
    const version = await runCli(['--version']);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);
    expect((await runCli(['help', 'links'])).stdout).toContain('directory links create --code C --link URL');
    expect((await runCli(['help', 'nothing'])).code).toBe(2);
  });

  it('reports a bad environment variable as a configuration error', async () => {
    const r = await runCli(['bot', 'kerdoku'], { DIRECTORY_API_URL: 'not a url' });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'directory: invalid configuration: DIRECTORY_API_URL: expected an http(s) URL (got "not a url")\n',
    );
  });

  it('finds the command after global flags with values', async () => {
    const r = await runCli(['--url', emu.url, '--api-version', 'v1', 'bot', 'kerdoku', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ shortCode: 'kerdoku' });
    expect(emu.requests.at(-1)?.path).toBe('/v1/bot/kerdoku');
  });

  it('sends the bare token in v1', async () => {
    const r = await runCli(['links', 'list', '--url', emu.url, '--api-version', 'v1'], {
      DIRECTORY_TOKEN: TOKENS.profile,
    });
    expect(r.code).toBe(0);
    expect(emu.requests.at(-1)?.headers.authorization).toBe(TOKENS.profile);
  });

  it('scrubs the token from everything it writes', async () => {
    const token = 'run-test-token-0123456789abcdef';
    const r = await runCli(['bots', '178404926869733376', '--url', emu.url], { DIRECTORY_TOKEN: token });
    expect(r.code).toBe(3);
    emu.faults.add({ kind: 'status', status: 500, message: `echo ${token}`, times: 1 });
    const echoed = await runCli(['bots', '178404926869733376', '--url', emu.url, '--retries', '0'], {
      DIRECTORY_TOKEN: token,
    });
    expect(echoed.code).toBe(6);
    expect(echoed.stderr).toBe(
      'directory: the directory is unavailable: the directory answered 500: echo [REDACTED]\n',
    );
  });
});
