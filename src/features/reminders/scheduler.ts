/**
 * The reminder scheduler: the store is the schedule. No timer per reminder: the scheduler looks
 * at the store every `pollMs` for what falls due within `horizonMs`, keeps that window (and only
 * that) in memory, and arms one timer for the earliest. `wake(dueAt)` (an /up of this process
 * just set a reminder) makes it look again when a reminder falls due before its next look; other
 * processes' reminders are seen at the next look, at most `pollMs` late.
 *
 * Each due reminder is claimed in the store (one conditional UPDATE: of several processes exactly
 * one wins), sent, then recorded as sent or failed. A process killed between the claim and the
 * record leaves the claim to expire: the next look takes it over with the same nonce, and Discord
 * drops the second copy (`enforce_nonce`). A transient failure is left to the lease the same way.
 * Reminders that fell due while the bot was down are due at the first look, at start.
 */
import type { Logger } from '../../log/logger.js';
import type { Claim, Reminder, ReminderKey, ReminderRepository } from '../../store/reminders.js';
import { MAX_TIMER_MS } from '../../time/range.js';

/** What became of one reminder. */
export type SendOutcome =
  /** Posted (or nothing to post: reminders off): recorded as sent. */
  | { kind: 'sent' }
  /** Sending again would not help (the channel is gone, a permission is missing): recorded. */
  | { kind: 'failed'; reason: string }
  /** May work later (Discord 5xx, a lost connection): the claim expires and it is sent again. */
  | { kind: 'retry'; detail: string };

export interface ReminderSender {
  send(reminder: Reminder, claim: Claim): Promise<SendOutcome>;
}

export interface SchedulerOptions {
  reminders: Pick<ReminderRepository, 'dueSoon' | 'claim' | 'markSent' | 'markFailed'>;
  sender: ReminderSender;
  logger: Logger;
  /** Who claims: unique per process (host, pid, random). */
  owner: string;
  /** Whether this process sends for the guild (its shards'). Default: every guild. */
  ownsGuild?: (guildId: string) => boolean;
  now?: () => number;
  /** How long a claim holds before another process may take it over. Default 30 s. */
  leaseMs?: number;
  /** How far ahead a look loads. Default 30 s. */
  horizonMs?: number;
  /** How often the store is looked at. Default 10 s. */
  pollMs?: number;
  /** Reminders loaded per look. Default 500. */
  batch?: number;
  /** Sends in flight at most. Default 16. */
  concurrency?: number;
  /** How long stop() waits for sends in flight. Default 3 s. */
  stopTimeoutMs?: number;
  /** Each reminder done: how late it went out (ms after its due time), and how. */
  onDone?: (event: { key: ReminderKey; latenessMs: number; outcome: SendOutcome }) => void;
}

/** Looks at the store at most this often, even through a backlog. */
const MIN_LOOK_GAP_MS = 100;

function keyOf(key: ReminderKey): string {
  return key.kind === 'guild' ? `g:${key.guildId}` : `p:${key.guildId}:${key.userId}`;
}

export class ReminderScheduler {
  readonly #o: Required<Omit<SchedulerOptions, 'onDone'>> & Pick<SchedulerOptions, 'onDone'>;
  /** The loaded window: key → reminder, sent when due. */
  readonly #window = new Map<string, Reminder>();
  readonly #inFlight = new Map<string, Promise<void>>();
  /** Loaded while being sent: back into the window when that send is done. */
  readonly #again = new Map<string, Reminder>();
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #nextLookAt = 0;
  #lastLookAt = 0;
  #looking: Promise<void> | undefined;
  #lookAgain = false;
  #running = false;
  /** The last look filled its batch: look again as soon as the window drains. */
  #full = false;

