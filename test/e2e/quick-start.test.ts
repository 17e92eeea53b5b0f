/**
 * The README's quick start followed literally, top to bottom, in a fresh directory laid out as a
 * clone after `npm ci` (package.json, .env.example, and the dist/ and node_modules/ this checkout
 * built), as far as it goes without Discord: its commands run as written, its manual steps (fill
 * in .env, open the invite link) done as a newcomer would, Discord being the stand-in and the
 * directory the emulator. Their addresses are the only thing the test adds, through the
 * environment; the three values go in .env, where the README says. `npm ci` itself is not run
 * again (a minute): the test checks what it would have given.
 *
 * A step the test does not know fails it, so that a change to the quick start comes with its check.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DiscordStandIn, discordLikeToken, makeGuild, startDiscordStandIn } from '../discord/index.js';
import { describeViolations } from '../discord/spec/conformance.js';
import { type Emulator, startEmulator } from '../emulator/index.js';
import { V3_KEYS } from '../emulator/state.js';
import { type Result, ROOT, spawnResult } from '../support/spawn.js';
import { START_BOUND_MS, withTimeout } from '../support/wait.js';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  scripts: Record<string, string>;
};

/** The README's section under `## title`, up to the next `## `. */
function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md has no section "## ${title}"`);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The fenced `sh` blocks of a piece of Markdown, each as its lines. */
function shBlocks(markdown: string): string[][] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!.split('\n'));
}

const SET_UP = section('Set up and run');
/** The quick start: the first block of the set-up section. */
const QUICK_START = shBlocks(SET_UP)[0] ?? [];

/** npm's own commands the README may name; every other `npm <x>` or `npm run <x>` is a script. */
const NPM_BUILTINS = new Set(['ci', 'install']);

/** What the newcomer puts in .env, for each variable the quick start says to fill in. */
function fakeValues(discord: DiscordStandIn): Record<string, string> {
  return {
    DISCORD_TOKEN: discord.token,
    DISCORD_APPLICATION_ID: discord.applicationId,
    // A key the emulator knows: the v3 notifications connect with it as they would to BotiCord.
    DIRECTORY_TOKEN: V3_KEYS.staff,
  };
}

/** A fresh directory as a clone has it after `npm ci`: its own .env, this checkout's build. */
function freshClone(): string {
  const dir = mkdtempSync(join(tmpdir(), 'quick-start-'));
  for (const file of ['package.json', 'package-lock.json', '.env.example']) {
    copyFileSync(join(ROOT, file), join(dir, file));
  }
  symlinkSync(join(ROOT, 'dist'), join(dir, 'dist'), 'dir');
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** A command line as the README writes it: no shell needed (nothing but words). */
function words(command: string): string[] {
  if (/[|&;<>$`"'\\*?()]/.test(command)) throw new Error(`not a plain command: ${command}`);
  return command.split(/\s+/).filter(Boolean);
}

/** A long-running command (`npm start`) in its own process group, its stdout's lines kept. */
class Running {
  readonly lines: string[] = [];
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcess;
  stderr = '';

  constructor(argv: string[], cwd: string, env: Record<string, string>) {
    this.child = spawn(argv[0]!, argv.slice(1), {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let rest = '';
    this.child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      this.lines.push(...parts);
    });
    this.child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }

  /** Resolves once a JSON log line has this `msg`. */
  async logged(msg: string, timeoutMs: number): Promise<void> {
    const seen = () => this.lines.some((line) => line.includes(`"msg":"${msg}"`));
    const exited = this.exited.then((code) => {
      throw new Error(`exited ${code} before "${msg}":\n${this.stderr}${this.lines.join('\n')}`);
    });
    const waited = (async () => {
      while (!seen()) await new Promise((resolve) => setTimeout(resolve, 50));
    })();
    await withTimeout(Promise.race([waited, exited]), timeoutMs, `"${msg}"`);
  }

