/**
 * The directory's webhooks, as the directory sends them (docs/webhooks.md says what the bot expects
 * of them): a server's page may set a URL and shows a key; each event is a JSON POST to that URL
 * with the key in `X-Hook-Key`. A successful up through a service bot sends `new_server_bump`, as
 * the directory does; tests and the sandbox send comments and the test event by hand.
 */
import { request } from 'undici';

export interface WebhookTarget {
  url: string;
  key: string;
}

export interface Delivery {
  serverId: string;
  type: string;
  /** The receiver's answer; 0 when it could not be reached. */
  status: number;
  at: number;
}

export interface CommentWebhook {
  user: string;
  at?: number;
  vote?: { old: -1 | 1 | null; new: -1 | 1 | null };
  old?: string | null;
  new?: string | null;
  reason?: 'self' | 'moderation';
}

export class WebhookSender {
  readonly #targets = new Map<string, WebhookTarget>();
  readonly #now: () => number;
  readonly deliveries: Delivery[] = [];
  /** Deliveries still on their way (an up's bump is sent without waiting). */
  readonly #pending = new Set<Promise<number>>();

  constructor(now: () => number) {
    this.#now = now;
  }

  /** What the server's edit page sets: its webhook URL and key (null removes them). */
  set(serverId: string, target: WebhookTarget | null): void {
    if (target) this.#targets.set(serverId, target);
    else this.#targets.delete(serverId);
  }

  target(serverId: string): WebhookTarget | undefined {
    return this.#targets.get(serverId);
  }

  /** Posts a body as the directory would; the receiver's status (0: not reached). */
  send(serverId: string, body: unknown, key?: string): Promise<number> {
    const target = this.#targets.get(serverId);
    if (!target) return Promise.resolve(0);
    const type = typeof body === 'object' && body !== null ? String((body as { type?: unknown }).type) : '?';
    const sending = request(target.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hook-key': key ?? target.key },
      body: JSON.stringify(body),
    })
      .then(async (res) => {
        await res.body.dump();
        return res.statusCode;
      })
      .catch(() => 0)
      .then((status) => {
        this.deliveries.push({ serverId, type, status, at: this.#now() });
        return status;
      });
    this.#pending.add(sending);
    void sending.finally(() => this.#pending.delete(sending));
    return sending;
  }

  bump(serverId: string, user: string, at = this.#now()): Promise<number> {
    return this.send(serverId, {
      type: 'new_server_bump',
      data: { user, at },
      bonus: { status: false, expiresAt: at },
    });
  }

  comment(serverId: string, change: 'new' | 'edit' | 'delete', c: CommentWebhook): Promise<number> {
    const vote = c.vote ?? { old: null, new: change === 'new' ? 1 : null };
    return this.send(serverId, {
      type: `${change}_server_comment`,
      data: {
        user: c.user,
        comment: { vote, old: c.old ?? null, new: c.new ?? null },
        ...(change === 'delete' ? { reason: c.reason ?? 'self' } : {}),
        at: c.at ?? this.#now(),
      },
    });
  }

  test(serverId: string): Promise<number> {
    return this.send(serverId, { type: 'test_webhook_message', data: { hello: true, world: true } });
  }

  /** Waits for the deliveries on their way. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }

  reset(): void {
    this.#targets.clear();
    this.deliveries.length = 0;
  }
}
