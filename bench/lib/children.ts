/**
 * Child processes: the directory emulator on its own (so the CPU the parent measures is the
 * client's only) and the Discord-client worker (one fresh process per memory or ready sample).
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { START_BOUND_MS } from '../../test/support/wait.js';
import { assertLocal, compiled, LOCALHOST } from './env.js';

export interface EmulatorChild {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGTERM, SIGKILL after 5 s if need be, and the exit. */
export async function stopChild(child: ChildProcess): Promise<void> {
  const done = exited(child);
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await done;
  clearTimeout(timer);
}

/** `node dist/test/emulator/main.js` on an ephemeral port, rate limits and request log off. */
export async function startEmulatorChild(timeoutMs = START_BOUND_MS): Promise<EmulatorChild> {
  const child = spawn(process.execPath, [compiled('test/emulator/main.js')], {
    env: { ...process.env, PORT: '0', EMULATOR_RATE_LIMITS: 'off', EMULATOR_LOG: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the emulator child did not start in ${timeoutMs} ms: ${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        // Keep draining so the child never blocks on a full pipe.
        child.stdout?.resume();
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the emulator child exited with ${code}: ${output}`));
    });
  });
  assertLocal(url, 'the emulator child');
  return {
    url,
    pid: child.pid ?? -1,
    stop: () => stopChild(child),
  };
}

/** What the Discord-client worker is asked to do (passed as JSON in BENCH_WORKER). */
export interface WorkerRequest {
  /** 'ours': createDiscordClient() (trimmed caches); 'default': new Client({ intents: [Guilds] }). */
  config: 'ours' | 'default';
  restUrl: string;
  token: string;
  shards: number;
  expectedGuilds: number;
  /** Measure memory (two forced GCs first) after ready. */
  memory: boolean;
}

export interface WorkerResult {
  readyMs: number;
  guilds: number;
  channels: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

/** Runs the worker in a fresh node process (with --expose-gc) and returns what it reports. */
export async function runWorker(request: WorkerRequest, timeoutMs: number): Promise<WorkerResult> {
  assertLocal(request.restUrl, 'the Discord stand-in');
  const child = fork(compiled('bench/workers/discord-worker.js'), [], {
    execArgv: ['--expose-gc'],
    env: { ...process.env, BENCH_WORKER: JSON.stringify(request) },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  try {
    return await new Promise<WorkerResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`worker timed out after ${timeoutMs} ms`));
      }, timeoutMs);
      child.once('message', (message: unknown) => {
        clearTimeout(timer);
        const m = message as { ok: boolean; result?: WorkerResult; error?: string };
        if (m.ok && m.result) resolve(m.result);
        else reject(new Error(`worker failed: ${m.error ?? 'no result'}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`worker exited (${code ?? signal}) before reporting: ${stderr.trim()}`));
      });
    });
  } finally {
    const done = exited(child);
    if (child.exitCode === null && child.signalCode === null) {
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await done;
      clearTimeout(timer);
    }
  }
}

export { LOCALHOST };
