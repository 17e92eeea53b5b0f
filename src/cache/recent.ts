/**
 * A Map kept to `max` entries, the least recently used going first: the prepared statements the
 * SQLite store keeps, what the bot keeps of guilds for an up's statistics, and the directory's
 * look-up cache.
 */
export class Recent<K, V> {
  readonly #map = new Map<K, V>();
  readonly #max: number;

  constructor(max: number) {
    this.#max = max;
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value === undefined) return undefined;
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  /** Kept as the most recently used; past `max`, the least recently used goes. */
  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value as K);
  }

  /** Gone; true when it was there. */
  delete(key: K): boolean {
    return this.#map.delete(key);
  }

  /** Every entry, least recently used first (reading them changes no order). */
  entries(): IterableIterator<[K, V]> {
    return this.#map.entries();
  }

  get size(): number {
    return this.#map.size;
  }
}
