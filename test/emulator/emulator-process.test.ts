/**
 * `npm run emulator` as a newcomer runs it: it says what DIRECTORY_API_URL should be, stops with
 * npm however npm ends (so the port is free for the next start), and says so in one line when the
 * port is still taken. And a request with the version twice is told why it found nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  descendantsOf,
  eventually,
  freePort,
  isAlive,
  LOCALHOST,
  ROOT,
  START_BOUND_MS,
  withTimeout,
} from '../ops/helpers.js';
import { startEmulator } from './server.js';

interface NpmRun {
  proc: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** `npm run --silent emulator` on `port`, its output collected; killed with its tree when the test ends. */
function npmEmulator(port: number): NpmRun {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? ROOT,
    PORT: String(port),
  };
  const proc = spawn('npm', ['run', '--silent', 'emulator'], {
    cwd: ROOT,
    env: { ...env, EMULATOR_LOG: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (proc.pid === undefined) throw new Error('npm did not start');
  const pid = proc.pid;
  let out = '';
  let err = '';
  proc.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  proc.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<number | null>((resolve) => proc.once('close', (code) => resolve(code)));
  const tree = new Set<number>([pid]);
  const seen = setInterval(() => {
    for (const child of descendantsOf(pid)) tree.add(child);
  }, 100);
  onTestFinished(() => {
    clearInterval(seen);
    for (const member of tree) {
      try {
        process.kill(member, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
  return { proc, pid, stdout: () => out, stderr: () => err, exited };
}

/** Whether something accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, LOCALHOST);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function started(run: NpmRun): Promise<number[]> {
  await eventually(
    () => (run.stdout().includes('listening on') ? true : undefined),
    START_BOUND_MS,
    'the emulator to listen',
  ).catch((err: unknown) => {
    throw new Error(
      `${String(err)}; stdout: ${run.stdout() || '(nothing)'}; stderr: ${run.stderr() || '(nothing)'}`,
    );
  });
  const children = descendantsOf(run.pid);
  expect(children.length).toBeGreaterThan(0);
  return children;
}

describe('npm run emulator', () => {
  // Each test: its own time plus START_BOUND_MS for the start-up on a busy machine.
  it('prints DIRECTORY_API_URL without the version', async () => {
    const port = await freePort();
    const run = npmEmulator(port);
    await started(run);
    const out = run.stdout();
    expect(out).toContain(`  DIRECTORY_API_URL=http://127.0.0.1:${port}\n`);
    // Nothing that reads as an address to copy with the version in it.
    expect(out).not.toMatch(/http:\/\/127\.0\.0\.1:\d+\/v\d/);
    run.proc.kill('SIGTERM');
    await withTimeout(run.exited, 10_000, 'npm to exit');
  }, 80_000);

  it.each(['SIGTERM', 'SIGHUP', 'SIGKILL'] as const)(
    'frees its port when npm gets %s',
    async (signal) => {
      const port = await freePort();
      const run = npmEmulator(port);
      const children = await started(run);
      expect(await listening(port)).toBe(true);
      run.proc.kill(signal);
      await eventually(
        async () => ((await listening(port)) ? undefined : true),
        5_000,
        `port ${port} to be free after ${signal} to npm`,
      );
      await eventually(
        () => (children.some(isAlive) ? undefined : true),
        5_000,
        `the emulator process to end after ${signal} to npm`,
      );
    },
    80_000,
  );

  it('says in one line that the port is taken, and exits 1', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, LOCALHOST, resolve));
    onTestFinished(() => new Promise<void>((resolve) => taken.close(() => resolve())));
    const { port } = taken.address() as { port: number };
    const run = npmEmulator(port);
    const code = await withTimeout(run.exited, 15_000, 'npm to exit');
    expect(code).toBe(1);
    expect(run.stderr()).toBe(
      `emulator: port ${port} on 127.0.0.1 is already in use (by an emulator still running?): stop it or set PORT\n`,
    );
    expect(run.stdout()).toBe('');
  });
});

describe('a request with the version twice', () => {
  it('gets a 404 that says the address has the version twice', async () => {
    const emu = await startEmulator({ rateLimits: false });
    onTestFinished(() => emu.close());
    const answer = await fetch(`${emu.url}/v2/v2/bot/kerdoku`);
    expect(answer.status).toBe(404);
    const body = (await answer.json()) as { message: string };
    expect(body.message).toBe(
      'Route GET:/v2/v2/bot/kerdoku not found: the address has the version twice: ' +
        'set DIRECTORY_API_URL without /v2',
    );
    const once = await fetch(`${emu.url}/v2/nothing-here`);
    expect(((await once.json()) as { message: string }).message).toBe('Route GET:/v2/nothing-here not found');
  });
});
