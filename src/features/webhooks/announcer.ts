/**
 * Announces the webhook events the receiver stored (the outbox of store/webhooks.ts): their policy
 * on the outbox engine (tasks/outbox.ts). It looks at the store when woken (this process stored an
 * event) and every `pollMs` (another process did, or a claim ran out), claims each event (of
 * several processes one wins), hands it to the handler, and records how it went: announced once
 * across restarts, kill -9 and several processes. A server's events go in the order they came (a
 * comment, then its edit): one to be tried again holds the server's later ones back; servers go
 * side by side, and each look takes them in turns (the store's `due`), so a server with many
 * events waiting does not hold the others back.
 */
import type { EventClaim, StoredEvent, WebhookRepository } from '../../store/webhooks.js';
import { keyedSource } from '../../tasks/finish-as.js';
import { Outbox, type RunnerOptions, type SendOutcome } from '../../tasks/outbox.js';

export interface EventHandler {
  handle(event: StoredEvent, claim: EventClaim): Promise<SendOutcome>;
}

export interface AnnouncerOptions extends RunnerOptions {
  webhooks: Pick<WebhookRepository, 'due' | 'claim' | 'finish' | 'retryAt'>;
  handler: EventHandler;
  /** Each event done: how long after it came, and how. */
  onDone?: ((event: { type: string; outcome: SendOutcome; latencyMs: number }) => void) | undefined;
}

/** Events are due as they come: nothing ahead to load, and a look more often than reminders. */
const ANNOUNCER_DEFAULTS = { horizonMs: 0, pollMs: 5_000, batch: 200, concurrency: 8 };

export class WebhookAnnouncer {
  readonly #outbox: Outbox<StoredEvent, EventClaim>;

  constructor(options: AnnouncerOptions) {
    const { webhooks, handler, onDone } = options;
    this.#outbox = new Outbox<StoredEvent, EventClaim>({
      ...options,
      defaults: ANNOUNCER_DEFAULTS,
      source: keyedSource(
        webhooks,
        (event) => event.id,
        (now, _until, limit) => webhooks.due(now, limit),
      ),
      policy: {
        noun: 'webhook event',
        verb: 'announced',
        key: (event) => event.id,
        dueAt: (event) => event.receivedAt,
        lane: (event) => event.guildId,
        fields: (event) => ({ event: event.id }),
        since: (event) => event.receivedAt,
        act: (event, claim) => handler.handle(event, claim),
        traceParent: (event) => event.traceParent,
      },
      onDone:
        onDone &&
        (({ item, outcome, latenessMs }) => onDone({ type: item.type, outcome, latencyMs: latenessMs })),
    });
  }

  /** Looks now (events stored while the bot was down go out), then every pollMs. */
  start(): void {
    this.#outbox.start();
  }

  /** An event was stored: look now. */
  wake(): void {
    this.#outbox.wake();
  }

  /** Stops looking and waits (bounded) for the announcements in flight. */
  stop(): Promise<void> {
    return this.#outbox.stop();
  }
}
