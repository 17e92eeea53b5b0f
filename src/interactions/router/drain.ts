/**
 * The interactions in flight, and the shutdown: once closed, new interactions are refused (told
 * the bot is restarting) and `drain` waits for those in flight to end.
 */
import { doneWithin } from '../../time/bounded.js';

export class InFlight {
  #count = 0;
  #closed = false;
  readonly #drained: Array<() => void> = [];

  get count(): number {
    return this.#count;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Stop taking new interactions. */
  close(): void {
    this.#closed = true;
  }

  begin(): void {
    this.#count++;
  }

  end(): void {
    this.#count--;
    if (this.#count === 0) for (const resolve of this.#drained.splice(0)) resolve();
  }

  /** Resolves when nothing is in flight, or after `timeoutMs`; true when drained. */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.#count === 0) return Promise.resolve(true);
    return doneWithin(new Promise<void>((resolve) => this.#drained.push(resolve)), timeoutMs);
  }
}
