/**
 * The directory's search service (v3): Meilisearch behind the API, with a key of its own that
 * `GET /v3/search-key` hands out (docs-v3 `docs/api/search.mdx`). Indexes `bots`, `servers` and
 * `comments`; the answer is Meilisearch's JSON.
 *
 * Where it is: the docs give no address. boticordpy has searched at `https://api.boticord.top/v3/search/`
 * since 2023, and boticordjava moved there from `https://api.boticord.top/search/` in its 6.1.0
 * ("Fix search", 2026-02); botikotlin's `/search` constant is used nowhere. So the default is
 * the API's own `/v3/search`, and DIRECTORY_SEARCH_URL overrides it (docs/directory-v3-sources.md §3).
 *
 * The key: fetched once and kept (no source says it expires), fetched again after an hour, and at
 * once when the search answers 401 or 403 (boticordpy does the same on a failure); one fetch at a
 * time. Search requests go through the client's limiter like every other request: they reach the
 * same host, and nothing says they are not counted.
 */
import type { z } from 'zod';
import type { Context } from '../answers.js';
import { isDirectoryError } from '../errors.js';
import type { Priority } from '../schedule.js';
import type { Transport } from '../transport.js';
import { parseSearchAnswer } from './answers.js';

export type SearchIndex = 'bots' | 'servers' | 'comments';

/** The Meilisearch parameters we send: a query, a filter, a sort, a page. */
export interface SearchBody {
  q: string;
  limit: number;
  filter?: string[];
  sort?: string[];
}

export interface SearchRequest {
  priority: Priority;
  deadline: number | undefined;
  signal: AbortSignal | undefined;
}

/** How long a search key is kept before it is fetched again. */
export const SEARCH_KEY_TTL_MS = 60 * 60_000;

export interface SearchServiceOptions {
  transport: Transport;
  /** The search key from the API (GET /v3/search-key), at the given priority. */
  fetchKey: (request: SearchRequest) => Promise<string>;
  now: () => number;
  /** Called after every search request, for the client's request events. */
  onAnswer: (status: number | string, started: number, attempts: number) => void;
  mapError: (err: unknown, context: Context, signal: AbortSignal | undefined) => Error;
}

export class SearchService {
  readonly #options: SearchServiceOptions;
  #key: { value: string; at: number } | undefined;
  #fetching: Promise<string> | undefined;

  constructor(options: SearchServiceOptions) {
    this.#options = options;
  }

  /** Hits of `index` for `body`, checked by `schema`; the key is renewed once if refused. */
  async search<S extends z.ZodType>(
    index: SearchIndex,
    body: SearchBody,
    schema: S,
    request: SearchRequest,
  ): Promise<z.output<S>> {
    const context = { method: 'search', route: 'POST /search/indexes/{index}/search' };
    for (let attempt = 1; ; attempt += 1) {
      const key = await this.#currentKey(request, attempt > 1);
      try {
        return await this.#ask(index, body, schema, request, key, context);
      } catch (err) {
        const refused = isDirectoryError(err) && (err.code === 'Unauthorized' || err.code === 'Forbidden');
        if (!refused || attempt > 1) throw err;
        // The key was revoked or rotated: one more try with a new one.
        if (this.#key?.value === key) this.#key = undefined;
      }
    }
  }

  /** Forgets the key (tests, or a client that closes). */
  reset(): void {
    this.#key = undefined;
  }

  async #ask<S extends z.ZodType>(
    index: SearchIndex,
    body: SearchBody,
    schema: S,
    request: SearchRequest,
    key: string,
    context: Context,
  ): Promise<z.output<S>> {
    const { transport, now, onAnswer, mapError } = this.#options;
    const started = now();
    let response: Awaited<ReturnType<Transport['request']>>;
    try {
      response = await transport.request({
        method: 'POST',
        path: `/indexes/${index}/search`,
        authorization: `Bearer ${key}`,
        body: JSON.stringify(body),
        priority: request.priority,
        deadline: request.deadline,
        signal: request.signal,
        methodName: 'search',
      });
    } catch (err) {
      const mapped = mapError(err, context, request.signal);
      onAnswer('code' in mapped && typeof mapped.code === 'string' ? mapped.code : 'error', started, 1);
      throw mapped;
    }
    onAnswer(response.status, started, response.attempts);
    return parseSearchAnswer(response, context, schema, key);
  }

  #currentKey(request: SearchRequest, renew: boolean): Promise<string> {
    const known = this.#key;
    if (!renew && known && this.#options.now() - known.at < SEARCH_KEY_TTL_MS)
      return Promise.resolve(known.value);
    if (this.#fetching) return this.#fetching;
    const fetching = this.#options.fetchKey(request).then(
      (value) => {
        this.#key = { value, at: this.#options.now() };
        return value;
      },
      (err: unknown) => {
        throw err;
      },
    );
    this.#fetching = fetching;
    const clear = (): void => {
      if (this.#fetching === fetching) this.#fetching = undefined;
    };
    fetching.then(clear, clear);
    return fetching;
  }
}
