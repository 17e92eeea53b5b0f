/**
 * What /bot and /server suggest as the user types their `ref` (autocomplete): the user's own bots
 * (the directory's bots of a developer), what was looked up recently in this place (a server, or
 * the user's DMs), and for /server the server itself. Discord sends an autocomplete interaction
 * for about every keystroke and wants the answer within 3 s; it is answered from memory alone,
 * never by a directory request of its own. The user's bots are asked of the directory at most
 * once per OWN_BOTS_TTL_MS per user, at the directory client's lowest priority (after every /up),
 * without waiting: the keystroke that found them missing is answered without them, the next ones
 * with them.
 *
 * On v3, the directory's search adds what matches the typed text (`search`), the same way: never
 * waited for. A keystroke starts a search for its text (at most one every SEARCH_EVERY_MS for the
 * whole process, at the lowest priority, so that suggestions take at most a fifth of the key's
 * 25 requests per 10 s), and is answered with the results already known: those for its very
 * text, else those of the longest earlier text it extends, narrowed to what still matches. A
 * result that comes after the answer serves the next keystroke.
 *
 * Everything here is bounded: MAX_PLACES places of PER_PLACE look-ups each, MAX_USERS users' bots,
 * MAX_SEARCHES texts' results.
 */
import { Recent } from '../cache/recent.js';
import type { BotReference, SearchHit } from '../directory/index.js';
import type { Logger } from '../log/logger.js';
import { plainLabel } from '../render/text.js';

export type LookupKind = 'bot' | 'server';

/** One choice: what the user sees, and what goes into `ref` when they pick it. */
export interface Suggestion {
  name: string;
  value: string;
}

/** Discord's limits for a choice: 1 to 100 characters each; at most 25 choices. */
export const MAX_CHOICE_LENGTH = 100;
export const MAX_CHOICES = 25;

const PER_PLACE = 10;
const MAX_PLACES = 10_000;
const MAX_USERS = 10_000;
export const OWN_BOTS_TTL_MS = 10 * 60_000;
/** At most one search this often, for the whole process. */
export const SEARCH_EVERY_MS = 2_000;
/** How long a text's search results are used. */
export const SEARCH_TTL_MS = 5 * 60_000;
const MAX_SEARCHES = 5_000;
/** Texts shorter than this, or made of digits only (an ID being typed), are not searched. */
const MIN_SEARCH_LENGTH = 2;

export interface LookupSuggestionsOptions {
  /** The directory's bots of a developer (DirectoryClient.getDeveloperBots at background priority). */
  ownBots(userId: string): Promise<readonly BotReference[]>;
  /** v3: the directory's search (DirectoryClient.search at background priority); absent elsewhere. */
  search?: ((kind: LookupKind, query: string) => Promise<readonly SearchHit[]>) | undefined;
  now(): number;
  logger: Logger;
}

interface OwnBots {
  bots: Suggestion[];
  at: number;
}

/** A choice's text, where Discord renders no markdown: one line, no control characters, cut to 100. */
function choice(name: string, value: string): Suggestion | undefined {
  const shown = plainLabel(name, MAX_CHOICE_LENGTH);
  if (shown === '' || value === '' || value.length > MAX_CHOICE_LENGTH) return undefined;
  return { name: shown, value };
}

export class LookupSuggestions {
  readonly #options: LookupSuggestionsOptions;
  readonly #recent = new Recent<string, Suggestion[]>(MAX_PLACES);
  readonly #ownBots = new Recent<string, OwnBots>(MAX_USERS);
  readonly #asking = new Set<string>();
  readonly #searched = new Recent<string, { hits: Suggestion[]; at: number }>(MAX_SEARCHES);
  readonly #searching = new Set<string>();
  #lastSearchAt = Number.NEGATIVE_INFINITY;

  constructor(options: LookupSuggestionsOptions) {
    this.#options = options;
  }

