/**
 * The built binary against a hostile directory: every answer, error or not, carries terminal
 * controls (ESC/OSC/CSI sequences, C1, DEL, CR, bidi overrides and marks, line separators) in every
 * text field. Text mode must show none of them raw, on stdout or stderr; --json must stay valid
 * JSON whose strings are the directory's text, unchanged.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN, type Result, runDirectory } from '../support/spawn.js';

/** Retitles the window, clears the screen, recolours (C1 CSI), reverses the line, breaks it. */
const HOSTILE =
  '\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eevil\u202c\u2066x\u2069\u200e\u200f\u061c\u2028\u2029\u007f\r\u000b\u0000 end';

/**
 * What text mode must never print, spelled out code point by code point, apart from the code
 * under test: C0 but new line and tab, DEL, C1, bidi controls, line and paragraph separators.
 */
const FORBIDDEN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/u;

const BOT = '724663360934772797';
const SERVER = '722424773233213460';
const USER = '178404926869733376';
const TOKEN = 'hostile-test-token-0123456789';

interface Answer {
  status: number;
  body: unknown;
}

const routes = new Map<string, Answer>();
let server: Server;
let url: string;
let cwd: string;

const usualError = (status: number): Answer => ({
  status,
  body: { error: { code: status, message: HOSTILE } },
});
const h = (text: string): string => `${text}${HOSTILE}`;

const comment = {
  userID: HOSTILE,
  text: h('multi\nline '),
  vote: 1,
  isUpdated: false,
  createdAt: 1644388399,
};

const botBody = {
  id: BOT,
  shortCode: h('kerdoku'),
  links: [h('https://boticord.top/bot/')],
  server: { id: h('7'), approved: true },
  information: {
    bumps: 1,
    added: 1091,
    prefix: h('?'),
    permissions: 8,
    tags: [h('tag')],
    developers: [h('dev')],
    links: { discord: h('invite'), github: h('gh'), site: h('site') },
    library: h('discordpy'),
    shortDescription: h('short'),
    longDescription: h('long\r\nlines\ttab '),
    badge: h('badge'),
    stats: { servers: 1, shards: 1, users: 1 },
    status: h('APPROVED'),
  },
};

const serverBody = {
  id: SERVER,
  shortCode: h('boticord'),
  status: h('ACCEPT'),
  links: [h('page')],
  bot: { id: h('8'), approved: false },
  information: {
    name: h('name'),
    avatar: h('avatar'),
    members: [2, 1],
    owner: h('owner'),
    bumps: 3,
    tags: [h('tag')],
    links: {
      invite: h('i'),
      site: h('s'),
      youtube: h('y'),
      twitch: h('t'),
      steam: h('st'),
      vk: h('vk'),
    },
    shortDescription: h('short'),
    longDescription: h('long'),
    badge: h('badge'),
  },
};

const profileBody = {
  id: USER,
  status: h('status'),
  badge: h('badge'),
  shortCode: h('code'),
  site: h('site'),
  vk: h('vk'),
  steam: h('steam'),
  youtube: h('yt'),
  twitch: h('tw'),
  git: h('git'),
};

const upArgs = (...extra: string[]): string[] => [
  'up',
  '--server',
  SERVER,
  '--user',
  USER,
  '--channel',
  '722424773233213461',
  '--channel-name',
  'general',
  ...extra,
];

interface Case {
  name: string;
  args: string[];
  /** `METHOD /path` the command calls. */
  route: string;
  answer: Answer;
  exit: number;
  env?: Record<string, string>;
}

const ERRORS: Case[] = [
  { name: '404', args: ['bot', 'missing'], route: 'GET /v2/bot/missing', answer: usualError(404), exit: 4 },
  { name: '400', args: ['bot', 'refused'], route: 'GET /v2/bot/refused', answer: usualError(400), exit: 2 },
  { name: '401', args: ['bots', USER], route: `GET /v2/bots/${USER}`, answer: usualError(401), exit: 3 },
  {
    name: '403',
    args: ['validate-bot', SERVER, BOT],
    route: `GET /v2/server/${SERVER}/validateBot/${BOT}`,
    answer: usualError(403),
    exit: 3,
  },
  {
    name: '429',
    args: ['server', 'limited'],
    route: 'GET /v2/server/limited',
    answer: usualError(429),
    exit: 5,
  },
  {
    name: '500',
    args: ['profile', USER],
    route: `GET /v2/profile/${USER}`,
    answer: usualError(500),
    exit: 6,
  },
  {
    name: "the validator's 400",
    args: upArgs('--api-version', 'v1'),
    route: 'POST /v1/server',
    answer: { status: 400, body: { statusCode: 400, error: h('Bad Request'), message: HOSTILE } },
    exit: 2,
  },
];

