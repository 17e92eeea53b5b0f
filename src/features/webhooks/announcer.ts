/**
 * Announces the webhook events the receiver stored (the outbox of store/webhooks.ts). It looks at
 * the store when woken (this process stored an event) and every `pollMs` (another process did, or
 * a claim ran out), claims each event (of several processes one wins), hands it to the handler,
 * and records how it went. A server's events go in the order they came (a comment, then its
 * edit); servers go side by side.
 *
 * A process killed between the claim and the record leaves the claim to expire: the next look,
 * here or in another process, takes it over with the same nonce, and Discord drops the second
 * copy of a message that did get posted (`enforce_nonce`). A transient failure is left to the
 * lease the same way; one that trying again will not fix is recorded as failed.
 */
import type { Logger } from '../../log/logger.js';
import type { EventClaim, StoredEvent, WebhookRepository } from '../../store/webhooks.js';
import type { SendOutcome } from '../reminders/scheduler.js';

export interface EventHandler {
  handle(event: StoredEvent, claim: EventClaim): Promise<SendOutcome>;
}

export interface AnnouncerOptions {
  webhooks: Pick<WebhookRepository, 'due' | 'claim' | 'finish'>;
  handler: EventHandler;
  logger: Logger;
  /** Who claims: unique per process. */
  owner: string;
  now?: () => number;
  /** How long a claim holds before another process may take it over. Default 30 s. */
  leaseMs?: number;
  /** How often the store is looked at without being woken. Default 5 s. */
  pollMs?: number;
  /** Events loaded per look. Default 200. */
  batch?: number;
  /** Servers announced for at once. Default 8. */
  concurrency?: number;
  /** How long stop() waits for announcements in flight. Default 3 s. */
  stopTimeoutMs?: number;
  onDone?: (event: { type: string; outcome: SendOutcome; latencyMs: number }) => void;
}

export class WebhookAnnouncer {
  readonly #o: Required<Omit<AnnouncerOptions, 'onDone'>> & Pick<AnnouncerOptions, 'onDone'>;
  #running = false;
  #timer: NodeJS.Timeout | undefined;
  #pass: Promise<void> | undefined;
  #again = false;

  constructor(options: AnnouncerOptions) {
    this.#o = {
      now: Date.now,
      leaseMs: 30_000,
      pollMs: 5_000,
      batch: 200,
      concurrency: 8,
      stopTimeoutMs: 3_000,
      ...(Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as AnnouncerOptions),
    };
  }

  /** Looks now (events stored while the bot was down go out), then every pollMs. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.wake();
  }

  /** An event was stored: look now. */
  wake(): void {
    if (!this.#running) return;
    if (this.#pass) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#pass = this.#look()
      .catch((err: unknown) => {
        this.#o.logger.warn({ err }, 'could not read the webhook events to announce; trying again soon');
        return false;
      })
      .then((full) => {
        this.#pass = undefined;
        if (!this.#running) return;
        if (full || this.#again) {
          this.#again = false;
          this.wake();
          return;
        }
        this.#timer = setTimeout(() => this.wake(), this.#o.pollMs);
        this.#timer.unref();
      });
  }

  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    if (!this.#pass) return;
    let bound: NodeJS.Timeout | undefined;
    await Promise.race([
      this.#pass,
      new Promise<void>((resolve) => {
        bound = setTimeout(resolve, this.#o.stopTimeoutMs);
      }),
    ]);
    clearTimeout(bound);
  }

  /** One look: true when the batch was full (look again at once). */
  async #look(): Promise<boolean> {
    const due = await this.#o.webhooks.due(this.#o.now(), this.#o.batch);
    const byGuild = new Map<string, StoredEvent[]>();
    for (const event of due) {
      const list = byGuild.get(event.guildId);
      if (list) list.push(event);
      else byGuild.set(event.guildId, [event]);
    }
    const queues = [...byGuild.values()];
    const workers = Array.from({ length: Math.min(this.#o.concurrency, queues.length) }, async () => {
      for (let queue = queues.shift(); queue; queue = queues.shift()) {
        for (const event of queue) {
          if (!this.#running) return;
          // A server's later events wait for an earlier one that is to be tried again.
          if (!(await this.#announce(event))) break;
        }
      }
    });
    await Promise.all(workers);
    return due.length >= this.#o.batch;
  }

  /** False when the event is left to be tried again (its claim expires). */
  async #announce(event: StoredEvent): Promise<boolean> {
    const { webhooks, logger, owner, leaseMs, now } = this.#o;
    let claim: EventClaim | undefined;
    try {
      claim = await webhooks.claim(event.id, owner, leaseMs, now());
    } catch (err) {
      logger.warn({ err, event: event.id }, 'could not claim a webhook event; trying again at the next look');
      return false;
    }
    // Done meanwhile, or another process holds it.
    if (!claim) return true;
    let outcome: SendOutcome;
    try {
      outcome = await this.#o.handler.handle(event, claim);
    } catch (err) {
      outcome = { kind: 'retry', detail: err instanceof Error ? err.message : String(err) };
    }
    try {
      if (outcome.kind === 'sent') await webhooks.finish(claim, 'done', null, now());
      else if (outcome.kind === 'failed') await webhooks.finish(claim, 'failed', outcome.reason, now());
    } catch (err) {
      logger.warn({ err, event: event.id }, 'could not record a webhook event; its claim will expire');
    }
    const latencyMs = Math.max(0, now() - event.receivedAt);
    if (outcome.kind === 'retry') {
      logger.warn(
        { event: event.id, detail: outcome.detail, retryInMs: leaseMs },
        'a webhook event could not be announced now; it is tried again when its claim expires',
      );
    } else if (outcome.kind === 'failed') {
      logger.warn(
        { event: event.id, reason: outcome.reason },
        'a webhook event could not be announced; recorded',
      );
    } else {
      logger.debug({ event: event.id, latencyMs }, 'webhook event announced');
    }
    this.#o.onDone?.({ type: event.type, outcome, latencyMs });
    return outcome.kind !== 'retry';
  }
}
