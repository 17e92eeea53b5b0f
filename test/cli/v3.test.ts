/**
 * The built `directory` binary on API v3 (the default) against the emulator's v3: look-ups,
 * stats, search, v1/v2-only commands, the refused --token-kind, and the search key never shown.
 * `npm test` builds before vitest runs; in a manual run, build first (npm run build).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, IDS, startEmulator, V3_KEYS } from '../emulator/index.js';
import { MAIN, type Result, spawnResult } from '../support/spawn.js';

let emu: Emulator;
let cwd: string;

/** The binary with only the variables given: no DIRECTORY_API_VERSION, so v3 by default. */
function cli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return spawnResult(process.execPath, [MAIN, ...args], {
    cwd,
    env: { DIRECTORY_API_URL: emu.url, ...env },
  });
}

const owner = { DIRECTORY_TOKEN: V3_KEYS.owner };
const kerdoku = { DIRECTORY_TOKEN: V3_KEYS.kerdoku };

/** Whether a secret shows in either stream, whole or as the 40 characters a message may echo. */
function leaks(r: Result, secret: string): boolean {
  const all = r.stdout + r.stderr;
  return all.includes(secret) || all.includes(secret.slice(0, 16));
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  emu = await startEmulator({ rateLimits: false });
  cwd = mkdtempSync(join(tmpdir(), 'directory-cli-v3-'));
});

