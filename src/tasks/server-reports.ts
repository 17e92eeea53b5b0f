/**
 * Reports the guilds the bot joins and leaves to the directory (POST /server with `up: 0`), as the
 * directory's service bot must.
 *
 * POST /server allows one request per 2 s for the whole token, and an interactive /up shares that
 * budget, so these reports go in at background priority, one at a time, and only the newest state
 * of each guild is kept: a join and a leave that both wait are worth one request, not two.
 * A failed report waits with bounded exponential backoff and is given up after a few attempts;
 * failures that the same request would meet again (token, permissions, malformed body) are logged
 * for the operator and not repeated. A 429 blocks the route for every guild for as long as it asks,
 * but never longer than the backoff's cap (5 min): a `Retry-After` of a day must not hold every
 * join and leave for a day.
 *
 * Timers, cancellation and the bounded stop are the TaskLoop's (loop.ts).
 */
import type { DirectoryClient, ServerStatistics, ServerUpdate, ServerUpResult } from '../directory/index.js';
import type { Logger } from '../log/logger.js';
import { failureFields, failureOf } from './failure.js';
import { type Backoff, backoffDelay, DEFAULT_STOP_TIMEOUT_MS, TaskLoop, type TaskOptions } from './loop.js';

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

export interface ServerReporterOptions extends TaskOptions {
  directory: Pick<DirectoryClient, 'postServer'>;
  /** Attempts per guild state, the first included. Default 6. */
  maxAttempts?: number;
  /** Exponential backoff between attempts; capMs also bounds the wait a 429 asks for. Default 5 s doubling up to 5 min. */
  backoff?: Backoff;
  /** Metrics hook: one call per attempt's outcome and per report dropped at stop. One that throws is logged. */
  onResult?: (result: ReportResult) => void;
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

interface Pending {
  report: GuildReport;
  /** Failed attempts of this state so far. */
  attempts: number;
  /** Not sent before this time (a retry's backoff). */
  readyAt: number;
}

export class ServerReporter {
  readonly #directory: Pick<DirectoryClient, 'postServer'>;
  readonly #log: Logger;
  readonly #loop: TaskLoop;
  readonly #onResult: ServerReporterOptions['onResult'];
  readonly #maxAttempts: number;
  readonly #backoff: Backoff;
  readonly #random: () => number;
  readonly #now: () => number;

  /** Map order is the send order; a coalesced state keeps its guild's place. */
  readonly #pending = new Map<string, Pending>();
  /** After a 429 the whole route is blocked, not just the guild that met it. */
  #pausedUntil = 0;
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
    this.#onResult = options.onResult;
    this.#maxAttempts = maxAttempts;
    this.#backoff = { baseMs: backoff.baseMs, capMs: backoff.capMs };
    this.#random = options.random ?? Math.random;
    this.#now = options.now ?? Date.now;
    this.#loop = new TaskLoop({
      name: 'server reporter',
      logger: this.#log,
      setTimer: options.setTimer,
      stopTimeoutMs: options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS,
      onStopped: (unanswered) => this.#stopped(unanswered),
    });
    this.#loop.start();
  }

  /** Queues the guild's newest state. Called from gateway listeners, so it never throws. */
  report(report: GuildReport): void {
    try {
      this.#enqueue(report);
    } catch (err) {
      this.#loop.internalError(err, 'report');
    }
  }

  /** Resolves when nothing is pending or in flight. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Stops accepting reports, lets the request in flight finish (bounded), drops the rest. */
  stop(): Promise<void> {
    return this.#loop.stop();
  }

  #enqueue(report: GuildReport): void {
    if (this.#loop.state !== 'running') {
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
    const fields = { guildId: report.guildId, botPresent: report.botPresent, queued: this.#pending.size };
    if (replaced) {
      this.#log.debug(
        { ...fields, replacedAttempts: replaced.attempts },
        'newer guild state replaces the pending server report',
      );
    } else {
      this.#log.debug(fields, 'server report queued');
    }
    this.#pump();
  }

  /** Starts the next ready report, or sets a timer for when one will be ready. */
  #pump(): void {
    if (this.#loop.state !== 'running' || this.#loop.busy) return;
    if (this.#pending.size === 0) {
      this.#loop.cancel();
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
    this.#loop.schedule(at - now, () => this.#pump());
  }

  #send(entry: Pending): void {
    this.#pending.delete(entry.report.guildId);
    void this.#loop
      .run(() => this.#attempt(entry))
      .then(() => {
        try {
          this.#pump();
        } catch (err) {
          this.#loop.internalError(err, 'pump');
        }
        this.#notifyIdle();
      });
  }

  /** One request and what its answer means; never rejects. */
  async #attempt(entry: Pending): Promise<void> {
    const attempt = entry.attempts + 1;
    const answer = await this.#loop.attempt((signal) =>
      this.#directory.postServer(toServerUpdate(entry.report), { priority: 'background', signal }),
    );
    try {
      if (answer.ok) this.#sent(entry, attempt, answer.value);
      else if (!answer.abandoned) this.#failed(entry, attempt, answer.error);
    } catch (err) {
      this.#loop.internalError(err, 'answer');
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
      ...failureFields(failure),
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
    if (this.#loop.state === 'stopped') {
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
    if (this.#loop.state === 'stopping') {
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
      retryInMs = this.#loop.retryAfter(failure, this.#backoff.capMs) ?? retryInMs;
      this.#pausedUntil = Math.max(this.#pausedUntil, now + retryInMs);
    }
    this.#pending.set(guildId, { ...entry, attempts: attempt, readyAt: now + retryInMs });
    this.#log.warn({ ...fields, retryInMs }, 'server report failed; will retry');
    this.#emit({ guildId, outcome: 'retry', error: failure.code });
  }

  /** After the request in flight has ended or been given up: what was still waiting is dropped. */
  #stopped(unanswered: boolean): void {
    const dropped = [...this.#pending.keys()];
    this.#pending.clear();
    const fields = {
      dropped: dropped.length,
      unanswered: unanswered ? 1 : 0,
      guildIds: dropped.slice(0, LOGGED_IDS),
    };
    const message = `server reporter stopped; dropped ${dropped.length} pending report(s)`;
    if (dropped.length > 0 || unanswered) this.#log.warn(fields, message);
    else this.#log.info(fields, message);
    for (const guildId of dropped) this.#emit({ guildId, outcome: 'dropped', error: 'Stopped' });
    this.#notifyIdle();
  }

  #isIdle(): boolean {
    return this.#pending.size === 0 && !this.#loop.busy;
  }

  #notifyIdle(): void {
    if (!this.#isIdle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #emit(result: ReportResult): void {
    const onResult = this.#onResult;
    if (onResult) this.#loop.callHook('onResult', () => onResult(result), { guildId: result.guildId });
  }
}
