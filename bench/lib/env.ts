/**
 * The benchmark's own small environment: the quick switch, where things are (compiled output,
 * repository root, results) and the facts about the machine that go with every result.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { version as discordJsVersion } from 'discord.js';

/** BENCH_QUICK=1: a reduced run (under a minute) to check that every scenario still works. */
export function isQuick(): boolean {
  const raw = process.env.BENCH_QUICK;
  return raw !== undefined && raw !== '' && raw !== '0' && raw.toLowerCase() !== 'false';
}

/** Full or quick size of a parameter. */
export function size<T>(full: T, quick: T): T {
  return isQuick() ? quick : full;
}

/** The compiled tree this file runs from (dist/ under `npm run bench`): holds bench/, test/, src/. */
export const OUT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function isRepoRoot(dir: string): boolean {
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest) || !existsSync(join(dir, 'bench'))) return false;
  try {
    const parsed = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown };
    return parsed.name === 'directory-bot';
  } catch {
    return false;
  }
}

function findUp(start: string): string | undefined {
  let dir = resolve(start);
  for (;;) {
    if (isRepoRoot(dir)) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The repository root: above the compiled output, else above the working directory. */
export function repoRoot(): string {
  const root = findUp(OUT_ROOT) ?? findUp(process.cwd());
  if (!root) throw new Error('cannot find the repository root (package.json of directory-bot)');
  return root;
}

export function resultsDir(): string {
  return join(repoRoot(), 'bench', 'results');
}

/** A compiled file of the project, e.g. compiled('test/emulator/main.js'). */
export function compiled(path: string): string {
  return join(OUT_ROOT, path);
}

// Every address the benchmark talks to must be 127.0.0.1, as in the tests.
export { assertLocal, LOCALHOST } from '../../test/support/local.js';

export interface MachineFacts {
  date: string;
  cpuModel: string;
  cores: number;
  availableParallelism: number;
  totalMemoryGb: number;
  platform: string;
  arch: string;
  node: string;
  v8: string;
  discordJs: string;
  undici: string;
  /** `git describe --always --dirty` of the repository, or 'unknown' outside a checkout. */
  commit: string;
}

function packageVersion(name: string): string {
  try {
    const path = join(repoRoot(), 'node_modules', name, 'package.json');
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { version?: unknown };
    return typeof parsed.version === 'string' ? parsed.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

function gitCommit(): string {
  try {
    return execFileSync('git', ['describe', '--always', '--dirty'], {
      cwd: repoRoot(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return 'unknown';
  }
}

export function machineFacts(): MachineFacts {
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    availableParallelism: os.availableParallelism(),
    totalMemoryGb: Math.round((os.totalmem() / 1024 ** 3) * 10) / 10,
    platform: `${os.platform()} ${os.release()}`,
    arch: os.arch(),
    node: process.version,
    v8: process.versions.v8,
    discordJs: discordJsVersion,
    undici: packageVersion('undici'),
    commit: gitCommit(),
  };
}

/** The time the whole run may take; scenarios ask it before something long. */
export class Budget {
  readonly startedAt = performance.now();
  constructor(readonly limitMs: number) {}

  elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  remainingMs(): number {
    return this.limitMs - this.elapsedMs();
  }
}