afterAll(async () => {
  await emu?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

beforeEach(() => {
  emu.setRateLimits(false);
  emu.reset();
});

describe('v3 look-ups', () => {
  it('shows a bot with what v3 adds: name, up count, rating, reviews, ups, tag codes', async () => {
    const r = await cli(['bot', IDS.plainBot]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^id:\s+724663360934772797$/m);
    expect(r.stdout).toMatch(/^name:\s+Kerdoku$/m);
    expect(r.stdout).toMatch(/^short code:\s+kerdoku$/m);
    expect(r.stdout).toMatch(/^up count:\s+37$/m);
    // ratings [{5,1},{4,1}]: (5 + 4) / 2
    expect(r.stdout).toMatch(/^rating:\s+★ 4\.5 \(2 ratings\)$/m);
    expect(r.stdout).toMatch(/^reviews:\s+2$/m);
    expect(r.stdout).toMatch(/^first reviews:\s+★ 5 .*: aboba$/m);
    expect(r.stdout).toMatch(/^ups counting:\s+\d+/m);
    expect(r.stdout).toMatch(/^tags:\s+#1$/m);
    expect(r.stdout).toMatch(/^members:\s+348986$/m);
    expect(emu.requests.map((q) => `${q.method} ${q.path}`)).toEqual([`GET /v3/bots/${IDS.plainBot}`]);
    expect(emu.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('prints the validated v3 bot as JSON', async () => {
    const r = await cli(['bot', IDS.plainBot, '--json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const data = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(data).toMatchObject({
      id: IDS.plainBot,
      name: 'Kerdoku',
      upCount: 37,
      shortCode: 'kerdoku',
      tagCodes: [1, 5, 0, 9],
      ratings: expect.arrayContaining([{ rating: 5, count: 1 }]),
    });
    expect(data.reviews).toHaveLength(2);
  });

  it('shows a server with its rating, reviews, moderators and the moderators’ reply', async () => {
    const r = await cli(['server', IDS.serverFresh]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^name:\s+BotiCord Community$/m);
    expect(r.stdout).toMatch(/^up count:\s+\d+$/m);
    expect(r.stdout).toMatch(/^rating:\s+★ \d\.\d \(\d+ ratings?\)$/m);
    expect(r.stdout).toMatch(/^moderators:\s+\d+$/m);
    expect(r.stdout).toContain('↳ moderators: ');
    expect(emu.requests.map((q) => `${q.method} ${q.path}`)).toEqual([`GET /v3/servers/${IDS.serverFresh}`]);
    const json = await cli(['server', IDS.serverFresh, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: IDS.serverFresh, name: 'BotiCord Community' });
  });

  it('shows a user with their bots and servers (GET /v3/users/{id})', async () => {
    const r = await cli(['user', `<@${IDS.profileUser}>`]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^name:\s+cipherka$/m);
    expect(r.stdout).toMatch(/^bots \(1\):\s+672406367344132116 \(sonata\)/m);
    expect(r.stdout).toMatch(/^servers \(1\):\s+722424773233213460 \(boticord\)/m);
    expect(emu.requests.map((q) => `${q.method} ${q.path}`)).toEqual([`GET /v3/users/${IDS.profileUser}`]);
    const json = JSON.parse((await cli(['user', IDS.profileUser, '--json'])).stdout) as Record<
      string,
      unknown
    >;
    expect(json).toMatchObject({ id: IDS.profileUser, name: 'cipherka', bots: [{ id: IDS.serviceBot }] });
  });

  it('keeps `user` as an alias of `profile` on v2', async () => {
    const user = await cli(['user', IDS.profileUser, '--api-version', 'v2']);
    const profile = await cli(['profile', IDS.profileUser], { DIRECTORY_API_VERSION: 'v2' });
    expect(user).toMatchObject({ code: 0, stderr: '' });
    expect(user.stdout).toBe(profile.stdout);
    expect(emu.requests.map((q) => q.path)).toEqual([
      `/v2/profile/${IDS.profileUser}`,
      `/v2/profile/${IDS.profileUser}`,
    ]);
  });

  it('says a not found bot with exit code 4', async () => {
    const r = await cli(['bot', '111111111111111111']);
    expect(r.code).toBe(4);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });
});

describe('v3 stats', () => {
  it('posts the counts given above 0 with the bare key, and nothing else', async () => {
    const r = await cli(
      ['stats', '--bot', IDS.plainBot, '--servers', '2600', '--shards', '0', '--members', '350000'],
      kerdoku,
    );
    expect(r).toMatchObject({ code: 0, stdout: 'statistics posted\n', stderr: '' });
    const posts = emu.requests.filter((q) => q.method === 'POST');
    expect(posts.map((q) => q.path)).toEqual([`/v3/bots/${IDS.plainBot}/stats`]);
    expect(posts[0]?.headers.authorization).toBe(V3_KEYS.kerdoku);
    expect(JSON.parse(posts[0]?.body ?? '')).toEqual({ servers: 2600, members: 350000 });
    expect(emu.v3.lastStats(IDS.plainBot)).toMatchObject({ servers: 2600, members: 350000 });
  });

  it('refuses to post nothing, and needs --bot; --users is v1/v2’s', async () => {
    const nothing = await cli(['stats', '--bot', IDS.plainBot, '--servers', '0'], kerdoku);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toMatch(/^directory: nothing to post: .*--members above 0/);
    const noBot = await cli(['stats', '--servers', '5'], kerdoku);
    expect(noBot.code).toBe(2);
    expect(noBot.stderr).toMatch(/^directory: missing --bot$/m);
    const users = await cli(['stats', '--bot', IDS.plainBot, '--users', '5'], kerdoku);
    expect(users.code).toBe(2);
    expect(users.stderr).toMatch(/--members/);
    expect(emu.requests).toEqual([]);
  });

  it('keeps v2’s flags on v2 and refuses v3’s there', async () => {
    const v2 = { DIRECTORY_API_VERSION: 'v2' };
    const bad = await cli(['stats', '--servers', '1', '--shards', '1', '--members', '1'], v2);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--members is for API v3/);
    expect(emu.requests).toEqual([]);
  });
});

describe('v3 search', () => {
  it('lists hits, readable and as JSON, and never shows the search key', async () => {
    const r = await cli(['search', 'bot', 'kerdoku', '--limit', '5'], owner);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^id\s+name\s+ups\s+rating\s+short description$/m);
    expect(r.stdout).toMatch(/^724663360934772797\s+Kerdoku\s/m);
    const json = await cli(['search', 'bot', 'kerdoku', '--json'], owner);
    expect(json.code).toBe(0);
    const hits = JSON.parse(json.stdout) as { id: string; kind: string }[];
    expect(hits[0]).toMatchObject({ id: IDS.plainBot, kind: 'bot' });
    const key = emu.v3.searchKey(V3_KEYS.owner);
    for (const out of [r, json]) {
      expect(leaks(out, key)).toBe(false);
      expect(leaks(out, V3_KEYS.owner)).toBe(false);
    }
    const search = emu.requests.find((q) => q.path.includes('/indexes/bots/search'));
    expect(search?.headers.authorization).toBe(`Bearer ${key}`);
  });

  it('searches servers', async () => {
    const r = await cli(['search', 'server', 'boticord', '--json'], owner);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: IDS.serverFresh })]),
    );
  });

  it('keeps the search key out of errors and of every command’s JSON', async () => {
    emu.v3.rotateSearchKey();
    const comments = await cli(['comments', 'profile', IDS.profileUser, '--json'], owner);
    const bot = await cli(['bot', 'kerdoku', '--json'], owner);
    expect(bot.code).toBe(0);
    const key = emu.v3.searchKey(V3_KEYS.owner);
    for (const out of [comments, bot]) expect(leaks(out, key)).toBe(false);
    const bad = await cli(['search', 'bot', 'x', '--limit', '500'], owner);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^directory: --limit must be from 1 to 100/);
  });

  it('is refused on v2 in one line with the usage exit code', async () => {
    const r = await cli(['search', 'bot', 'kerdoku', '--api-version', 'v2']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toBe(
      "directory: 'search bot' exists only in API v3, not v2: run it with --api-version v3 (or DIRECTORY_API_VERSION=v3)\n",
    );
    expect(emu.requests).toEqual([]);
  });

  it('needs the API key, and says so in one line', async () => {
    const r = await cli(['search', 'server', 'boticord']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^directory: .*needs a directory API key \(DIRECTORY_TOKEN\)\n$/);
  });
});