const ANSWERS: Case[] = [
  {
    name: 'token (its keys too)',
    args: ['token'],
    route: 'GET /v2/token',
    answer: { status: 200, body: { ok: true, type: h('Bot'), [HOSTILE]: HOSTILE, nested: { [HOSTILE]: 1 } } },
    exit: 0,
  },
  {
    name: 'comments bot (authors too)',
    args: ['comments', 'bot', BOT],
    route: `GET /v2/bot/${BOT}/comments`,
    answer: { status: 200, body: [comment] },
    exit: 0,
  },
  {
    name: 'comments server',
    args: ['comments', 'server', SERVER],
    route: `GET /v2/server/${SERVER}/comments`,
    answer: { status: 200, body: [comment] },
    exit: 0,
  },
  {
    name: 'comments profile',
    args: ['comments', 'profile', USER],
    route: `GET /v2/profile/${USER}/comments`,
    answer: { status: 200, body: { bots: [comment], servers: [comment] } },
    exit: 0,
  },
  {
    name: 'bots (ids and short codes)',
    args: ['bots', BOT],
    route: `GET /v2/bots/${BOT}`,
    answer: { status: 200, body: [{ id: HOSTILE, shortCode: HOSTILE }] },
    exit: 0,
  },
  {
    name: 'bot',
    args: ['bot', 'kerdoku'],
    route: 'GET /v2/bot/kerdoku',
    answer: { status: 200, body: botBody },
    exit: 0,
  },
  {
    name: 'server',
    args: ['server', 'boticord'],
    route: 'GET /v2/server/boticord',
    answer: { status: 200, body: serverBody },
    exit: 0,
  },
  {
    name: 'profile',
    args: ['profile', BOT],
    route: `GET /v2/profile/${BOT}`,
    answer: { status: 200, body: profileBody },
    exit: 0,
  },
  {
    name: 'links list',
    args: ['links', 'list'],
    env: { DIRECTORY_TOKEN_KIND: 'Profile' },
    route: 'POST /v2/links/get',
    answer: {
      status: 200,
      body: [
        { id: 1, code: h('c'), ownerID: USER, domain: h('d'), views: 1, link: h('l'), date: 1650181977858 },
      ],
    },
    exit: 0,
  },
  {
    name: 'up',
    args: upArgs(),
    route: 'POST /v2/server',
    answer: {
      status: 200,
      body: { serverID: h('s'), up: 1, updated: true, bumps: 1, upSuccessfully: true, message: h('done') },
    },
    exit: 0,
  },
];

function cli(c: Case, json: boolean): Promise<Result> {
  const args = [...c.args, '--retries', '0', ...(json ? ['--json'] : [])];
  return runDirectory(
    args,
    { DIRECTORY_API_URL: url, DIRECTORY_API_VERSION: 'v2', DIRECTORY_TOKEN: TOKEN, ...c.env },
    { cwd },
  );
}

/** Every string in a parsed JSON value, keys included. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([key, v]) => [key, ...strings(v)]);
  }
  return [];
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  for (const c of [...ERRORS, ...ANSWERS]) routes.set(c.route, c.answer);
  server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = routes.get(`${req.method} ${path}`) ?? {
      status: 418,
      body: { error: { message: 'no route' } },
    };
    req.resume();
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cwd = mkdtempSync(join(tmpdir(), 'directory-hostile-'));
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

describe.each([
  ['error messages', ERRORS],
  ['answers', ANSWERS],
])('%s with terminal controls', (_, cases) => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const [text, json] = await Promise.all([cli(c, false), cli(c, true)]);

    expect(text.code, text.stderr).toBe(c.exit);
    const written = text.stdout + text.stderr;
    expect(written).not.toMatch(FORBIDDEN);
    // Shown, not dropped: the reader sees that the directory sent something odd.
    expect(written).toContain('\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u202eevil');
    expect(written).toContain(' end');

    expect(json.code, json.stderr).toBe(c.exit);
    expect(json.stdout + json.stderr).not.toMatch(FORBIDDEN);
    const data: unknown = JSON.parse(c.exit === 0 ? json.stdout : json.stderr);
    expect(strings(data).some((s) => s.includes(HOSTILE))).toBe(true);
    if (c.exit !== 0) {
      expect(json.stdout).toBe('');
      expect(data).toMatchObject({ error: { status: c.answer.status } });
    }
  });
});
