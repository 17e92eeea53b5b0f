/**
 * The directory's v3 notifications, however they come (its WebSocket, or an HTTPS webhook the
 * receiver checked), turned into the events the bot stores and acts on: the same outbox as v2's
 * webhook deliveries (store/webhooks.ts), announced and acted on by the same handler
 * (features/webhooks/handle.ts). So each event is stored before anything is done with it, and
 * done once across reconnects, hosts, replays and `kill -9`.
 *
 * What identifies an event is what the directory sends of it: its type, the resource, the member
 * and when it happened (v3 gives no event id). The same up told over the WebSocket and over a
 * webhook, or told again after a reconnect, is one row (`enqueue` answers 'duplicate').
 *
 * Only what the bot acts on is stored: the checked fields (directory/v3/notify.ts), never the
 * webhook's `webhookSettings` nor its `X-Boticord-Token` (both carry the sender's API key).
 */
import { type NotifyEvent, notifyEventKey, parseNotifyWebhook } from '../../directory/v3/notify.js';
import type { NotificationInbox } from '../../store/notifications.js';
import type { EnqueueOutcome, WebhookRepository } from '../../store/webhooks.js';
import { type DirectoryEvent, type Parsed, TEST_WINDOW_MS } from '../webhooks/events.js';

/** How an event came: the WebSocket (`notify`), or an HTTPS webhook (`webhook`). */
export type NotifyVia = 'notify' | 'webhook';

/** An event to store: the webhook events' row. */
export interface StoredNotification {
  id: string;
  guildId: string;
  type: string;
  payload: string;
  event: DirectoryEvent;
}

const COMMENT_CHANGES = {
  comment_added: 'new',
  comment_edited: 'edit',
  comment_removed: 'delete',
} as const;

/**
 * The event to store for a notification, or why not: a type this bot does not act on (BotiCord
 * "may also send other notifications"), or an event of the bot itself (`affected` is the bot: its
 * own page's ups and reviews have no server to go to).
 */
export function storedNotification(
  event: NotifyEvent,
  via: NotifyVia,
  botId: string | undefined,
): StoredNotification | { ignored: 'unknown' | 'bot' } {
  if (botId !== undefined && event.affected === botId) return { ignored: 'bot' };
  const directoryEvent = directoryEventOf(event, via);
  if (!directoryEvent) return { ignored: 'unknown' };
  return {
    id: `${event.affected}:v3:${notifyEventKey(event)}`,
    guildId: event.affected,
    type: event.type,
    payload: JSON.stringify(directoryEvent),
    event: directoryEvent,
  };
}

/** v3's test button sends a type the docs do not name: `none` in boticordjava's Type.java. */
const V3_TEST_TYPES: ReadonlySet<unknown> = new Set(['none', 'test_webhook_message']);

/**
 * A v3 notification delivered over HTTPS to the webhook receiver (the same events as the
 * WebSocket's): for the server of the URL only. Only the checked fields are kept: never the body's
 * `webhookSettings` nor the `X-Boticord-Token` header, which both carry the sender's API key.
 */
export function parseNotifyDelivery(
  body: unknown,
  guildId: string,
  receivedAt: number,
  botId: string | undefined,
): Parsed {
  const type = (body as { type?: unknown }).type;
  if (V3_TEST_TYPES.has(type)) {
    return {
      kind: 'event',
      event: { kind: 'test' },
      type: 'test_webhook_message',
      id: `${guildId}:test:${Math.floor(receivedAt / TEST_WINDOW_MS)}`,
    };
  }
  const parsed = parseNotifyWebhook(body, receivedAt);
  if (parsed.kind === 'invalid' || parsed.event.affected !== guildId) return { kind: 'invalid' };
  const stored = storedNotification(parsed.event, 'webhook', botId);
  if ('ignored' in stored) return { kind: 'ignored', reason: stored.ignored, type: parsed.event.type };
  return { kind: 'event', event: stored.event, type: stored.type, id: stored.id };
}

