/**
 * Many deadlines on one timer: the transport's attempts each need one, and a timer of their own
 * (setTimeout and clearTimeout on every request) cost a measurable share of the client's CPU
 * under load (bench scenario 1). Here the nearest deadline arms the one timer; an attempt that
 * ends only leaves the set, and the timer, when it fires, expires what is due and arms itself for
 * the next. It is unref'd: a deadline never keeps the process alive by itself. Its clock is
 * performance.now(): an attempt lasts real time, whatever clock the client was given.
 */
export interface DeadlineEntry {
  /** performance.now() when it expires. */
  readonly at: number;
}

interface Entry extends DeadlineEntry {
  expire: () => void;
}

export class DeadlineTimer {
  readonly #entries = new Set<Entry>();
  #timer: NodeJS.Timeout | undefined;
  #armedAt = Number.POSITIVE_INFINITY;

  /** Calls `expire` once `ms` have passed, unless the entry was removed first. */
  add(ms: number, expire: () => void): DeadlineEntry {
    const at = performance.now() + ms;
    const entry: Entry = { at, expire };
    this.#entries.add(entry);
    if (at < this.#armedAt) this.#arm(at);
    return entry;
  }

  remove(entry: DeadlineEntry): void {
    this.#entries.delete(entry as Entry);
  }

  /** Drops every deadline without calling it, and the timer. */
  clear(): void {
    this.#entries.clear();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#armedAt = at;
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, at - performance.now()));
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = undefined;
    this.#armedAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    const due: Entry[] = [];
    for (const entry of this.#entries) {
      if (entry.at <= now) due.push(entry);
      else if (entry.at < next) next = entry.at;
    }
    for (const entry of due) this.#entries.delete(entry);
    if (next !== Number.POSITIVE_INFINITY) this.#arm(next);
    for (const entry of due) entry.expire();
  }
}
