/**
 * The look-ups' cache: a public bot in thousands of servers answers /bot, /server and /profile
 * from memory, so that they do not queue behind the directory's limit (v3: 25 requests per 10 s
 * for the whole key, that is 2.5 a second for every host together).
 *
 * - **Fresh** for `ttlMs`: answered from memory.
 * - **Stale** after that, for `staleMs` more: still answered from memory at once, and refreshed
 *   behind the answer at the lowest priority (one refresh per entry at a time).
 * - **Gone** after that, or when the directory says the record changed (`drop`, from its
 *   notifications): the next look-up waits for the directory.
 * - A record the directory does not have is remembered as such for `missingTtlMs` (a minute),
 *   so that a mistyped reference repeated does not spend the budget each time.
 * - Bounded: `maxEntries` records at most, the least recently used going first; each record's
 *   size is bounded by the client's answer limits. A record past its time is let go as the next
 *   ones are stored (from the least recently used on, up to the first still of use), not kept
 *   until 5,000 others push it out: the misses above all, one per mistyped reference and per
 *   member whose profile the directory does not have, each holding its error (the soak, bench
 *   scenario 17, saw them among the heap's growth).
 *
 * Concurrent look-ups of one reference share one request (single flight). Written here rather
 * than taken from a package (lru-cache has stale-while-revalidate): the refresh must run through
 * the client's own priorities and deadlines, the entries must be dropped by the id a notification
 * names whatever reference found them, and the missing records kept apart; that is this file.
 */
import { Recent } from '../cache/recent.js';
import { NotFoundError } from './errors.js';
import type { Priority } from './schedule.js';

export type LookupKind = 'bot' | 'server' | 'profile' | 'developerBots';

export interface LookupCacheOptions {
  /** How long a record is fresh, in ms. Default 5 minutes. */
  ttlMs?: number;
  /** How long after that a stale record is still served while it is refreshed. Default 1 hour. */
  staleMs?: number;
  /** How long "no such record" is remembered. Default 60 s (never more than ttlMs). */
  missingTtlMs?: number;
  /** Records kept at most (0 turns the cache off). Default 5,000. */
  maxEntries?: number;
}

export const LOOKUP_CACHE_DEFAULTS = {
  ttlMs: 5 * 60_000,
  staleMs: 60 * 60_000,
  missingTtlMs: 60_000,
  maxEntries: 5_000,
} as const;

interface Entry {
  /** The record, or the NotFoundError the directory answered. */
  value: unknown;
  missing: boolean;
  at: number;
  /** The record's id, whatever reference found it: what `drop` matches. */
  id: string | null;
  refreshing: boolean;
}

/** How a look-up was answered, for metrics. */
export type CacheOutcome = 'fresh' | 'stale' | 'miss' | 'missing';

export interface CacheStats {
  entries: number;
  fresh: number;
  stale: number;
  misses: number;
  /** Look-ups answered by a request another look-up had started (single flight). */
  shared: number;
  refreshes: number;
  refreshFailures: number;
}

export class LookupCache {
  readonly #ttlMs: number;
  readonly #staleMs: number;
  readonly #missingTtlMs: number;
  readonly #maxEntries: number;
  readonly #entries: Recent<string, Entry>;
  readonly #inFlight = new Map<string, Promise<unknown>>();
  readonly #now: () => number;
  readonly #onRefreshError: ((err: unknown, key: string) => void) | undefined;
  /** Bumped by every drop: a request that began before one does not store what it got. */
  #generation = 0;
  readonly #counts = { fresh: 0, stale: 0, misses: 0, shared: 0, refreshes: 0, refreshFailures: 0 };

  constructor(
    options: LookupCacheOptions & {
      now?: () => number;
      onRefreshError?: (err: unknown, key: string) => void;
    } = {},
  ) {
    this.#ttlMs = options.ttlMs ?? LOOKUP_CACHE_DEFAULTS.ttlMs;
    this.#staleMs = options.staleMs ?? LOOKUP_CACHE_DEFAULTS.staleMs;
    this.#missingTtlMs = Math.min(options.missingTtlMs ?? LOOKUP_CACHE_DEFAULTS.missingTtlMs, this.#ttlMs);
    this.#maxEntries = options.maxEntries ?? LOOKUP_CACHE_DEFAULTS.maxEntries;
    this.#entries = new Recent(Math.max(1, this.#maxEntries));
    this.#now = options.now ?? Date.now;
    this.#onRefreshError = options.onRefreshError;
  }

