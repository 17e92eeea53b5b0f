/**
 * How the built binary fails: output it cannot write (a full disk, a reader gone), errors that
 * name the command typed rather than the client's method, and errors as JSON with --json.
 */
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Emulator, IDS, startEmulator } from '../emulator/index.js';
import { MAIN, type Result, runDirectory, type SpawnOptions } from '../support/spawn.js';

let emu: Emulator;
let cwd: string;

function cli(
  args: string[],
  env: Record<string, string> = {},
  stdout?: SpawnOptions['stdout'],
): Promise<Result> {
  return runDirectory(
    args,
    { DIRECTORY_API_URL: emu.url, DIRECTORY_API_VERSION: 'v2', ...env },
    { cwd, stdout },
  );
}

/** stdout on /dev/full, where every write fails with ENOSPC. */
async function toFullDisk(args: string[]): Promise<Result> {
  const fd = openSync('/dev/full', 'w');
  try {
    return await cli(args, {}, fd);
  } finally {
    closeSync(fd);
  }
}

function jsonError(stderr: string): unknown {
  expect(stderr.endsWith('\n') && stderr.indexOf('\n') === stderr.length - 1, stderr).toBe(true);
  return JSON.parse(stderr);
}

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  emu = await startEmulator({ rateLimits: false });
  cwd = mkdtempSync(join(tmpdir(), 'directory-failures-'));
});

beforeEach(() => {
  emu.reset();
});

afterAll(async () => {
  await emu?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

describe('output that cannot be written', () => {
  it.skipIf(!existsSync('/dev/full'))('says so in one line and exits 8 on a full disk', async () => {
    for (const args of [['bot', 'kerdoku'], ['--help']]) {
      const r = await toFullDisk(args);
      expect(r.code, r.stderr).toBe(8);
      expect(r.stderr).toBe(
        'directory: could not write the output: ENOSPC: no space left on device, write\n',
      );
    }
    const json = await toFullDisk(['bot', 'kerdoku', '--json']);
    expect(json.code).toBe(8);
    expect(jsonError(json.stderr)).toEqual({
      error: {
        kind: 'Output',
        status: null,
        message: 'could not write the output: ENOSPC: no space left on device, write',
      },
    });
  });

  it('is silent for a reader that has gone, and exits 8', async () => {
    for (const args of [['bot', 'kerdoku'], ['bot', 'kerdoku', '--json'], ['--help']]) {
      const r = await cli(args, {}, 'closed');
      expect(r, args.join(' ')).toEqual({ code: 8, stdout: '', stderr: '' });
    }
  });
});

describe('errors name the command typed', () => {
  it('names the comments command and its target when a token is missing', async () => {
    for (const target of ['bot', 'server', 'profile']) {
      const r = await cli(['comments', target, IDS.serviceBot]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`directory: 'comments ${target}' needs a directory token (DIRECTORY_TOKEN)\n`);
    }
    expect(emu.requests).toHaveLength(0);
  });
});

describe('errors with --json', () => {
  it('prints usage errors as one JSON object on stderr, exit code unchanged', async () => {
    for (const args of [
      ['--json'],
      ['frobnicate', '--json'],
      ['bot', '--json'],
      ['bot', 'kerdoku', '--bogus', '--json'],
      ['--json', 'links', 'purge'],
      ['stats', '--servers', 'ten', '--shards', '1', '--users', '1', '--json'],
    ]) {
      const r = await cli(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(jsonError(r.stderr), args.join(' ')).toEqual({
        error: { kind: 'Usage', status: null, message: expect.stringMatching(/^\S/) },
      });
    }
    expect(emu.requests).toHaveLength(0);
  });

  it('prints configuration and directory errors with their kind and status', async () => {
    const config = await cli(['bot', 'kerdoku', '--timeout', '5', '--json']);
    expect(config.code).toBe(2);
    expect(jsonError(config.stderr)).toMatchObject({
      error: { kind: 'Configuration', status: null, message: expect.stringContaining('--timeout') },
    });

    const noToken = await cli(['comments', 'bot', IDS.serviceBot, '--json']);
    expect(noToken.code).toBe(2);
    expect(jsonError(noToken.stderr)).toEqual({
      error: {
        kind: 'InvalidArgument',
        status: null,
        message: "'comments bot' needs a directory token (DIRECTORY_TOKEN)",
      },
    });

    const refused = await cli(['bots', IDS.serviceBotOwner, '--json'], {
      DIRECTORY_TOKEN: 'not-a-real-token',
    });
    expect(refused.code).toBe(3);
    expect(jsonError(refused.stderr)).toEqual({
      error: { kind: 'Unauthorized', status: 401, message: 'the directory refused the token (Unauthorized)' },
    });
  });

  it('keeps text after `--`: a --json there is an argument, not the flag', async () => {
    const r = await cli(['frobnicate', '--', '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^directory: unknown command "frobnicate"\n/);
  });
});