  /** SIGTERM to npm, as a terminal's Ctrl+C or a service manager would; the exit code. */
  stop(): Promise<number | null> {
    this.child.kill('SIGTERM');
    return withTimeout(this.exited, 15_000, 'npm start to exit');
  }

  /** Whatever is left of its process group. */
  kill(): void {
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

describe('the README quick start, followed literally', () => {
  let discord: DiscordStandIn;
  let emu: Emulator;
  let clone: string;
  const running: Running[] = [];

  beforeAll(async () => {
    discord = await startDiscordStandIn({
      token: discordLikeToken(),
      guilds: [makeGuild({ name: 'A newcomer’s server' })],
    });
    emu = await startEmulator({ rateLimits: false });
    clone = freshClone();
  });
  afterAll(async () => {
    for (const r of running) r.kill();
    await discord?.close();
    await emu?.close();
    if (clone) rmSync(clone, { recursive: true, force: true });
  });

  it('copy .env.example, fill in .env, npm ci, deploy the commands, invite, npm start: each works', async () => {
    // Where Discord and the directory are: the one thing the newcomer does not write, given in the
    // environment (which wins over .env) so that .env stays as the README has it.
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? clone,
      npm_config_update_notifier: 'false',
      DISCORD_API_URL: discord.restUrl,
      DIRECTORY_API_URL: emu.url,
      DIRECTORY_NOTIFY_URL: emu.v3.notifyUrl,
    };
    const fakes = fakeValues(discord);
    const done: string[] = [];
    let invite: string | undefined;
    let invited = false;

    expect(QUICK_START.length, 'the quick start block in "## Set up and run"').toBeGreaterThan(0);
    for (const raw of QUICK_START) {
      const line = raw.trim();
      if (line === '') continue;
      const command = line.startsWith('#') ? '' : line.replace(/\s+#.*$/, '');
      const comment = line.startsWith('#') ? line.slice(1).trim() : '';

      if (/\bfill in\b/i.test(comment)) {
        // "in .env, fill in A, B and C": each is an empty line of .env, given its value.
        const names = [...comment.matchAll(/\b[A-Z][A-Z0-9_]{2,}\b/g)].map((m) => m[0]);
        expect(names.length, `the variables named in "${comment}"`).toBeGreaterThan(0);
        const path = join(clone, '.env');
        expect(existsSync(path), '.env exists when the README says to fill it in').toBe(true);
        let text = readFileSync(path, 'utf8');
        for (const name of names) {
          const value = fakes[name];
          if (value === undefined)
            throw new Error(`the test has no value for ${name}: add one to fakeValues`);
          const empty = new RegExp(`^${name}=$`, 'm');
          expect(text, `.env has an empty ${name}= line to fill in`).toMatch(empty);
          text = text.replace(empty, `${name}=${value}`);
        }
        writeFileSync(path, text);
        done.push(`fill ${names.join(' ')}`);
      } else if (/\binvite link\b/i.test(comment)) {
        // Opening the link and authorizing adds the bot to a server: the stand-in already has it
        // there; what the newcomer needs is the link, printed by a step before this one.
        expect(invite, 'an invite link printed before "open the invite link"').toBeDefined();
        const url = new URL(invite!);
        expect(url.origin + url.pathname).toBe('https://discord.com/oauth2/authorize');
        expect(url.searchParams.get('client_id')).toBe(discord.applicationId);
        expect(url.searchParams.get('scope')?.split(' ')).toEqual(['bot', 'applications.commands']);
        expect(BigInt(url.searchParams.get('permissions') ?? '0')).toBeGreaterThan(0n);
        invited = true;
        done.push('invite');
      } else if (comment !== '') {
        throw new Error(`a manual step the test does not know: "${comment}"`);
      } else if (command === 'npm ci') {
        // Not run again: what it gives is there. It needs the lock file, and builds through prepare.
        expect(existsSync(join(clone, 'package-lock.json'))).toBe(true);
        expect(PACKAGE.scripts.prepare).toMatch(/\bnpm run build\b/);
        expect(existsSync(join(clone, 'dist/src/app/main.js'))).toBe(true);
        done.push('npm ci');
      } else if (command === 'npm start') {
        expect(invited, 'npm start after the bot was invited').toBe(true);
        const bot = new Running(words(command), clone, env);
        running.push(bot);
        await bot.logged('connected to Discord', START_BOUND_MS);
        expect(await bot.stop()).toBe(0);
        expect(bot.stderr).toBe('');
        done.push('npm start');
      } else {
        const argv = words(command);
        const script = argv[0] === 'npm' ? (argv[1] === 'run' ? argv[2] : argv[1]) : undefined;
        if (script !== undefined) expect(Object.keys(PACKAGE.scripts)).toContain(script);
        const result: Result = await spawnResult(argv[0]!, argv.slice(1), {
          cwd: clone,
          env,
          timeoutMs: 30_000,
        });
        expect(result, `${command} exits 0`).toMatchObject({ code: 0 });
        const link = result.stdout.match(/https:\/\/discord\.com\/oauth2\/authorize\S*/)?.[0];
        if (link !== undefined) invite = link;
        done.push(command);
      }
    }

    // The commands reached Discord (the stand-in) once, from `npm run deploy-commands`.
    expect((discord.commands() as unknown[]).length).toBeGreaterThan(0);
    expect(describeViolations(discord.specViolations())).toBe('');
    // Top to bottom, nothing left out.
    expect(done).toEqual([
      'cp .env.example .env',
      'fill DISCORD_TOKEN DISCORD_APPLICATION_ID DIRECTORY_TOKEN',
      'npm ci',
      'npm run deploy-commands',
      'invite',
      'npm start',
    ]);
  }, 90_000);
});

describe("the README's set-up section names what exists", () => {
  it('every npm script it names is in package.json', () => {
    // In code only (inline, or a block's line): the prose says "npm" too.
    const code = [...[...SET_UP.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!), ...shBlocks(SET_UP).flat()];
    const named = code.flatMap((text) =>
      [...text.matchAll(/(?:^|\s)npm (?:run )?([a-z][\w:-]*)/g)].map((m) => m[1]!),
    );
    expect(named.length).toBeGreaterThan(0);
    for (const script of new Set(named)) {
      if (NPM_BUILTINS.has(script)) continue;
      expect(Object.keys(PACKAGE.scripts), `npm ${script}`).toContain(script);
    }
  });

  it('every built file and repository file it names exists', () => {
    const built = [...SET_UP.matchAll(/\bdist\/[\w/.-]+\.js\b/g)].map((m) => m[0]);
    expect(built).toContain('dist/src/app/deploy.js');
    for (const file of new Set(built)) expect(existsSync(join(ROOT, file)), file).toBe(true);
    expect(existsSync(join(ROOT, 'Dockerfile'))).toBe(true);
    for (const file of new Set([...SET_UP.matchAll(/-f (\S+)/g)].map((m) => m[1]!))) {
      expect(existsSync(join(ROOT, file)), file).toBe(true);
    }
  });

  it('asks for the Node.js package.json requires', () => {
    const version = PACKAGE.engines.node.replace(/^>=\s*/, '');
    expect(SET_UP).toContain(`Node.js ${version} or later`);
  });

  it("deploys the commands from the image Compose builds, and Compose's image is the one built", () => {
    const compose = readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8');
    const tag = SET_UP.match(/docker build -t (\S+) \./)?.[1];
    expect(tag).toBeDefined();
    expect(compose).toMatch(new RegExp(`^\\s+image: ${tag!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    const service = SET_UP.match(
      /docker compose -f deploy\/compose\.yaml run .* (\S+) node dist\/src\/app\/deploy\.js/,
    )?.[1];
    expect(service).toBeDefined();
    expect(compose).toMatch(new RegExp(`^  ${service}:$`, 'm'));
  });
});
