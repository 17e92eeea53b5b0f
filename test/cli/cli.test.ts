/**
 * The built `directory` binary against the emulator, as a child process: stdout, stderr and exit
 * codes. `npm test` builds before vitest runs; in a manual run, build first (npm run build).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, IDS, startEmulator, TOKENS } from '../emulator/index.js';
import { MAIN, type Result, ROOT, spawnResult } from '../support/spawn.js';

/** Longer than the 40 characters messages echo of a value. */
const SECRET = 'zz-SECRET-cli-token-9f8e7d6c5b4a3210-abcdefabcdef';

let emu: Emulator;
let cwd: string;

/**
 * Runs the binary in a clean temp dir (no .env) with only the variables given. Pinned to API v2,
 * which these tests are about (v3, the default, has its own file: v3.test.ts).
 */
function cli(args: string[], env: Record<string, string> = {}): Promise<Result> {
  return spawnResult(process.execPath, [MAIN, ...args], {
    cwd,
    env: { DIRECTORY_API_URL: emu.url, DIRECTORY_API_VERSION: 'v2', ...env },
  });
}

const bot = { DIRECTORY_TOKEN: TOKENS.serviceBot };
const profile = { DIRECTORY_TOKEN: TOKENS.profile, DIRECTORY_TOKEN_KIND: 'Profile' };

function upArgs(serverId: string, ...extra: string[]): string[] {
  return [
    'up',
    '--server',
    serverId,
    '--user',
    IDS.profileUser,
    '--channel',
    '722424773233213461',
    '--channel-name',
    'general',
    ...extra,
  ];
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  emu = await startEmulator({ rateLimits: false });
  cwd = mkdtempSync(join(tmpdir(), 'directory-cli-'));
});

