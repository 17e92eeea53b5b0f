/**
 * A built entry point run as a child process, the way the fault suite and the operations tests
 * both drive the bot: `node <script>` in a temporary working directory (no `.env` is read there)
 * with only the environment given plus PATH, so nothing leaks in from the runner's own
 * environment; every line of its output captured (pino lines parsed), and waits for a line that
 * end with an error naming what was awaited when the time is up or the process is gone.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LogEntry, parseLogLine } from './logs.js';

export interface CapturedLine {
  stream: 'stdout' | 'stderr';
  raw: string;
  /** The parsed pino line; undefined for a line that is not JSON. */
  entry: LogEntry | undefined;
  /** Date.now() when the line was read. */
  at: number;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** performance.now() when the exit was seen. */
  at: number;
}

export class NodeChild {
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly lines: CapturedLine[] = [];
  readonly exited: Promise<Exit>;
  readonly cwd: string;
  readonly startedAt = performance.now();
  exit: Exit | undefined;
  /** Set once the process has exited and its output is read to the end. */
  #finished = false;
  readonly #waiters = new Set<() => void>();

  constructor(
    /** How errors and diagnostics name this process. */
    readonly name: string,
    script: string,
    env: Record<string, string>,
  ) {
    this.cwd = mkdtempSync(join(tmpdir(), 'bot-child-'));
    this.proc = spawn(process.execPath, [script], {
      cwd: this.cwd,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (this.proc.pid === undefined) throw new Error(`could not start ${script}`);
    this.pid = this.proc.pid;
    this.#capture('stdout');
    this.#capture('stderr');
    this.exited = new Promise<Exit>((done) => {
      this.proc.once('exit', (code, signal) => {
        this.exit = { code, signal, at: performance.now() };
        done(this.exit);
      });
    });
    // 'close' comes after 'exit' and after the last output: only then is a missing line missing.
    this.proc.once('close', () => {
      this.#finished = true;
      this.#wake();
    });
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }

  #capture(stream: 'stdout' | 'stderr'): void {
    let partial = '';
    const source = stream === 'stdout' ? this.proc.stdout : this.proc.stderr;
    source?.setEncoding('utf8');
    const push = (raw: string): void => {
      if (raw.trim() === '') return;
      this.lines.push({ stream, raw, entry: parseLogLine(raw), at: Date.now() });
      this.#wake();
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

  /**
   * The first pino line, seen or to come, matching `pred`. Rejects on timeout, or once the
   * process has ended with no such line, naming `what` and the last lines it wrote (both ways).
   */
  waitForLine(
    pred: (entry: LogEntry, line: CapturedLine) => boolean,
    timeoutMs: number,
    what: string,
  ): Promise<CapturedLine> {
    return new Promise((resolveLine, reject) => {
      const check = (): void => {
        const found = this.lines.find((l) => l.entry !== undefined && pred(l.entry, l));
        if (found) {
          finish();
          resolveLine(found);
        } else if (this.#finished) {
          finish();
          const end = this.exit?.code ?? this.exit?.signal;
          reject(
            new Error(
              `${this.name} (pid ${this.pid}) exited (${end}) before ${what}: ${this.why()}${this.tail()}`,
            ),
          );
        }
      };
      const timer = setTimeout(() => {
        finish();
        reject(
          new Error(
            `timed out after ${timeoutMs} ms waiting for ${this.name} (pid ${this.pid}): ${what}; ` +
              `its last lines: ${this.tail()}`,
          ),
        );
      }, timeoutMs);
      const finish = (): void => {
        clearTimeout(timer);
        this.#waiters.delete(check);
      };
      this.#waiters.add(check);
      check();
    });
  }

  /** The parsed entry of the first line matching `pred` (see waitForLine). */
  async waitForEntry(pred: (entry: LogEntry) => boolean, timeoutMs: number, what: string): Promise<LogEntry> {
    const line = await this.waitForLine((entry) => pred(entry), timeoutMs, what);
    return line.entry as LogEntry;
  }

  /**
   * The first line of stderr that names an error (`SyntaxError: …`, `Error [ERR_…]: …`), with a
   * separator, or nothing: a stack's last lines alone do not say what failed.
   */
  why(): string {
    const line = this.lines.find((l) => l.stream === 'stderr' && /^\s*\w*Error\b/.test(l.raw));
    return line ? `${line.raw.trim().slice(0, 300)} … ` : '';
  }

  /** The last lines it wrote, shortened, for an error message. */
  tail(count = 5): string {
    const last = this.lines.slice(-count).map((l) => l.raw.slice(0, 200));
    return last.length > 0 ? last.join(' | ') : '(nothing)';
  }

  /** All the output, for diagnostics and the token check. */
  output(): string {
    return this.lines.map((l) => `[${l.stream}] ${l.raw}`).join('\n');
  }

  get stderr(): string {
    return this.lines
      .filter((l) => l.stream === 'stderr')
      .map((l) => l.raw)
      .join('\n');
  }

  entries(): LogEntry[] {
    return this.lines.flatMap((l) => (l.entry ? [l.entry] : []));
  }

  /** Sends `signal` unless the process has already exited. */
  kill(signal: NodeJS.Signals): void {
    if (this.exit === undefined) this.proc.kill(signal);
  }

  /** Removes the temporary working directory. */
  removeCwd(): void {
    rmSync(this.cwd, { recursive: true, force: true });
  }
}
