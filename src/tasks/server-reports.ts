/**
 * Reports the guilds the bot joins and leaves to the directory (POST /server with `up: 0`), as the
 * directory's service bot must.
 *
 * POST /server allows one request per 2 s for the whole token, and an interactive /up shares that
 * budget, so these reports go in at background priority, one at a time, and only the newest state
 * of each guild is kept: a join and a leave that both wait are worth one request, not two.
 * A failed report waits with bounded exponential backoff and is given up after a few attempts;
 * failures that the same request would meet again (token, permissions, malformed body) are logged
 * for the operator and not repeated.
 */
import type { DirectoryClient } from '../directory/client.js';
import type { ServerStatistics, ServerUpdate, ServerUpResult } from '../directory/types.js';
import type { Logger } from '../log/logger.js';
import { failureOf } from './failure.js';

export interface GuildReport extends ServerStatistics {
  guildId: string;
  /** true after a join, false after a leave or the guild's deletion (not an outage). */
  botPresent: boolean;
  /** The directory wants upUserID even for up 0: the bot's own user ID. */
  reporterUserId: string;
  /** A channel of the guild; the directory wants upChannelID and upChannelName even for up 0. */
  channelId: string;
  channelName: string;
}

export interface ServerReporterOptions {
  directory: Pick<DirectoryClient, 'postServer'>;
  logger: Logger;
  /** Attempts per guild state, the first included. Default 6. */
  maxAttempts?: number;
  /** Exponential backoff between attempts. Default 5 s doubling up to 5 min. */
  backoff?: { baseMs: number; capMs: number };
  random?: () => number;
  now?: () => number;
  /** Default: setTimeout, unref'd so a pending retry never keeps the process alive. */
  setTimer?: (fn: () => void, ms: number) => Timer;
  /** How long stop() waits for the request in flight before cancelling it. Default 5 s. */
  stopTimeoutMs?: number;
}

export interface Timer {
  clear(): void;
}

export type ReportOutcome = 'sent' | 'retry' | 'dropped';

export interface ReportResult {
  guildId: string;
  outcome: ReportOutcome;
  /** The error code (DirectoryError.code, 'Unexpected' or 'Stopped') when not sent. */
  error?: string;
}

export const DEFAULT_MAX_ATTEMPTS = 6;
export const DEFAULT_BACKOFF = { baseMs: 5_000, capMs: 300_000 } as const;
export const DEFAULT_STOP_TIMEOUT_MS = 5_000;
/** After cancelling, how long stop() still gives the client to let go of the request. */
const ABORT_GRACE_MS = 1_000;
/** At most this many guild IDs in the stop line; the count is always complete. */
const LOGGED_IDS = 20;

/**
 * Failures the same request would meet again: someone has to change the token, its kind, its
 * permissions or our code. Logged at error and not retried.
 */
const OPERATOR_HINTS: Readonly<Record<string, string>> = {
  Unauthorized: 'the directory refused the token; check DIRECTORY_TOKEN',
  Forbidden: 'the token may not report this server (a PrivateBot token covers five servers only)',
  TokenKindNotAccepted: 'POST /server needs a Bot (service bot) or PrivateBot token',
  InvalidArgument: 'the report is malformed; nothing was sent',
  BadRequest: 'the directory rejected the body of the report',
};