afterAll(async () => {
  await emu?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

beforeEach(() => {
  emu.setRateLimits(false);
  emu.reset();
});

describe('look-ups', () => {
  it('shows a bot as aligned key: value lines', async () => {
    const r = await cli(['bot', 'kerdoku']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^id:\s+724663360934772797$/m);
    expect(r.stdout).toMatch(/^short code:\s+kerdoku$/m);
    expect(r.stdout).toMatch(/^status:\s+APPROVED$/m);
    expect(r.stdout).toMatch(/^pages:\s+https:\/\/boticord\.top\/bot\/724663360934772797$/m);
    expect(emu.requests.map((q) => `${q.method} ${q.path}`)).toEqual(['GET /v2/bot/kerdoku']);
    expect(emu.requests[0]?.headers.authorization).toBeUndefined();
  });

  it('prints the validated bot as JSON for a page URL', async () => {
    const r = await cli(['bot', 'https://boticord.top/bot/kerdoku', '--json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const data = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(data).toMatchObject({
      id: IDS.plainBot,
      shortCode: 'kerdoku',
      links: { site: 'https://kerdoku.top' },
    });
    expect(Array.isArray(data.pageLinks)).toBe(true);
    expect(data).not.toHaveProperty('information');
  });

  it('accepts a mention for a bot and flags after the argument or before the command', async () => {
    const r = await cli(['--json', 'bot', `<@${IDS.plainBot}>`]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: IDS.plainBot });
    expect(emu.requests[0]?.path).toBe(`/v2/bot/${IDS.plainBot}`);
  });

  it('shows a server and a profile', async () => {
    const server = await cli(['server', 'boticord']);
    expect(server.code).toBe(0);
    expect(server.stdout).toMatch(/^name:\s+BotiCord Community$/m);
    expect(server.stdout).toMatch(/^members:\s+\d+ \(\d+ online\)$/m);
    const user = await cli(['profile', IDS.profileUser]);
    expect(user.code).toBe(0);
    expect(user.stdout).toMatch(/^short code:\s+cipherka$/m);
  });

  it('exits 4 with the directory message when nothing is found, stdout empty even with --json', async () => {
    const r = await cli(['bot', '123456789012345678', '--json']);
    expect(r).toEqual({
      code: 4,
      stdout: '',
      stderr: '{"error":{"kind":"NotFound","status":404,"message":"Bot not found"}}\n',
    });
  });

  it('lists comments with votes and ISO times, and a developer’s bots', async () => {
    const comments = await cli(['comments', 'bot', IDS.botManyComments], bot);
    expect(comments.code).toBe(0);
    expect(comments.stdout).toMatch(/^(👍|👎|·) {1,2}\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z {2}\d{17,20}/m);
    expect(comments.stdout).toContain('👍');
    const byUser = await cli(['comments', 'profile', IDS.prolificUser, '--json'], bot);
    expect(byUser.code).toBe(0);
    const data = JSON.parse(byUser.stdout) as { bots: { at: string }[]; servers: unknown[] };
    expect(data.bots.length).toBeGreaterThan(10);
    expect(data.bots[0]?.at).toMatch(/Z$/);
    const bots = await cli(['bots', IDS.serviceBotOwner], bot);
    expect(bots.code).toBe(0);
    expect(bots.stdout).toMatch(/^672406367344132116\s+sonata$/m);
  });
});

describe('usage errors (exit 2, nothing sent)', () => {
  it('refuses a reference that could reach another route', async () => {
    const r = await cli(['bot', '../links/get'], bot);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^directory: not a bot ID, short code, mention or directory page URL/);
    expect(r.stderr).toContain('usage: directory bot <ref>');
    expect(emu.requests).toHaveLength(0);
  });

  it('names a missing flag and shows the usage', async () => {
    const r = await cli(['stats', '--servers', '1', '--shards', '1'], bot);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^directory: missing --users\n/);
    expect(r.stderr).toContain('usage: directory stats --servers N --shards N --users N');
    expect(emu.requests).toHaveLength(0);
  });

  it('refuses a missing argument, an extra argument, an unknown flag and a bad number', async () => {
    for (const args of [
      ['bot'],
      ['bot', 'kerdoku', 'extra'],
      ['bot', 'kerdoku', '--bogus'],
      ['stats', '--servers', 'ten', '--shards', '1', '--users', '1'],
      ['links', 'create', '--code', 'x', '--link', 'https://a.example', '--domain', '2'],
      ['comments', 'guild', IDS.serverFresh],
    ]) {
      const r = await cli(args, bot);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr.split('\n')[0], args.join(' ')).toMatch(/^directory: \S/);
    }
    expect(emu.requests).toHaveLength(0);
  });

  it('refuses an unknown command and a missing one', async () => {
    const unknown = await cli(['frobnicate']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^directory: unknown command "frobnicate"\n/);
    expect(unknown.stderr).toContain("run 'directory --help'");
    const none = await cli([]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^directory: missing command\n/);
    const sub = await cli(['links', 'purge']);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toMatch(/^directory: unknown links subcommand "purge"/);
  });

  it('reports bad configuration from a flag with the flag’s name', async () => {
    const r = await cli(['bot', 'kerdoku', '--api-version', 'v4', '--timeout', '5']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--api-version (DIRECTORY_API_VERSION): expected one of v3, v2, v1');
    expect(r.stderr).toContain('--timeout (DIRECTORY_TIMEOUT_MS)');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(emu.requests).toHaveLength(0);
  });

  it('reports a v2-only method in v1 and a missing token', async () => {
    const v1 = await cli(['token', '--api-version', 'v1'], bot);
    expect(v1.code).toBe(2);
    expect(v1.stderr).toContain("'token' exists only in API v2");
    const noToken = await cli(['bots', IDS.serviceBotOwner]);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain('needs a directory token (DIRECTORY_TOKEN)');
    expect(emu.requests).toHaveLength(0);
  });
});

