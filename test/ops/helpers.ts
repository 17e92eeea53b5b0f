/**
 * Helpers for the operations tests: child processes of the built bot with their output captured
 * line by line, bounded waits, HTTP probes of the operations endpoint, Prometheus text parsing,
 * and the process tree (`ps`) so that no shard process outlives a test.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DestinationStream } from 'pino';
import type { StatsBody } from '../../src/tasks/stats-poster.js';
import { type GuildFixture, makeGuild, makeGuilds, randomToken } from '../discord/index.js';
import { WaitList } from '../discord/waiters.js';
import type { Emulator, RecordedRequest } from '../emulator/index.js';
import { LEVEL } from '../support/logs.js';
import { sleep, withTimeout } from '../support/wait.js';

export { LEVEL, sleep, withTimeout };

/** A parsed pino line (or the raw text of a line that is not JSON). */
export interface LogEntry {
  level?: number;
  msg?: string;
  pid?: number;
  [key: string]: unknown;
}
export const LOCALHOST = '127.0.0.1';
export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
export const DIST_BOT = join(ROOT, 'dist/src/bot');

/** A parsed pino line (or the raw text of a line that is not JSON). */

export interface CapturedLine {
  stream: 'stdout' | 'stderr';
  raw: string;
  entry: LogEntry | undefined;
  /** Date.now() when the line was read. */
  at: number;
}

function parse(raw: string): LogEntry | undefined {
  if (!raw.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null ? (value as LogEntry) : undefined;
  } catch {
    return undefined;
  }
}

/** A token shaped like Discord's (three dot-separated parts). */
export function discordLikeToken(): string {
  return `${randomToken(26)}.${randomToken(6)}.${randomToken(38)}`;
}

/** Varied member counts: small servers, mid-sized ones and a few big ones. */
export function memberCountOf(i: number): number {
  if (i % 97 === 0) return 25_000 + i * 13;
  if (i % 10 === 0) return 1_000 + ((i * 211) % 4_000);
  return 2 + ((i * 37) % 480);
}

/** `n` guilds with varied member counts; `include` comes first (e.g. a server the directory knows). */
export function guildSet(
  n: number,
  include: ReadonlyArray<{ id: string; memberCount: number }> = [],
): { guilds: GuildFixture[]; users: number } {
  const generated = makeGuilds(n - include.length, {
    memberCountOf: (i) => memberCountOf(i + include.length),
  });
  const guilds = [...include.map((g) => makeGuild({ id: g.id, memberCount: g.memberCount })), ...generated];
  return { guilds, users: guilds.reduce((sum, g) => sum + g.member_count, 0) };
}

// ---- waiting ---------------------------------------------------------------------------------------

/** Polls until `probe` returns something other than undefined; throws after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
  what: string,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
    }
    await sleep(everyMs);
  }
}

// ---- in-process logs ---------------------------------------------------------------------------------

/** A pino destination that keeps every line, with waits on parsed entries. */
export class LogSink implements DestinationStream {
  readonly lines: string[] = [];
  readonly entries: LogEntry[] = [];
  readonly #waiters = new WaitList<LogEntry>();

  write(line: string): void {
    this.lines.push(line);
    const entry = parse(line.trim()) ?? { msg: line };
    this.entries.push(entry);
    this.#waiters.notify(entry);
  }

  waitFor(pred: (entry: LogEntry) => boolean, timeoutMs: number, what: string): Promise<LogEntry> {
    return this.#waiters.wait(pred, timeoutMs, what, this.entries);
  }

  count(pred: (entry: LogEntry) => boolean): number {
    return this.entries.filter(pred).length;
  }

  close(): void {
    this.#waiters.close();
  }
}

// ---- child processes -----------------------------------------------------------------------------------

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** performance.now() when the exit was seen. */
  at: number;
}

/**
 * A built entry point run with `node` in a temporary working directory (no `.env` is read) and
 * only the environment given (plus PATH): nothing leaks in from the test runner's own environment.
 */
export class BotProcess {
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly lines: CapturedLine[] = [];
  readonly exited: Promise<Exit>;
  readonly cwd: string;
  exit: Exit | undefined;
  /** Every process seen in this tree, for the final orphan check. */
  readonly seenPids = new Set<number>();
  readonly #waiters = new WaitList<CapturedLine>();

