/**
 * The bot's built entry points (`main.js`, `sharded.js`, and the REST proxy's `rest-proxy.js`) as
 * child processes, as Docker runs them, with their process trees: the fault suite kills one
 * mid-request and starts another on the same data; the operations tests follow the shard processes
 * the sharded mode spawns.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { type Exit, NodeChild } from './child.js';
import type { LogEntry } from './logs.js';
import { ROOT } from './spawn.js';
import { eventually, START_BOUND_MS, withTimeout } from './wait.js';

export { ROOT };
/** Where the build puts the bot's entry points. */
export const DIST_BOT = join(ROOT, 'dist/src/app');

export type BotScript = 'main.js' | 'sharded.js' | 'rest-proxy.js';

export class BotProcess extends NodeChild {
  /** Every process seen in this tree, for the final orphan check. */
  readonly seenPids = new Set<number>();

  /** `name` is how errors and diagnostics call it (default: the script). */
  constructor(script: BotScript, env: Record<string, string>, name: string = script) {
    super(name, join(DIST_BOT, script), env);
    this.seenPids.add(this.pid);
  }

  /** Waits for the 'connected to Discord' line (the gateway is ready); bounded for a busy machine. */
  ready(timeoutMs = START_BOUND_MS): Promise<LogEntry> {
    return this.waitForEntry((e) => e.msg === 'connected to Discord', timeoutMs, 'connected to Discord');
  }

  /** The port the operations server reported (HTTP_PORT=0 picks a free one); bounded for a busy machine. */
  async opsPort(timeoutMs = START_BOUND_MS): Promise<number> {
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

  /** Pids of this tree still running (zombies count as ended). */
  alive(): number[] {
    return [...this.seenPids].filter(isAlive);
  }

  /**
   * SIGTERM, then SIGKILL after `graceMs`; always resolves with the exit and removes the working
   * directory. For a process without children of its own (main.js).
   */
  async stop(graceMs = 5_000): Promise<Exit> {
    if (!this.exit) {
      this.kill('SIGTERM');
      const done = await withTimeout(this.exited, graceMs, `${this.name} to exit`).catch(() => undefined);
      if (!done) {
        this.kill('SIGKILL');
        await withTimeout(this.exited, 3_000, `${this.name} to die`).catch(() => undefined);
      }
    }
    this.removeCwd();
    return this.exit ?? { code: null, signal: null, at: performance.now() };
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