/** Equal jitter: reports that failed together spread out, yet none returns before half its step. */
export function backoffDelay(
  failures: number,
  backoff: { baseMs: number; capMs: number },
  random: () => number,
): number {
  const step = Math.min(backoff.capMs, backoff.baseMs * 2 ** Math.max(0, failures - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

export function toServerUpdate(report: GuildReport): ServerUpdate {
  const update: ServerUpdate = {
    serverId: report.guildId,
    // Joins and leaves only update statistics; an up is something a person asks for.
    up: false,
    botPresent: report.botPresent,
    upUserId: report.reporterUserId,
    upChannelId: report.channelId,
    upChannelName: report.channelName,
  };
  if (report.name !== undefined) update.name = report.name;
  if (report.avatar !== undefined) update.avatar = report.avatar;
  if (report.membersAll !== undefined) update.membersAll = report.membersAll;
  if (report.membersOnline !== undefined) update.membersOnline = report.membersOnline;
  if (report.ownerId !== undefined) update.ownerId = report.ownerId;
  if (report.ownerTag !== undefined) update.ownerTag = report.ownerTag;
  return update;
}

function isGuildReport(value: unknown): value is GuildReport {
  if (typeof value !== 'object' || value === null) return false;
  const { guildId, botPresent } = value as Partial<Record<keyof GuildReport, unknown>>;
  return typeof guildId === 'string' && guildId.length > 0 && typeof botPresent === 'boolean';
}

function defaultSetTimer(fn: () => void, ms: number): Timer {
  const handle = setTimeout(fn, ms);
  handle.unref();
  return { clear: () => clearTimeout(handle) };
}

interface Pending {
  report: GuildReport;
  /** Failed attempts of this state so far. */
  attempts: number;
  /** Not sent before this time (a retry's backoff). */
  readyAt: number;
}

interface Flight {
  entry: Pending;
  controller: AbortController;
  /** Settles (never rejects) once the answer has been handled. */
  done: Promise<void>;
}

type State = 'running' | 'stopping' | 'stopped';

export class ServerReporter {
  /** Metrics hook: one call per attempt's outcome and per report dropped at stop. */
  onResult?: (r: ReportResult) => void;

  readonly #directory: Pick<DirectoryClient, 'postServer'>;
  readonly #log: Logger;
  readonly #maxAttempts: number;
  readonly #backoff: { baseMs: number; capMs: number };
  readonly #random: () => number;
  readonly #now: () => number;
  readonly #setTimer: (fn: () => void, ms: number) => Timer;
  readonly #stopTimeoutMs: number;

  /** Map order is the send order; a coalesced state keeps its guild's place. */
  readonly #pending = new Map<string, Pending>();
  #flight: Flight | undefined;
  #wake: { timer: Timer; at: number } | undefined;
  /** After a 429 the whole route is blocked, not just the guild that met it. */
  #pausedUntil = 0;
  #state: State = 'running';
  #stopping: Promise<void> | undefined;
  #idleWaiters: Array<() => void> = [];

  constructor(options: ServerReporterOptions) {
    const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1) {
      throw new RangeError('maxAttempts must be a whole number of at least 1');
    }
    const backoff = options.backoff ?? DEFAULT_BACKOFF;
    if (!(backoff.baseMs > 0) || !(backoff.capMs >= backoff.baseMs)) {
      throw new RangeError('backoff needs baseMs > 0 and capMs >= baseMs');
    }
    this.#directory = options.directory;
    this.#log = options.logger.child({ task: 'server-reports' });
    this.#maxAttempts = maxAttempts;
    this.#backoff = { baseMs: backoff.baseMs, capMs: backoff.capMs };
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
    this.#setTimer = options.setTimer ?? defaultSetTimer;
    this.#stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
  }

  /** Guilds waiting to be sent, including those waiting for a retry (not the one in flight). */
  get pending(): number {
    return this.#pending.size;
  }

  /** Queues the guild's newest state. Called from gateway listeners, so it never throws. */
  report(report: GuildReport): void {
    try {
      this.#enqueue(report);
    } catch (err) {
      this.#internalError(err, 'report');
    }
  }

  /** Resolves when nothing is pending or in flight. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops accepting reports, lets the request in flight finish (bounded), drops the rest. */
  stop(): Promise<void> {
    this.#stopping ??= this.#shutdown().catch((err: unknown) => this.#internalError(err, 'stop'));
    return this.#stopping;
  }

  #enqueue(report: GuildReport): void {
    if (this.#state !== 'running') {
      const guildId = isGuildReport(report) ? report.guildId : undefined;
      this.#log.debug({ guildId }, 'server reporter is stopped; report ignored');
      return;
    }
    if (!isGuildReport(report)) {
      this.#log.error(
        { guildId: (report as { guildId?: unknown } | null)?.guildId, code: 'InvalidArgument' },
        'server report without a guildId or botPresent ignored',
      );
      return;
    }
    const replaced = this.#pending.get(report.guildId);
    // A newer state replaces a waiting one, its retry wait and its attempt count.
    this.#pending.set(report.guildId, { report: { ...report }, attempts: 0, readyAt: this.#now() });
    if (replaced) {
      this.#log.debug(
        { guildId: report.guildId, botPresent: report.botPresent, replacedAttempts: replaced.attempts },
        'newer guild state replaces the pending server report',
      );
    }
    this.#pump();
  }

  /** Starts the next ready report, or sets a timer for when one will be ready. */
  #pump(): void {
    if (this.#state !== 'running' || this.#flight) return;
    if (this.#pending.size === 0) {
      this.#clearWake();
      return;
    }
    const now = this.#now();
    if (this.#pausedUntil > now) {
      this.#scheduleWake(this.#pausedUntil, now);
      return;
    }
    let next = Number.POSITIVE_INFINITY;
    for (const entry of this.#pending.values()) {
      if (entry.readyAt <= now) {
        this.#send(entry);
        return;
      }
      next = Math.min(next, entry.readyAt);
    }
    this.#scheduleWake(next, now);
  }

  #scheduleWake(at: number, now: number): void {
    if (this.#wake?.at === at) return;
    this.#clearWake();
    const timer = this.#setTimer(
      () => {
        this.#wake = undefined;
        try {
          this.#pump();
        } catch (err) {
          this.#internalError(err, 'timer');
        }
      },
      Math.max(0, at - now),
    );
    this.#wake = { timer, at };
  }

  #clearWake(): void {
    this.#wake?.timer.clear();
    this.#wake = undefined;
  }

  #send(entry: Pending): void {
    this.#pending.delete(entry.report.guildId);
    const flight: Flight = { entry, controller: new AbortController(), done: Promise.resolve() };
    this.#flight = flight;
    flight.done = this.#run(flight);
  }

  async #run(flight: Flight): Promise<void> {
    const { entry } = flight;
    const attempt = entry.attempts + 1;
    let outcome: { ok: true; result: ServerUpResult } | { ok: false; error: unknown };
    try {
      const result = await this.#directory.postServer(toServerUpdate(entry.report), {
        priority: 'background',
        signal: flight.controller.signal,
      });
      outcome = { ok: true, result };
    } catch (error) {
      outcome = { ok: false, error };
    }
    try {
      if (outcome.ok) this.#sent(entry, attempt, outcome.result);
      else this.#failed(entry, attempt, outcome.error);
    } catch (err) {
      this.#internalError(err, 'answer');
    } finally {
      this.#flight = undefined;
      try {
        this.#pump();
      } catch (err) {
        this.#internalError(err, 'pump');
      }
      this.#notifyIdle();
    }
  }

  #sent(entry: Pending, attempt: number, result: ServerUpResult): void {
    const { guildId, botPresent } = entry.report;
    if (result.updated === false) {
      // The directory took the request but says the update did not happen; the same body would
      // meet the same answer, so this is for the operator to read, not to repeat.
      this.#log.warn(
        { guildId, botPresent, attempt, directoryMessage: result.message },
        'directory did not update the server',
      );
    } else {
      this.#log.info({ guildId, botPresent, attempt }, 'server report sent');
    }
    this.#emit({ guildId, outcome: 'sent' });
  }

  #failed(entry: Pending, attempt: number, err: unknown): void {
    const { guildId, botPresent } = entry.report;
    const failure = failureOf(err);
    const fields = {
      guildId,
      botPresent,
      attempt,
      maxAttempts: this.#maxAttempts,
      code: failure.code,
      status: failure.status,
      error: failure.message,
    };
    const hint = OPERATOR_HINTS[failure.code];
    if (hint !== undefined) {
      this.#log.error({ ...fields, hint }, 'server report rejected; not retried');
      this.#emit({ guildId, outcome: 'dropped', error: failure.code });
      return;
    }
    if (failure.code === 'NotFound') {
      // The directory does not know this server: asking again gets the same answer, and there
      // is nothing the operator can change about it.
      this.#log.warn(fields, 'directory does not know the server; report not retried');
      this.#emit({ guildId, outcome: 'dropped', error: failure.code });
      return;
    }
    if (this.#state === 'stopped') {
      this.#log.warn(fields, 'server report failed after stop; dropped');
      this.#emit({ guildId, outcome: 'dropped', error: failure.code });
      return;
    }
    if (this.#pending.has(guildId)) {
      // A newer state of the guild arrived meanwhile; it is the retry.
      this.#log.warn({ ...fields, superseded: true }, 'server report failed; a newer state is queued');
      this.#emit({ guildId, outcome: 'retry', error: failure.code });
      return;
    }
    if (this.#state === 'stopping') {
      // Back in the queue only so that stop() counts it among the dropped.
      this.#pending.set(guildId, { ...entry, attempts: attempt });
      this.#log.warn(fields, 'server report failed while stopping');
      return;
    }
    if (attempt >= this.#maxAttempts) {
      this.#log.error(fields, 'server report failed; giving up');
      this.#emit({ guildId, outcome: 'dropped', error: failure.code });
      return;
    }
    const now = this.#now();
    let retryInMs = backoffDelay(attempt, this.#backoff, this.#random);
    if (failure.code === 'RateLimited') {
      const after = failure.retryAfterMs;
      if (after !== undefined && Number.isFinite(after) && after >= 0) retryInMs = after;
      this.#pausedUntil = Math.max(this.#pausedUntil, now + retryInMs);
    }
    this.#pending.set(guildId, { ...entry, attempts: attempt, readyAt: now + retryInMs });
    this.#log.warn({ ...fields, retryInMs }, 'server report failed; will retry');
    this.#emit({ guildId, outcome: 'retry', error: failure.code });
  }

  async #shutdown(): Promise<void> {
    this.#state = 'stopping';
    this.#clearWake();
    const flight = this.#flight;
    let unanswered = 0;
    if (flight && !(await this.#settlesWithin(flight.done, this.#stopTimeoutMs))) {
      flight.controller.abort();
      if (!(await this.#settlesWithin(flight.done, ABORT_GRACE_MS))) unanswered = 1;
    }
    const dropped = [...this.#pending.keys()];
    this.#pending.clear();
    this.#state = 'stopped';
    const fields = { dropped: dropped.length, unanswered, guildIds: dropped.slice(0, LOGGED_IDS) };
    const message = `server reporter stopped; dropped ${dropped.length} pending report(s)`;
    if (dropped.length > 0 || unanswered > 0) this.#log.warn(fields, message);
    else this.#log.info(fields, message);
    for (const guildId of dropped) this.#emit({ guildId, outcome: 'dropped', error: 'Stopped' });
    this.#notifyIdle();
  }

  /** true when `done` settled within `ms`; `done` never rejects. */
  #settlesWithin(done: Promise<void>, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = this.#setTimer(() => resolve(false), ms);
      void done.then(() => {
        timer.clear();
        resolve(true);
      });
    });
  }

  #isIdle(): boolean {
    return this.#pending.size === 0 && this.#flight === undefined;
  }

  #notifyIdle(): void {
    if (!this.#isIdle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #emit(result: ReportResult): void {
    try {
      this.onResult?.(result);
    } catch (err) {
      // A broken metrics hook must not stop the reports.
      this.#log.warn({ guildId: result.guildId, error: failureOf(err).message }, 'onResult hook threw');
    }
  }

  #internalError(err: unknown, where: string): void {
    try {
      this.#log.error({ where, error: failureOf(err).message }, 'server reporter internal error');
    } catch {
      // Nothing is left to tell; the listener that called us must not see this either.
    }
  }
}