  get enabled(): boolean {
    return this.#maxEntries > 0;
  }

  /**
   * The record for `kind` and `ref`: from memory when it is fresh or stale (a stale one is
   * refreshed behind the answer by `load('background')`), else from `load(priority)`. A
   * NotFoundError is remembered for `missingTtlMs` and thrown again meanwhile.
   */
  async get<T>(
    kind: LookupKind,
    ref: string,
    priority: Priority,
    load: (priority: Priority) => Promise<T>,
    idOf: (value: T) => string | null,
  ): Promise<T> {
    if (!this.enabled) return load(priority);
    const key = keyOf(kind, ref);
    const now = this.#now();
    const entry = this.#entries.get(key);
    if (entry) {
      const age = now - entry.at;
      if (entry.missing) {
        if (age < this.#missingTtlMs) {
          this.#counts.fresh += 1;
          throw entry.value;
        }
      } else if (age < this.#ttlMs) {
        this.#counts.fresh += 1;
        return entry.value as T;
      } else if (age < this.#ttlMs + this.#staleMs) {
        this.#counts.stale += 1;
        this.#refresh(key, entry, load, idOf);
        return entry.value as T;
      }
    }
    const pending = this.#inFlight.get(key);
    if (pending) {
      this.#counts.shared += 1;
      return pending as Promise<T>;
    }
    this.#counts.misses += 1;
    return this.#fetch(key, () => load(priority), idOf);
  }

  /** Forgets every record of `kind` whose id is `id` (the directory said it changed). */
  drop(kind: LookupKind, id: string): number {
    this.#generation += 1;
    const prefix = `${kind}:`;
    const gone: string[] = [];
    for (const [key, entry] of this.#entries.entries()) {
      if (key.startsWith(prefix) && (entry.id === id || key === keyOf(kind, id))) gone.push(key);
    }
    for (const key of gone) this.#entries.delete(key);
    return gone.length;
  }

  stats(): CacheStats {
    return { entries: this.#entries.size, ...this.#counts };
  }

  /** Lets go of the least recently used records past their time, up to the first still of use. */
  #sweep(now: number): void {
    const gone: string[] = [];
    for (const [key, entry] of this.#entries.entries()) {
      const age = now - entry.at;
      const over = entry.missing ? age >= this.#missingTtlMs : age >= this.#ttlMs + this.#staleMs;
      if (!over || entry.refreshing) break;
      gone.push(key);
    }
    for (const key of gone) this.#entries.delete(key);
  }

  #fetch<T>(key: string, load: () => Promise<T>, idOf: (value: T) => string | null): Promise<T> {
    const generation = this.#generation;
    const request = load().then(
      (value) => {
        if (generation === this.#generation) {
          this.#sweep(this.#now());
          this.#entries.set(key, {
            value,
            missing: false,
            at: this.#now(),
            id: idOf(value),
            refreshing: false,
          });
        }
        return value;
      },
      (err: unknown) => {
        if (err instanceof NotFoundError && generation === this.#generation) {
          this.#sweep(this.#now());
          this.#entries.set(key, { value: err, missing: true, at: this.#now(), id: null, refreshing: false });
        }
        throw err;
      },
    );
    this.#inFlight.set(key, request);
    const clear = (): void => {
      if (this.#inFlight.get(key) === request) this.#inFlight.delete(key);
    };
    request.then(clear, clear);
    return request;
  }

  #refresh<T>(
    key: string,
    entry: Entry,
    load: (priority: Priority) => Promise<T>,
    idOf: (value: T) => string | null,
  ): void {
    if (entry.refreshing || this.#inFlight.has(key)) return;
    entry.refreshing = true;
    this.#counts.refreshes += 1;
    this.#fetch(key, () => load('background'), idOf).then(
      () => undefined,
      (err: unknown) => {
        entry.refreshing = false;
        if (err instanceof NotFoundError) return;
        // The stale record stays, served until its time is up; the next look-up tries again.
        this.#counts.refreshFailures += 1;
        this.#onRefreshError?.(err, key);
      },
    );
  }
}

function keyOf(kind: LookupKind, ref: string): string {
  return `${kind}:${ref.toLowerCase()}`;
}