  /** A card was shown: it comes first among this place's suggestions of that kind. */
  lookedUp(place: string, kind: LookupKind, name: string, value: string): void {
    const entry = choice(name, value);
    if (!entry) return;
    const key = `${kind}:${place}`;
    const list = (this.#recent.get(key) ?? []).filter((s) => s.value !== entry.value);
    this.#recent.set(key, [entry, ...list].slice(0, PER_PLACE));
  }

  /**
   * The choices for what the user has typed so far (`typed`, matched anywhere in the name or the
   * value, case aside): `first` (this server, for /server), the user's bots (for /bot), then this
   * place's recent look-ups; no value twice, at most 25.
   */
  choices(options: {
    kind: LookupKind;
    place: string;
    userId: string;
    typed: string;
    first?: Suggestion | undefined;
  }): Suggestion[] {
    const wanted = options.typed.trim().toLowerCase();
    const own = options.kind === 'bot' ? this.#ownBotsOf(options.userId) : [];
    const first = options.first && choice(options.first.name, options.first.value);
    const all = [
      ...(first ? [first] : []),
      ...own,
      ...(this.#recent.get(`${options.kind}:${options.place}`) ?? []),
      ...this.#searchResults(options.kind, wanted),
    ];
    const seen = new Set<string>();
    const out: Suggestion[] = [];
    for (const s of all) {
      if (seen.has(s.value)) continue;
      if (wanted && !s.name.toLowerCase().includes(wanted) && !s.value.toLowerCase().includes(wanted))
        continue;
      seen.add(s.value);
      out.push(s);
      if (out.length === MAX_CHOICES) break;
    }
    return out;
  }

  /**
   * The search's results known now for `wanted` (its own, or the longest earlier text it extends);
   * starts a search for it (not waited for) when there are none of its own.
   */
  #searchResults(kind: LookupKind, wanted: string): Suggestion[] {
    const { search } = this.#options;
    if (!search || wanted.length < MIN_SEARCH_LENGTH || /^\d+$/.test(wanted)) return [];
    const now = this.#options.now();
    const fresh = (text: string) => {
      const found = this.#searched.get(`${kind}:${text}`);
      return found && now - found.at < SEARCH_TTL_MS ? found : undefined;
    };
    const own = fresh(wanted);
    if (!own) this.#search(kind, wanted, now);
    if (own) return own.hits;
    for (let length = wanted.length - 1; length >= MIN_SEARCH_LENGTH; length -= 1) {
      const earlier = fresh(wanted.slice(0, length));
      if (earlier) return earlier.hits;
    }
    return [];
  }

  #search(kind: LookupKind, text: string, now: number): void {
    const key = `${kind}:${text}`;
    const search = this.#options.search;
    if (!search || this.#searching.has(key) || now - this.#lastSearchAt < SEARCH_EVERY_MS) return;
    this.#lastSearchAt = now;
    this.#searching.add(key);
    search(kind, text)
      .then(
        (hits) => {
          const suggestions = hits
            .map((h) => choice(`${h.name} (${h.id})`, h.id))
            .filter((s): s is Suggestion => s !== undefined);
          this.#searched.set(key, { hits: suggestions, at: this.#options.now() });
        },
        (err: unknown) => {
          // No key, the budget taken by look-ups, the search down: no results for this text.
          this.#options.logger.debug({ err, kind }, 'a search for the suggestions failed');
        },
      )
      .catch((err: unknown) => this.#options.logger.warn({ err }, 'the suggestions could not keep a search'))
      .finally(() => this.#searching.delete(key));
  }

  /** The user's bots as known now; asks the directory (not waited for) when unknown or stale. */
  #ownBotsOf(userId: string): Suggestion[] {
    const known = this.#ownBots.get(userId);
    if (!known || this.#options.now() - known.at >= OWN_BOTS_TTL_MS) this.#ask(userId);
    return known?.bots ?? [];
  }

  #ask(userId: string): void {
    if (this.#asking.has(userId)) return;
    this.#asking.add(userId);
    this.#options
      .ownBots(userId)
      .then(
        (bots) => {
          const suggestions = bots
            .map((b) => choice(b.shortCode ? `${b.shortCode} (${b.id})` : b.id, b.shortCode ?? b.id))
            .filter((s): s is Suggestion => s !== undefined);
          this.#ownBots.set(userId, { bots: suggestions, at: this.#options.now() });
        },
        (err: unknown) => {
          // Not a developer, no token, the directory busy: no bots of theirs, asked again after the TTL.
          this.#options.logger.debug({ err, userId }, "a user's bots for the suggestions could not be read");
          this.#ownBots.set(userId, { bots: this.#ownBots.get(userId)?.bots ?? [], at: this.#options.now() });
        },
      )
      // Nothing above should throw; if it does, it is said, never an unhandled rejection.
      .catch((err: unknown) =>
        this.#options.logger.warn({ err }, "the suggestions could not keep a user's bots"),
      )
      .finally(() => this.#asking.delete(userId));
  }
}

/** Where look-ups are remembered: the server, or outside one, the user's own DMs. */
export function placeOf(interaction: { guildId: string | null; user: { id: string } }): string {
  return interaction.guildId ?? `user:${interaction.user.id}`;
}