  constructor(script: string, env: Record<string, string>) {
    this.cwd = mkdtempSync(join(tmpdir(), 'ops-test-'));
    this.proc = spawn(process.execPath, [join(DIST_BOT, script)], {
      cwd: this.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (this.proc.pid === undefined) throw new Error(`could not start ${script}`);
    this.pid = this.proc.pid;
    this.seenPids.add(this.pid);
    this.#capture('stdout');
    this.#capture('stderr');
    this.exited = new Promise<Exit>((done) => {
      this.proc.once('exit', (code, signal) => {
        this.exit = { code, signal, at: performance.now() };
        done(this.exit);
      });
    });
  }

  #capture(stream: 'stdout' | 'stderr'): void {
    let partial = '';
    const source = stream === 'stdout' ? this.proc.stdout : this.proc.stderr;
    source?.setEncoding('utf8');
    const push = (raw: string): void => {
      if (raw.trim() === '') return;
      const line: CapturedLine = { stream, raw, entry: parse(raw), at: Date.now() };
      this.lines.push(line);
      this.#waiters.notify(line);
    };
    source?.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const raw of parts) push(raw);
    });
    source?.on('end', () => {
      if (partial !== '') push(partial);
      partial = '';
    });
  }

  waitForLine(pred: (entry: LogEntry, line: CapturedLine) => boolean, timeoutMs: number, what: string) {
    const matches = (line: CapturedLine): boolean => line.entry !== undefined && pred(line.entry, line);
    return this.#waiters.wait(matches, timeoutMs, `${what} in the output of pid ${this.pid}`, this.lines);
  }

  /** The port the operations server reported (HTTP_PORT=0 picks a free one). */
  async opsPort(timeoutMs = 10_000): Promise<number> {
    const line = await this.waitForLine((e) => e.msg === 'ops server listening', timeoutMs, 'the ops port');
    const port = line.entry?.port;
    if (typeof port !== 'number') throw new Error(`no port in ${line.raw}`);
    return port;
  }

  /** All the output, for diagnostics and the token check. */
  output(): string {
    return this.lines.map((l) => `[${l.stream}] ${l.raw}`).join('\n');
  }

  entries(): LogEntry[] {
    return this.lines.flatMap((l) => (l.entry ? [l.entry] : []));
  }

  /** Live processes below this one (children, grandchildren ...). */
  descendants(): number[] {
    const found = descendantsOf(this.pid);
    for (const pid of found) this.seenPids.add(pid);
    return found;
  }

  signal(signal: NodeJS.Signals): void {
    if (this.exit === undefined) this.proc.kill(signal);
  }

  /** SIGKILL for the whole tree, then waits (bounded) until nothing of it is alive. */
  async destroy(): Promise<void> {
    const tree = [...this.descendants(), ...(this.exit === undefined ? [this.pid] : [])];
    for (const pid of [...this.seenPids]) if (!tree.includes(pid) && isAlive(pid)) tree.push(pid);
    for (const pid of tree) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (this.exit === undefined) await withTimeout(this.exited, 5_000, `pid ${this.pid} to exit`);
    await eventually(() => (this.alive().length === 0 ? true : undefined), 5_000, 'the process tree to end');
    this.#waiters.close();
    rmSync(this.cwd, { recursive: true, force: true });
  }

  /** Pids of this tree still running (zombies count as ended). */
  alive(): number[] {
    return [...this.seenPids].filter(isAlive);
  }
}

/** `ps --ppid`, recursively. */
export function descendantsOf(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift() as number;
    let text = '';
    try {
      text = execFileSync('ps', ['-o', 'pid=', '--ppid', String(parent)], { encoding: 'utf8' });
    } catch {
      // ps exits 1 when nothing matches
    }
    for (const part of text.split('\n')) {
      const child = Number(part.trim());
      if (Number.isInteger(child) && child > 0) {
        out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}

/** Running and not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return stat !== '' && !stat.startsWith('Z');
  } catch {
    return false;
  }
}

// ---- HTTP ------------------------------------------------------------------------------------------

export interface HttpAnswer {
  status: number;
  body: string;
}

/** One GET on 127.0.0.1 without keep-alive, bounded. */
export function httpGet(port: number, path: string, timeoutMs = 2_000): Promise<HttpAnswer> {
  return new Promise<HttpAnswer>((done, fail) => {
    const req = request({ host: LOCALHOST, port, path, method: 'GET', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => done({ status: res.statusCode ?? 0, body }));
      res.on('error', fail);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`GET ${path} timed out after ${timeoutMs} ms`)));
    req.on('error', fail);
    req.end();
  });
}

export interface ReadyBody {
  ready: boolean;
  detail?: { shards?: number; expected?: number; notReady?: number[] };
}

export async function readyz(port: number): Promise<{ status: number; body: ReadyBody }> {
  const answer = await httpGet(port, '/readyz');
  return { status: answer.status, body: JSON.parse(answer.body) as ReadyBody };
}

/** Polls /readyz until it answers `status`. */
export function readyzBecomes(
  port: number,
  status: 200 | 503,
  timeoutMs: number,
  everyMs = 50,
): Promise<{ status: number; body: ReadyBody; at: number }> {
  return eventually(
    async () => {
      const answer = await readyz(port);
      return answer.status === status ? { ...answer, at: Date.now() } : undefined;
    },
    timeoutMs,
    `/readyz to answer ${status}`,
    everyMs,
  );
}

// ---- Prometheus text ----------------------------------------------------------------------------------

/** The value of one sample: the metric name and a subset of its labels, or undefined when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found: Record<string, string> = {};
    for (const pair of (match[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      found[pair[1] as string] = pair[2] as string;
    }
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[4]);
  }
  return undefined;
}

// ---- the directory emulator ------------------------------------------------------------------------

export type { StatsBody };

/** Requests to POST /stats (any API version), in order of arrival. */
export function statsRequests(emu: Emulator): RecordedRequest[] {
  return emu.requests.filter((r) => r.method === 'POST' && /^\/v[12]\/stats(\?|$)/.test(r.path));
}

export function bodyOf(r: RecordedRequest): StatsBody {
  return JSON.parse(r.body) as StatsBody;
}

/** Every secret that must never appear in captured output. */
export function leakedSecrets(text: string, secrets: Iterable<string>): string[] {
  return [...secrets].filter((s) => s.length >= 4 && text.includes(s));
}
