/**
 * Helpers for the operations tests: child processes of the built bot with their output captured
 * line by line, bounded waits, HTTP probes of the operations endpoint, Prometheus text parsing,
 * and the process tree (`ps`) so that no shard process outlives a test.
 */
import { execFileSync } from 'node:child_process';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DestinationStream } from 'pino';
import type { StatsBody } from '../../src/tasks/stats-poster.js';
import { type GuildFixture, makeGuild, makeGuilds, randomToken } from '../discord/index.js';
import { WaitList } from '../discord/waiters.js';
import type { Emulator, RecordedRequest } from '../emulator/index.js';
import { NodeChild, parseLogLine } from '../support/child.js';
import { LEVEL, type LogEntry } from '../support/logs.js';
import { sleep, withTimeout } from '../support/wait.js';

export type { CapturedLine, Exit } from '../support/child.js';
export type { LogEntry };
export { LEVEL, sleep, withTimeout };

export const LOCALHOST = '127.0.0.1';
export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
export const DIST_BOT = join(ROOT, 'dist/src/app');

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
    // A line that is not JSON is kept as its text, with no level.
    const entry = parseLogLine(line.trim()) ?? { level: 0, msg: line };
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

/** A built entry point of the bot (`main.js`, `sharded.js`) as a child, with its process tree. */
export class BotProcess extends NodeChild {
  /** Every process seen in this tree, for the final orphan check. */
  readonly seenPids = new Set<number>();

  constructor(script: string, env: Record<string, string>) {
    super(script, join(DIST_BOT, script), env);
    this.seenPids.add(this.pid);
  }

  /** The port the operations server reported (HTTP_PORT=0 picks a free one). */
  async opsPort(timeoutMs = 10_000): Promise<number> {
    const line = await this.waitForLine((e) => e.msg === 'ops server listening', timeoutMs, 'the ops port');
    const port = line.entry?.port;
    if (typeof port !== 'number') throw new Error(`no port in ${line.raw}`);
    return port;
  }

  /** Live processes below this one (children, grandchildren ...). */
  descendants(): number[] {
    const found = descendantsOf(this.pid);
    for (const pid of found) this.seenPids.add(pid);
    return found;
  }

  signal(signal: NodeJS.Signals): void {
    this.kill(signal);
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
    this.removeCwd();
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
