/** Parsed pino lines, as the tests that capture the bot's logs read them. */
import { type DestinationStream, type Logger, pino } from 'pino';
import { WaitList } from '../discord/waiters.js';

export interface LogEntry {
  level: number;
  msg?: string;
  [key: string]: unknown;
}

export const LEVEL = { debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;

/** A pino line parsed, or undefined for a line that is not a JSON object. */
export function parseLogLine(raw: string): LogEntry | undefined {
  if (!raw.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null ? (value as LogEntry) : undefined;
  } catch {
    return undefined;
  }
}

/** A pino destination that keeps every line, with waits on parsed entries. */
export class LogSink implements DestinationStream {
  readonly lines: string[] = [];
  readonly entries: LogEntry[] = [];
  readonly #waiters = new WaitList<{ index: number; entry: LogEntry }>();

  write(line: string): void {
    this.lines.push(line);
    // A line that is not JSON is kept as its text, with no level.
    const entry = parseLogLine(line.trim()) ?? { level: 0, msg: line };
    this.entries.push(entry);
    this.#waiters.notify({ index: this.entries.length - 1, entry });
  }

  /** The first entry from index `from` on, already written or still to come, matching `pred`. */
  async waitFor(
    pred: (entry: LogEntry) => boolean,
    timeoutMs: number,
    what: string,
    from = 0,
  ): Promise<LogEntry> {
    const written = this.entries.slice(from).map((entry, i) => ({ index: from + i, entry }));
    const found = await this.#waiters.wait(
      ({ index, entry }) => index >= from && pred(entry),
      timeoutMs,
      what,
      written,
    );
    return found.entry;
  }

  count(pred: (entry: LogEntry) => boolean): number {
    return this.entries.filter(pred).length;
  }

  close(): void {
    this.#waiters.close();
  }
}

/**
 * A pino logger at debug, without pid and hostname, writing into a LogSink: what a unit test hands
 * a component. `lines` are the parsed entries, `raw` the lines as written.
 */
export function captureLogger(): { logger: Logger; sink: LogSink; lines: LogEntry[]; raw: string[] } {
  const sink = new LogSink();
  const logger = pino({ level: 'debug', base: null }, sink);
  return { logger, sink, lines: sink.entries, raw: sink.lines };
}