describe('versions and flags', () => {
  it.each([
    [
      ['up', '--server', IDS.serverFresh, '--user', IDS.profileUser, '--channel', '1', '--channel-name', 'g'],
      'up',
    ],
    [['links', 'list'], 'links list'],
    [['validate-bot', IDS.serverFresh, IDS.plainBot], 'validate-bot'],
    [['token'], 'token'],
  ])('answers %j on v3 in one line naming the version to use', async (args, name) => {
    const r = await cli(args, owner);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(
      new RegExp(
        `^directory: '${name}' exists only in API v2(, v1)?, not v3: run it with --api-version v2 .*\\n$`,
      ),
    );
    expect(emu.requests).toEqual([]);
    const json = await cli([...args, '--json'], owner);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { kind: 'Usage', status: null } });
  });

  it('refuses --token-kind with v3 in one line that says why', async () => {
    const r = await cli(['bot', IDS.plainBot, '--token-kind', 'Bot']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.stderr).toMatch(/--token-kind \(DIRECTORY_TOKEN_KIND\).*v3 takes the key bare/);
    expect(emu.requests).toEqual([]);
    const env = await cli(['bot', IDS.plainBot], { DIRECTORY_TOKEN_KIND: 'Profile' });
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/DIRECTORY_TOKEN_KIND.*v3 takes the key bare/);
    const v2 = await cli(['bot', IDS.plainBot, '--token-kind', 'Bot', '--api-version', 'v2']);
    expect(v2.code).toBe(0);
  });

  it('takes --search-url on v3 and refuses it on v2', async () => {
    const r = await cli(['search', 'bot', 'kerdoku', '--search-url', emu.v3.searchUrl], owner);
    expect(r.code).toBe(0);
    const v2 = await cli(['bot', IDS.plainBot, '--search-url', emu.v3.searchUrl, '--api-version', 'v2']);
    expect(v2.code).toBe(2);
    expect(v2.stderr).toMatch(/--search-url \(DIRECTORY_SEARCH_URL\).*v3 setting/);
  });

  it('redacts the API key in errors as the token', async () => {
    const r = await cli(['bot', 'kerdoku', '--token', `${V3_KEYS.owner}`, '--url', 'http://127.0.0.1:1']);
    expect(r.code).not.toBe(0);
    expect(leaks(r, V3_KEYS.owner)).toBe(false);
  });

  it('help lists the new commands with the versions each works on', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ {2}search bot\|server <query>\s+.*\[API v3\]$/m);
    expect(r.stdout).toMatch(/^ {2}user <userId>\s+/m);
    expect(r.stdout).toMatch(/^ {2}up\s+.*\[API\s+v2, v1\]$/m);
    expect(r.stdout).toContain('--api-version v3|v2|v1');
    expect(r.stdout).toContain('--search-url URL');
    const stats = await cli(['stats', '--help']);
    expect(stats.stdout).toContain('Works on: API v3, v2, v1');
    expect(stats.stdout).toContain('v3: the API key (bare)');
  });
});
