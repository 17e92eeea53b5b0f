interface Waiter<T> {
  pred: (value: T) => boolean;
  resolve: (value: T) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Promises that resolve on the first value matching a predicate, with timeouts. */
export class WaitList<T> {
  readonly #waiters = new Set<Waiter<T>>();
  #closed = false;

  /** Resolves with the first of `existing` matching `pred`, else the next notified match. */
  wait(pred: (value: T) => boolean, timeoutMs: number, what: string, existing: Iterable<T> = []): Promise<T> {
    for (const value of existing) if (pred(value)) return Promise.resolve(value);
    if (this.#closed) return Promise.reject(new Error(`Discord stand-in closed while waiting for ${what}`));
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter<T> = {
        pred,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`));
        }, timeoutMs),
      };
      this.#waiters.add(waiter);
    });
  }

  notify(value: T): void {
    for (const waiter of [...this.#waiters]) {
      let matched = false;
      try {
        matched = waiter.pred(value);
      } catch (error) {
        this.#settle(waiter);
        waiter.reject(error instanceof Error ? error : new Error(String(error)));
        continue;
      }
      if (matched) {
        this.#settle(waiter);
        waiter.resolve(value);
      }
    }
  }

  close(): void {
    this.#closed = true;
    for (const waiter of [...this.#waiters]) {
      this.#settle(waiter);
      waiter.reject(new Error('Discord stand-in closed'));
    }
  }

  #settle(waiter: Waiter<T>): void {
    clearTimeout(waiter.timer);
    this.#waiters.delete(waiter);
  }
}
