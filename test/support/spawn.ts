/** A command run as a child process to its end: exit code, stdout and stderr (the CLI, the entry points). */
import { spawn } from 'node:child_process';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /**
   * Where the child's stdout goes: captured (default), a pipe whose reading end is closed before
   * the child writes (`| head -c1` that has already exited), or an open file descriptor.
   */
  stdout?: 'pipe' | 'closed' | number;
  /** Killed (SIGKILL, code null) if still running after this. */
  timeoutMs?: number;
}

export function spawnResult(command: string, args: string[], options: SpawnOptions): Promise<Result> {
  const { stdout: target = 'pipe', timeoutMs, ...rest } = options;
  return new Promise<Result>((resolve, reject) => {
    const child = spawn(command, args, {
      ...rest,
      stdio: ['ignore', typeof target === 'number' ? target : 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    if (target === 'closed') child.stdout?.destroy();
    else {
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
      });
    }
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const ABOVE = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The repository's root, from test/support or, compiled (the bench), from dist/test/support. */
export const ROOT = basename(ABOVE) === 'dist' ? dirname(ABOVE) : ABOVE;
/** The built CLI: `npm run build` first. */
export const MAIN = join(ROOT, 'dist', 'src', 'cli', 'main.js');

/** Runs the built binary with only the variables given (`cwd` should hold no .env). */
export function runDirectory(
  args: string[],
  env: Record<string, string>,
  options: Omit<SpawnOptions, 'env'>,
): Promise<Result> {
  return spawnResult(process.execPath, [MAIN, ...args], { ...options, env });
}

/** `node <script> <args>` in `cwd` with only the environment given (plus PATH), to its end. */
export function runScript(
  script: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
): Promise<Result> {
  return spawnResult(process.execPath, [script, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...options.env },
    timeoutMs: options.timeoutMs ?? 15_000,
  });
}
