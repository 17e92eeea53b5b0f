// Posts held in flight: a test holds a channel, the bot's POST /channels/{id}/messages stays
// unanswered, and the test decides what Discord did with it (created the message, or lost it), even
// after the bot's process is gone: the moment a kill -9 lands while a message is being sent.

import type { ServerResponse } from 'node:http';
import type { HeldPost, RecordedRestRequest } from './types.js';
import { WaitList } from './waiters.js';

export type HoldDecision = 'complete' | 'drop';

/** What rest.ts holds on to for a held request. */
export interface HeldEntry {
  /** Resolves when the test settles the post. */
  readonly decision: Promise<HoldDecision>;
  /** Called by rest.ts with the request as recorded, once it is answered (or dropped). */
  finish(record: RecordedRestRequest): void;
}

class HeldState implements HeldPost, HeldEntry {
  clientGone = false;
  settled = false;
  readonly decision: Promise<HoldDecision>;
  readonly #decide: (how: HoldDecision) => void;
  readonly #done: Promise<RecordedRestRequest>;
  readonly #finish: (record: RecordedRestRequest) => void;

  constructor(
    readonly channelId: string,
    readonly body: unknown,
    readonly at: number,
    private readonly onSettle: (state: HeldState) => void,
  ) {
    let decide!: (how: HoldDecision) => void;
    this.decision = new Promise<HoldDecision>((resolve) => {
      decide = resolve;
    });
    this.#decide = decide;
    let finish!: (record: RecordedRestRequest) => void;
    this.#done = new Promise<RecordedRestRequest>((resolve) => {
      finish = resolve;
    });
    this.#finish = finish;
  }

  complete(): Promise<RecordedRestRequest> {
    return this.#settle('complete');
  }

  drop(): Promise<RecordedRestRequest> {
    return this.#settle('drop');
  }

  finish(record: RecordedRestRequest): void {
    this.#finish(record);
  }

  #settle(how: HoldDecision): Promise<RecordedRestRequest> {
    if (!this.settled) {
      this.settled = true;
      this.onSettle(this);
      this.#decide(how);
    }
    return this.#done;
  }
}

export class PostHolds {
  readonly #channels = new Set<string>();
  readonly #pending: HeldState[] = [];
  readonly #waiters = new WaitList<HeldPost>();

  hold(channelId: string): void {
    this.#channels.add(channelId);
  }

  /** Whether any channel is held (the cheap test every request makes). */
  holding(): boolean {
    return this.#channels.size > 0;
  }

  isHeld(channelId: string): boolean {
    return this.#channels.has(channelId);
  }

  /** Holds a request that has arrived; `res` tells when its client goes away. */
  enter(channelId: string, body: unknown, at: number, res: ServerResponse): HeldEntry {
    const state = new HeldState(channelId, body, at, (s) => {
      const i = this.#pending.indexOf(s);
      if (i >= 0) this.#pending.splice(i, 1);
    });
    res.once('close', () => {
      if (!res.writableFinished) state.clientGone = true;
    });
    this.#pending.push(state);
    this.#waiters.notify(state);
    return state;
  }

  async release(channelId: string, how: HoldDecision): Promise<void> {
    this.#channels.delete(channelId);
    const settling = this.list(channelId).map((held) => (how === 'drop' ? held.drop() : held.complete()));
    await Promise.all(settling);
  }

  list(channelId?: string): HeldPost[] {
    return this.#pending.filter((held) => channelId === undefined || held.channelId === channelId);
  }

  waitFor(channelId: string, timeoutMs: number): Promise<HeldPost> {
    return this.#waiters.wait(
      (held) => held.channelId === channelId && !held.settled,
      timeoutMs,
      `a held post to channel ${channelId}`,
      this.list(channelId),
    );
  }

  /** The stand-in closes: every held post is dropped (their connections are being closed anyway). */
  close(): void {
    this.#channels.clear();
    for (const held of [...this.#pending]) void held.drop();
    this.#waiters.close();
  }
}