describe('tokens', () => {
  it('exits 3 when the directory refuses the token', async () => {
    const r = await cli(['bots', IDS.serviceBotOwner], { DIRECTORY_TOKEN: 'not-a-real-token-123' });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe('directory: the directory refused the token (Unauthorized)\n');
  });

  it('exits 3 without a request when the token kind is not accepted', async () => {
    const r = await cli(
      ['stats', '--servers', '1', '--shards', '1', '--users', '1', '--token-kind', 'Profile'],
      bot,
    );
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("'stats' does not accept a Profile token; it accepts: Bot");
    expect(emu.requests).toHaveLength(0);
  });

  it('checks the token (v2)', async () => {
    const r = await cli(['token'], bot);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^ok:\s+yes$/m);
    expect(r.stdout).toMatch(/^type:\s+Bot$/m);
    expect(emu.requests[0]?.headers.authorization).toBe(`Bot ${TOKENS.serviceBot}`);
  });

  it('never prints the token, whatever fails', async () => {
    const env = { DIRECTORY_TOKEN: SECRET };
    const runs = [
      await cli(['bots', IDS.serviceBotOwner], env),
      await cli(['bots', IDS.serviceBotOwner, '--token', SECRET, '--json']),
      await cli(['token', '--token', SECRET, '--bogus']),
      await cli(['token', `--token=${SECRET}`, '--url', 'nope']),
      await cli(['stats', '--servers', '1', '--shards', '1', '--users', '1', '--token-kind', 'Profile'], env),
      await cli([SECRET], env),
      await cli(['token', '--token', SECRET, '--token-kind', SECRET]),
    ];
    // A directory (or a proxy) that echoes the token in its error message.
    emu.faults.add({ kind: 'status', status: 500, message: `bad token ${SECRET}` });
    runs.push(await cli(['bots', IDS.serviceBotOwner, '--retries', '0'], env));
    emu.faults.clear();
    emu.faults.add({ kind: 'html', status: 200, body: `<p>${SECRET}</p>` });
    runs.push(await cli(['token', '--retries', '0'], env));
    for (const r of runs) {
      expect(r.stdout + r.stderr).not.toContain(SECRET);
      expect(r.stdout + r.stderr).not.toContain(SECRET.slice(0, 12));
      expect(r.code).not.toBe(0);
    }
    expect(runs[7]?.stderr).toContain('[REDACTED]');
    // The token did reach the directory where it was meant to.
    expect(emu.requests.some((q) => q.headers.authorization === `Bot ${SECRET}`)).toBe(true);
  });
});

describe('up (POST /server)', () => {
  it('raises a server, then reports the cooldown with the next up time', async () => {
    const first = await cli(upArgs(IDS.serverFresh), bot);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.stdout).toMatch(/^message:\s+:white_check_mark: /m);
    expect(first.stdout).toMatch(/^up:\s+registered$/m);
    expect(first.stdout).toMatch(/^bumps:\s+\d+$/m);
    expect(first.stdout).toMatch(/^boost:\s+no$/m);
    expect(first.stdout).toMatch(/^next up:\s+\d{4}-\d\d-\d\dT[\d:.]+Z \(in [34]h \d{1,2}m\)$/m);
    const sent = JSON.parse(emu.requests[0]?.body ?? '{}') as Record<string, unknown>;
    expect(sent).toMatchObject({
      serverID: IDS.serverFresh,
      up: 1,
      status: 1,
      upUserID: IDS.profileUser,
      upChannelID: '722424773233213461',
      upChannelName: 'general',
    });

    const second = await cli(upArgs(IDS.serverFresh, '--json'), bot);
    expect(second.code).toBe(0);
    const result = JSON.parse(second.stdout) as Record<string, unknown>;
    expect(result).toMatchObject({ serverId: IDS.serverFresh, upSuccessfully: false, updated: true });
    expect(typeof result.nextUpAt).toBe('string');
    expect(Date.parse(String(result.nextUpAt))).toBeGreaterThan(Date.now() + 3 * 3_600_000);
    expect(String(result.message)).toMatch(/^:x: /);
  });

  it('sends statistics only, for a bot that left, with the optional fields', async () => {
    const r = await cli(
      upArgs(IDS.serverFresh, '--no-up', '--left', '--name', 'Tavern', '--members', '40', '--online', '4'),
      bot,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^up:\s+not asked$/m);
    const sent = JSON.parse(emu.requests[0]?.body ?? '{}') as Record<string, unknown>;
    expect(sent).toMatchObject({
      up: 0,
      status: 0,
      serverName: 'Tavern',
      serverMembersAllCount: 40,
      serverMembersOnlineCount: 4,
    });
  });

  it('exits 5 with the wait when the directory rate-limits', async () => {
    // One POST /stats a minute rather than the published one per 2 s: the second process's start
    // takes more than 2 s on a loaded machine, and the window must still be open for it.
    emu.setRateLimits({ global: false, routes: { max: 1, windowMs: 60_000 } });
    const first = await cli(['stats', '--servers', '10', '--shards', '1', '--users', '100'], bot);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('statistics posted\n');
    const second = await cli(
      ['stats', '--servers', '10', '--shards', '1', '--users', '100', '--retries', '0'],
      bot,
    );
    expect(second.code).toBe(5);
    expect(second.stdout).toBe('');
    const wait = /^directory: rate limited by the directory .*; try again in (\d+) s\n$/.exec(second.stderr);
    expect(wait, second.stderr).not.toBeNull();
    // The window's rest, in whole seconds: at most the minute, and not nothing.
    expect(Number(wait?.[1])).toBeGreaterThan(0);
    expect(Number(wait?.[1])).toBeLessThanOrEqual(60);
  });

  it('exits 5 on a 429 fault and prints its Retry-After', async () => {
    emu.faults.add({ kind: 'rate-limit', retryAfterMs: 30_000 });
    const r = await cli(['bot', 'kerdoku', '--retries', '0']);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('try again in 30 s');
  });
});