function directoryEventOf(event: NotifyEvent, via: NotifyVia): DirectoryEvent | undefined {
  const { type, user, happened, payload } = event;
  if (type === 'up_added') {
    return { kind: 'bump', userId: user, at: happened, bonus: null, upCount: payload.upCount, via, v3: true };
  }
  if (type === 'comment_added' || type === 'comment_edited' || type === 'comment_removed') {
    const change = COMMENT_CHANGES[type];
    return {
      kind: 'comment',
      change,
      userId: user,
      at: happened,
      vote: { old: null, new: null },
      // v3 sends the review as it is now (an edit's old text is not sent).
      text: {
        old: change === 'delete' ? payload.content : null,
        new: change === 'delete' ? null : payload.content,
      },
      reason: null,
      rating: payload.rating,
      v3: true,
    };
  }
  return undefined;
}

/** What the intake did with a notification (the metrics' `outcome`). */
export type IntakeOutcome = EnqueueOutcome | 'ignored';

export interface NotificationIntake {
  /** Stores the event (throws when the store cannot take it); 'stored' wakes the announcer. */
  take(event: NotifyEvent, via: NotifyVia): Promise<IntakeOutcome>;
  /**
   * Stores a batch of the WebSocket's events in one transaction, each up's reminder restarted with
   * it (store/notifications.ts NotificationInbox); throws when the store cannot take them.
   */
  takeAll(events: readonly NotifyEvent[]): Promise<IntakeOutcome[]>;
}

export function notificationIntake(options: {
  webhooks: Pick<WebhookRepository, 'enqueue'>;
  /** The batch intake's store; without it, takeAll stores one event at a time. */
  inbox?: Pick<NotificationInbox, 'storeAll'> | undefined;
  /** The directory's cadence: an up's reminder restarts that long after it unless a cooldown is known. */
  cadenceMs?: number | undefined;
  botId: string | undefined;
  now: () => number;
  /** An event was stored: announce it soon. */
  onStored: (guildId: string) => void;
  /** An up's reminder was restarted: due then (this process's scheduler looks in time). */
  onScheduled?: ((dueAt: number) => void) | undefined;
  onOutcome?: ((type: string, via: NotifyVia, outcome: IntakeOutcome) => void) | undefined;
}): NotificationIntake {
  const take = async (event: NotifyEvent, via: NotifyVia): Promise<IntakeOutcome> => {
    const stored = storedNotification(event, via, options.botId);
    if ('ignored' in stored) {
      options.onOutcome?.(event.type, via, 'ignored');
      return 'ignored';
    }
    const outcome = await options.webhooks.enqueue({
      id: stored.id,
      guildId: stored.guildId,
      type: stored.type,
      payload: stored.payload,
      receivedAt: options.now(),
    });
    options.onOutcome?.(event.type, via, outcome);
    if (outcome === 'stored') options.onStored(stored.guildId);
    return outcome;
  };
  return {
    take,
    async takeAll(events) {
      const { inbox, cadenceMs } = options;
      if (!inbox || cadenceMs === undefined) {
        const outcomes: IntakeOutcome[] = [];
        for (const event of events) outcomes.push(await take(event, 'notify'));
        return outcomes;
      }
      const rows = events.map((event) => storedNotification(event, 'notify', options.botId));
      const kept = rows.filter((row): row is StoredNotification => !('ignored' in row));
      const stored = await inbox.storeAll(
        kept.map((row) => ({
          id: row.id,
          guildId: row.guildId,
          type: row.type,
          event: row.event,
          ...(row.event.kind === 'bump' ? { up: { at: row.event.at, cadenceMs } } : {}),
        })),
        options.now(),
      );
      const outcomes: IntakeOutcome[] = [];
      let next = 0;
      const woken = new Set<string>();
      for (const [i, row] of rows.entries()) {
        const type = events[i]?.type ?? 'unknown';
        if ('ignored' in row) {
          options.onOutcome?.(type, 'notify', 'ignored');
          outcomes.push('ignored');
          continue;
        }
        const result = stored[next++];
        const outcome = result?.outcome ?? 'duplicate';
        options.onOutcome?.(type, 'notify', outcome);
        outcomes.push(outcome);
        if (outcome !== 'stored') continue;
        if (!woken.has(row.guildId)) {
          woken.add(row.guildId);
          options.onStored(row.guildId);
        }
        if (result?.restarted) options.onScheduled?.(result.restarted.dueAt);
      }
      return outcomes;
    },
  };
}
