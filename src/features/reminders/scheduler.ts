/**
 * The reminder scheduler: the reminders' policy on the outbox engine (tasks/outbox.ts). The store
 * is the schedule: no timer per reminder; a look every `pollMs` loads what falls due within
 * `horizonMs`, and `wake(dueAt)` (an /up of this process just set a reminder) makes it look again
 * when a reminder falls due before its next look; other processes' reminders are seen at the next
 * look, at most `pollMs` late. Reminders that fell due while the bot was down are due at the first
 * look, at start. A process sends only for the guilds of its shards (`ownsGuild`).
 *
 * Each due reminder is claimed, sent with the claim's nonce, and recorded (the engine): sent once
 * across restarts, kill -9 and several processes. A server's reminder may be due again in its
 * cycle (a heads-up, then the reminder, then repeats: cycle.ts); each post is its own claim, with
 * its own nonce.
 */
import type { Claim, Reminder, ReminderKey, ReminderRepository } from '../../store/reminders.js';
import { Outbox, type RunnerOptions, type SendOutcome } from '../../tasks/outbox.js';

export interface ReminderSender {
  send(reminder: Reminder, claim: Claim): Promise<SendOutcome>;
}

export interface SchedulerOptions extends RunnerOptions {
  reminders: Pick<ReminderRepository, 'dueSoon' | 'claim' | 'markSent' | 'markFailed' | 'retryAt'>;
  sender: ReminderSender;
  /** Whether this process sends for the guild (its shards'). Default: every guild. */
  ownsGuild?: ((guildId: string) => boolean) | undefined;
  /** Each reminder done: how late it went out (ms after its due time), and how. */
  onDone?: ((event: { key: ReminderKey; latenessMs: number; outcome: SendOutcome }) => void) | undefined;
}

function keyOf(key: ReminderKey): string {
  return key.kind === 'guild' ? `g:${key.guildId}` : `p:${key.guildId}:${key.userId}`;
}

export class ReminderScheduler {
  readonly #outbox: Outbox<Reminder, Claim>;

  constructor(options: SchedulerOptions) {
    const { reminders, sender, ownsGuild, onDone } = options;
    this.#outbox = new Outbox<Reminder, Claim>({
      ...options,
      source: {
        due: (_now, until, limit) => reminders.dueSoon(until, limit),
        claim: (reminder, by, leaseMs, now) => reminders.claim(reminder.key, by, leaseMs, now),
        finish: async (claim, outcome, now) => {
          if (outcome.kind !== 'sent') return reminders.markFailed(claim, outcome.reason, now);
          const kept = await reminders.markSent(claim, now, outcome.again);
          // A server's reminder that goes on (its heads-up was posted, or a repeat is to come).
          if (kept && outcome.again) this.wake(outcome.again.at);
          return kept;
        },
        retryAt: (claim, at) => reminders.retryAt(claim, at),
      },
      policy: {
        noun: 'reminder',
        verb: 'sent',
        key: (reminder) => keyOf(reminder.key),
        dueAt: (reminder) => reminder.dueAt,
        accepts: ownsGuild && ((reminder) => ownsGuild(reminder.key.guildId)),
        fields: (reminder) => ({ reminder: reminder.key }),
        since: (_reminder, claim) => claim.dueAt,
        act: (reminder, claim) => sender.send(reminder, claim),
        traceParent: (reminder) => reminder.traceParent,
      },
      onDone: onDone && (({ claim, latenessMs, outcome }) => onDone({ key: claim.key, latenessMs, outcome })),
    });
  }

  /** Looks at the store now (reminders due while the bot was down go out), then every pollMs. */
  start(): void {
    this.#outbox.start();
  }

  /** A reminder of this process now falls due at `dueAt`: look before then if need be. */
  wake(dueAt: number): void {
    this.#outbox.wake(dueAt);
  }

  /** Stops looking and waits (bounded) for the sends in flight; what is left is claimed later. */
  stop(): Promise<void> {
    return this.#outbox.stop();
  }

  /** How many reminders are held in memory now (the due-soon window and the sends in flight). */
  get held(): number {
    return this.#outbox.held;
  }
}