describe('short links (Profile token)', () => {
  it('creates, lists and deletes a link', async () => {
    const created = await cli(
      ['links', 'create', '--code', 'clitest', '--link', 'https://example.com/x', '--domain', '3'],
      profile,
    );
    expect(created).toMatchObject({ code: 0, stdout: 'link clitest created\n', stderr: '' });
    expect(emu.requests[0]?.headers.authorization).toBe(`Profile ${TOKENS.profile}`);
    expect(JSON.parse(emu.requests[0]?.body ?? '{}')).toEqual({
      code: 'clitest',
      link: 'https://example.com/x',
      domain: 3,
    });

    const listed = await cli(['links', 'list'], profile);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^code\s+domain\s+views\s+created\s+link$/m);
    expect(listed.stdout).toMatch(/^clitest\s+discord\.camp\s+0\s+\S+Z\s+https:\/\/example\.com\/x$/m);

    const one = await cli(['links', 'list', '--code', 'clitest', '--json'], profile);
    expect(one.code).toBe(0);
    const links = JSON.parse(one.stdout) as { code: string; domain: string; createdAt: string }[];
    expect(links).toHaveLength(1);
    expect(links[0]).toMatchObject({ code: 'clitest', domain: 'discord.camp' });

    const deleted = await cli(['links', 'delete', '--code', 'clitest', '--domain', '3'], profile);
    expect(deleted).toMatchObject({ code: 0, stdout: 'link clitest deleted\n' });
    const again = await cli(['links', 'delete', '--code', 'clitest'], profile);
    expect(again).toMatchObject({ code: 4, stderr: 'directory: Link not found\n' });
  });

  it('refuses the Bot kind for links without a request', async () => {
    const r = await cli(['links', 'list'], bot);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("'links list' does not accept a Bot token; it accepts: Profile");
    expect(emu.requests).toHaveLength(0);
  });
});

describe('validate-bot', () => {
  it('answers yes for a bot on the server and no otherwise', async () => {
    const yes = await cli(['validate-bot', IDS.serverFresh, IDS.serviceBot], bot);
    expect(yes).toMatchObject({ code: 0, stdout: 'valid: yes\n' });
    const no = await cli(['validate-bot', IDS.serverFresh, IDS.plainBot, '--json'], bot);
    expect(no.code).toBe(0);
    expect(JSON.parse(no.stdout)).toEqual({ ok: false });
    expect(emu.requests[0]?.path).toBe(`/v2/server/${IDS.serverFresh}/validateBot/${IDS.serviceBot}`);
  });
});