  constructor(options: SchedulerOptions) {
    this.#o = {
      ownsGuild: () => true,
      now: Date.now,
      leaseMs: 30_000,
      horizonMs: 30_000,
      pollMs: 10_000,
      batch: 500,
      concurrency: 16,
      stopTimeoutMs: 3_000,
      // An option given as undefined keeps its default.
      ...(Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as SchedulerOptions),
    };
  }

  /** Looks at the store now (reminders due while the bot was down go out), then every pollMs. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#look();
  }

  /** A reminder of this process now falls due at `dueAt`: look before then if need be. */
  wake(dueAt: number): void {
    if (!this.#running || !Number.isFinite(dueAt)) return;
    if (dueAt < this.#nextLookAt) this.#look();
  }

  /** Stops looking and waits (bounded) for the sends in flight; what is left is claimed later. */
  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#window.clear();
    this.#again.clear();
    const pending = [...this.#inFlight.values(), this.#looking].filter(Boolean);
    if (pending.length === 0) return;
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(pending),
      new Promise<void>((resolve) => {
        bound = setTimeout(resolve, this.#o.stopTimeoutMs);
      }),
    ]);
    clearTimeout(bound);
  }

  /** How many reminders are held in memory now (the due-soon window and the sends in flight). */
  get held(): number {
    return this.#window.size + this.#inFlight.size;
  }

  #look(): void {
    if (this.#looking) {
      this.#lookAgain = true;
      return;
    }
    this.#looking = this.#load()
      .catch((err: unknown) => {
        this.#o.logger.warn({ err }, 'could not read the reminders due soon; trying again at the next look');
      })
      .finally(() => {
        this.#looking = undefined;
        if (!this.#running) return;
        if (this.#lookAgain) {
          this.#lookAgain = false;
          this.#look();
          return;
        }
        this.#dispatch();
      });
  }

  async #load(): Promise<void> {
    const { now, horizonMs, batch, pollMs, ownsGuild } = this.#o;
    const t = now();
    this.#lastLookAt = t;
    this.#nextLookAt = t + pollMs;
    const due = await this.#o.reminders.dueSoon(t + horizonMs, batch);
    this.#full = due.length >= batch;
    if (this.#full) {
      // The window is as far as the batch reached: look again before going past it, yet not in a
      // tight loop when the batch is all claims that other processes hold.
      const reached = (due.at(-1)?.dueAt ?? t) + 1;
      this.#nextLookAt = Math.max(t + MIN_LOOK_GAP_MS, Math.min(this.#nextLookAt, reached));
    }
    for (const reminder of due) {
      if (!ownsGuild(reminder.key.guildId)) continue;
      const key = keyOf(reminder.key);
      // Being sent still (its record not yet written): looked at again once that send is done,
      // as a newer answer may have set it again meanwhile.
      if (this.#inFlight.has(key)) this.#again.set(key, reminder);
      else this.#window.set(key, reminder);
    }
  }

  /** Starts the sends that are due (as many as concurrency allows), then arms the one timer. */
  #dispatch(): void {
    if (!this.#running) return;
    const t = this.#o.now();
    let earliest = Number.POSITIVE_INFINITY;
    const due = [...this.#window.values()].sort((a, b) => a.dueAt - b.dueAt);
    for (const reminder of due) {
      if (reminder.dueAt > t) {
        earliest = Math.min(earliest, reminder.dueAt);
        break;
      }
      if (this.#inFlight.size >= this.#o.concurrency) break;
      const key = keyOf(reminder.key);
      this.#window.delete(key);
      const sending = this.#sendOne(reminder).finally(() => {
        this.#inFlight.delete(key);
        const again = this.#again.get(key);
        if (again) {
          this.#again.delete(key);
          this.#window.set(key, again);
        }
        if (!this.#running) return;
        if (this.#full && this.#window.size === 0 && this.#inFlight.size === 0) {
          // A backlog (the bot was down): the next batch as soon as this one is done.
          this.#nextLookAt = Math.min(this.#nextLookAt, this.#lastLookAt + MIN_LOOK_GAP_MS);
        }
        this.#dispatch();
      });
      this.#inFlight.set(key, sending);
    }
    this.#arm(Math.min(earliest, this.#nextLookAt));
  }

  #arm(at: number): void {
    if (at === this.#timerAt && this.#timer) return;
    clearTimeout(this.#timer);
    this.#timerAt = at;
    const ms = Math.min(Math.max(0, at - this.#o.now()), MAX_TIMER_MS);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Number.POSITIVE_INFINITY;
      if (this.#o.now() >= this.#nextLookAt) this.#look();
      else this.#dispatch();
    }, ms);
    this.#timer.unref();
  }

  async #sendOne(reminder: Reminder): Promise<void> {
    const { reminders, logger, owner, leaseMs, now } = this.#o;
    const key = reminder.key;
    let claim: Claim | undefined;
    try {
      claim = await reminders.claim(key, owner, leaseMs, now());
    } catch (err) {
      logger.warn({ err, reminder: key }, 'could not claim a due reminder; trying again at the next look');
      return;
    }
    // Not due any more (a later /up moved it), sent already, or another process holds it.
    if (!claim) return;
    let outcome: SendOutcome;
    try {
      outcome = await this.#o.sender.send(reminder, claim);
    } catch (err) {
      outcome = { kind: 'retry', detail: err instanceof Error ? err.message : String(err) };
    }
    const latenessMs = Math.max(0, now() - claim.dueAt);
    try {
      if (outcome.kind === 'sent') await reminders.markSent(claim, now());
      else if (outcome.kind === 'failed') await reminders.markFailed(claim, outcome.reason, now());
    } catch (err) {
      // The claim expires and the reminder is sent again with the same nonce: Discord drops it.
      logger.warn({ err, reminder: key }, 'could not record a reminder; its claim will expire');
    }
    if (outcome.kind === 'retry') {
      logger.warn(
        { reminder: key, detail: outcome.detail, retryInMs: leaseMs },
        'a reminder could not be sent now; it is tried again when its claim expires',
      );
    } else if (outcome.kind === 'failed') {
      logger.warn({ reminder: key, reason: outcome.reason }, 'a reminder could not be posted; recorded');
    } else {
      logger.debug({ reminder: key, latenessMs }, 'reminder sent');
    }
    this.#o.onDone?.({ key, latenessMs, outcome });
  }
}
