/**
 * The built `directory` binary against a directory that answers too slowly or asks to wait a
 * day: it ends near its timeout or at once, with the exit code and a line that says why.
 * `npm test` builds first; in a manual run, `npm run build` before.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { drip, type HostileServer, startHostileServer, tooManyRequests } from '../contract/hostile-server.js';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'src', 'cli', 'main.js');
/** Past this the child is killed: a hang fails the test instead of stalling the run. */
const KILL_AFTER_MS = 15_000;

interface Result {
  code: number | null;
  stderr: string;
  ms: number;
}

let server: HostileServer;
let cwd: string;

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);
  server = await startHostileServer();
  cwd = mkdtempSync(join(tmpdir(), 'directory-cli-deadlines-'));
});
afterEach(() => {
  server.requests.length = 0;
});
afterAll(async () => {
  await server?.close();
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

function cli(args: string[]): Promise<Result> {
  const started = performance.now();
  return new Promise<Result>((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], {
      cwd,
      env: {
        DIRECTORY_API_URL: server.url,
        DIRECTORY_API_VERSION: 'v2',
        DIRECTORY_TOKEN: 'cli-deadline-token-0123456789',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stderr, ms: performance.now() - started });
    });
  });
}

describe('the CLI against a slow or demanding directory', () => {
  it('a body dripped a byte every 400 ms ends at --timeout with exit 6', { timeout: 20_000 }, async () => {
    server.handle((_req, res) => drip(res));
    const r = await cli(['bot', '724663360934772797', '--timeout', '1000', '--retries', '0']);
    expect(r.code).toBe(6);
    expect(r.stderr).toBe(
      "directory: the directory is unavailable: the directory did not answer 'bot' in time\n",
    );
    // The timeout and a node process's start, nothing more.
    expect(r.ms).toBeLessThan(4_000);
  });

  it('--max-wait ends the retries of a dripping directory', { timeout: 20_000 }, async () => {
    server.handle((_req, res) => drip(res));
    const r = await cli(['bot', 'kerdoku', '--timeout', '1000', '--retries', '5', '--max-wait', '1500ms']);
    expect(r.code).toBe(6);
    expect(r.ms).toBeLessThan(4_500);
    expect(server.requests.length).toBeLessThanOrEqual(2);
  });

  it.each([
    ['a look-up', ['bot', 'kerdoku']],
    ['a POST', ['stats', '--servers', '1', '--shards', '1', '--users', '1']],
  ])(
    '%s answered 429 Retry-After: 86400 exits 5 at once and says the wait',
    { timeout: 20_000 },
    async (_what, args) => {
      server.handle((_req, res) => tooManyRequests(res, 86_400));
      const r = await cli(args);
      expect(r.code).toBe(5);
      expect(r.stderr).toBe(
        'directory: rate limited by the directory (Too many requests); try again in 1440 min\n',
      );
      expect(server.requests).toHaveLength(1);
      expect(r.ms).toBeLessThan(3_000);
    },
  );

  it('a Retry-After within --max-wait is waited and the command goes on', { timeout: 20_000 }, async () => {
    let calls = 0;
    server.handle((_req, res) => {
      calls += 1;
      if (calls === 1) tooManyRequests(res, 1);
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const r = await cli(['stats', '--servers', '1', '--shards', '1', '--users', '1', '--max-wait', '5s']);
    expect(r.code).toBe(0);
    expect(server.requests).toHaveLength(2);
  });

  it('a wait longer than --max-wait fails at once', { timeout: 20_000 }, async () => {
    server.handle((_req, res) => tooManyRequests(res, 3));
    const r = await cli(['bot', 'kerdoku', '--max-wait', '2s']);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('try again in 3 s');
    expect(server.requests).toHaveLength(1);
  });

  it.each(['0', 'soon', '-5'])('--max-wait %s is a usage error', async (value) => {
    const r = await cli(['bot', 'kerdoku', `--max-wait=${value}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--max-wait must be a duration above 0');
    expect(server.requests).toEqual([]);
  });
});