describe('the directory failing', () => {
  it('exits 6 on an HTML 502', async () => {
    emu.faults.add({ kind: 'html', status: 502 });
    const r = await cli(['bot', 'kerdoku', '--retries', '0']);
    expect(r.code).toBe(6);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('directory: the directory is unavailable: the directory answered 502\n');
  });

  it('exits 6 when the connection drops and 7 on a drifted answer', async () => {
    emu.faults.add({ kind: 'drop', times: 1 });
    const dropped = await cli(['bot', 'kerdoku', '--retries', '0']);
    expect(dropped.code).toBe(6);
    emu.faults.clear();
    emu.faults.add({ kind: 'drift' });
    const drifted = await cli(['bot', 'kerdoku', '--json']);
    expect(drifted.code).toBe(7);
    expect(drifted.stdout).toBe('');
    const { error } = JSON.parse(drifted.stderr) as { error: Record<string, unknown> };
    expect(error).toMatchObject({ kind: 'InvalidResponse', status: 200 });
    expect(error.message).toMatch(/^the directory's answer to 'bot' does not fit/);
  });
});

describe('timeouts and refusals', () => {
  it('exits 6 promptly when the directory does not answer in time', async () => {
    // The directory would answer after 20 s: the CLI gives up after its 300 ms, so it exits long
    // before (the bound leaves room for starting node on a busy machine, ~1-5 s).
    emu.faults.add({ kind: 'latency', ms: 20_000 });
    const started = Date.now();
    const r = await cli(['bot', 'kerdoku', '--timeout', '300', '--retries', '0']);
    expect(r.code).toBe(6);
    expect(r.stderr).toBe(
      "directory: the directory is unavailable: the directory did not answer 'bot' in time\n",
    );
    expect(Date.now() - started).toBeLessThan(12_000);
  });

  it('exits 3 when a PrivateBot token is forbidden on a server', async () => {
    const r = await cli(upArgs(IDS.serverFresh), {
      DIRECTORY_TOKEN: TOKENS.privateBot,
      DIRECTORY_TOKEN_KIND: 'PrivateBot',
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toBe('directory: the directory refused access (Forbidden)\n');
  });

  it('shows a not-updated answer as given, exit 0', async () => {
    const r = await cli(upArgs(IDS.serverNotUpdated), bot);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^updated:\s+no$/m);
    expect(r.stdout).toMatch(/^message:\s+:x: /m);
  });
});

describe('help and version', () => {
  it('prints the top-level help on stdout', async () => {
    for (const flag of ['--help', '-h']) {
      const r = await cli([flag]);
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toContain('Usage: directory <command>');
      for (const command of [
        'bot <ref>',
        'comments bot|server|profile <id>',
        'links create',
        'validate-bot',
      ]) {
        expect(r.stdout).toContain(command);
      }
      expect(r.stdout).toContain('prefer the DIRECTORY_TOKEN variable');
      expect(r.stdout).toContain('Exit codes:');
    }
    expect(emu.requests).toHaveLength(0);
  });

  it('prints a command’s help, also with other flags and for a subcommand', async () => {
    const r = await cli(['bot', '--help']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^Usage: directory bot <ref>$/m);
    expect(r.stdout).toContain('Token: none needed');
    const links = await cli(['links', 'create', '--code', 'x', '-h']);
    expect(links.code).toBe(0);
    expect(links.stdout).toMatch(/^Usage: directory links create --code C --link URL \[options\]$/m);
    expect(links.stdout).toContain('kinds accepted in v2: Profile');
    const help = await cli(['help', 'up']);
    expect(help.stdout).toContain('--channel-name NAME');
    expect(emu.requests).toHaveLength(0);
  });

  it('prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await cli(['--version']);
    expect(r).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('runs as `npx directory` from the repository root', { timeout: 60_000 }, async () => {
    // npx finds the package's own bin (package.json "bin"), but runs the file directly: it must be
    // executable, which tsc does not make it (see the CLI report).
    expect((statSync(MAIN).mode & 0o111) !== 0, `${MAIN} is not executable (chmod +x after tsc)`).toBe(true);
    const r = await spawnResult('npx', ['--no-install', 'directory', '--help'], {
      cwd: ROOT,
      // The help follows the locale; this test reads the English one whatever the machine's.
      env: { ...process.env, LC_ALL: 'C' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Usage: directory <command>');
  });
});
