/**
 * The reminders' follow-ups on the outbox engine (tasks/outbox.ts): each reminder taken by an up
 * (store/followups.ts) is edited once to say who upped and how long after it (the sender's
 * followUp), claimed in the store, across restarts, kill -9 and several processes; a process
 * edits only for the servers of its shards. An up of this process wakes it at once; others'
 * are seen at its next look.
 */
import type { Followup, FollowupClaim, FollowupRepository } from '../../store/followups.js';
import { keyedSource } from '../../tasks/finish-as.js';
import { Outbox, type RunnerOptions, type SendOutcome } from '../../tasks/outbox.js';

export interface FollowupOptions extends RunnerOptions {
  followups: Pick<FollowupRepository, 'due' | 'claim' | 'finish' | 'retryAt'>;
  sender: { followUp(followup: Followup): Promise<SendOutcome> };
  ownsGuild?: ((guildId: string) => boolean) | undefined;
  /** Each follow-up done: how long after the up its edit went out, and how. */
  onDone?: ((event: { latenessMs: number; outcome: SendOutcome }) => void) | undefined;
}

export class FollowupScheduler {
  readonly #outbox: Outbox<Followup, FollowupClaim>;

  constructor(options: FollowupOptions) {
    const { followups, sender, ownsGuild, onDone } = options;
    this.#outbox = new Outbox<Followup, FollowupClaim>({
      ...options,
      source: keyedSource(
        followups,
        (followup) => followup.messageId,
        (_now, _until, limit) => followups.due(limit),
      ),
      policy: {
        noun: 'reminder follow-up',
        verb: 'edited',
        key: (followup) => followup.messageId,
        dueAt: (followup) => followup.uppedAt,
        accepts: ownsGuild && ((followup) => ownsGuild(followup.guildId)),
        fields: (followup) => ({ guildId: followup.guildId, messageId: followup.messageId }),
        since: (followup) => followup.uppedAt,
        act: (followup) => sender.followUp(followup),
        traceParent: (followup) => followup.traceParent,
      },
      onDone: onDone && (({ latenessMs, outcome }) => onDone({ latenessMs, outcome })),
    });
  }

  start(): void {
    this.#outbox.start();
  }

  /** An up of this process left a follow-up: edit it now. */
  wake(): void {
    this.#outbox.wake(Date.now());
  }

  stop(): Promise<void> {
    return this.#outbox.stop();
  }
}
