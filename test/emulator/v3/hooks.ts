/**
 * The directory's v3 HTTPS webhooks (docs/directory-v3-sources.md §4 "HTTPS webhooks"): a bot's or
 * server's settings may name a URL; each notification about that resource is POSTed there as JSON
 * exactly once ("An attempt to send any specific notification from our side is made exactly 1
 * time": no retry, whatever the answer), with `X-Boticord-Token` (the owner's API key) and
 * `X-Boticord-Affected` (the resource id) plus the custom headers of the settings. There is no
 * signature. The v2 sender (../webhooks.ts) is the model.
 */
import { request } from 'undici';

export interface V3HookTarget {
  url: string;
  /** Custom headers of the settings: sent as headers and echoed in `webhookSettings.headers`. */
  headers?: Record<string, string>;
}

export interface V3HookDelivery {
  affected: string;
  type: string;
  /** The receiver's answer; 0 when it could not be reached. */
  status: number;
  at: number;
}

/** One notification as the webhook body carries it (the WebSocket's `affected` is `id` here). */
export interface V3HookEvent {
  type: string;
  payload: unknown;
  affected: string;
  user: string;
  happened: number;
}

export class V3HookSender {
  readonly #targets = new Map<string, V3HookTarget>();
  readonly #now: () => number;
  readonly deliveries: V3HookDelivery[] = [];
  readonly #pending = new Set<Promise<number>>();

  constructor(now: () => number) {
    this.#now = now;
  }

  set(resourceId: string, target: V3HookTarget | null): void {
    if (target) this.#targets.set(resourceId, { url: target.url, headers: { ...(target.headers ?? {}) } });
    else this.#targets.delete(resourceId);
  }

  target(resourceId: string): V3HookTarget | undefined {
    return this.#targets.get(resourceId);
  }

  /**
   * POSTs the event to its resource's URL, if one is set: once, never retried. `token` is the
   * owner's API key. Resolves to the receiver's status (0: not reached, or no URL set).
   */
  send(event: V3HookEvent, token: string): Promise<number> {
    const target = this.#targets.get(event.affected);
    if (!target) return Promise.resolve(0);
    const custom = target.headers ?? {};
    const body = {
      type: event.type,
      payload: event.payload,
      id: event.affected,
      user: event.user,
      happened: event.happened,
      webhookSettings: { enabled: true, headers: custom, url: target.url, token },
    };
    const sending = request(target.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-boticord-token': token,
        'x-boticord-affected': event.affected,
        ...custom,
      },
      body: JSON.stringify(body),
    })
      .then(async (res) => {
        await res.body.dump();
        return res.statusCode;
      })
      .catch(() => 0)
      .then((status) => {
        this.deliveries.push({ affected: event.affected, type: event.type, status, at: this.#now() });
        return status;
      });
    this.#pending.add(sending);
    void sending.finally(() => this.#pending.delete(sending));
    return sending;
  }

  /** Waits for the posts on their way. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  reset(): void {
    this.#targets.clear();
    this.deliveries.length = 0;
  }
}
