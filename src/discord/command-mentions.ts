/**
 * Clickable command mentions (`</up:id>`) for the bot's own messages: a reminder's "{command}",
 * the default reminder text, the /settings confirmation. The ids are the application's global
 * commands (deploy.ts registers them), fetched once and kept; looked up again at most once a
 * minute while a name is missing (the commands were not deployed yet). Without an id the mention
 * is plain `/up`, still readable.
 */
import { type APIApplicationCommand, type REST, Routes } from 'discord.js';
import type { Logger } from '../log/logger.js';

const RETRY_MS = 60_000;

export class CommandMentions {
  readonly #rest: REST;
  readonly #applicationId: () => string | null;
  readonly #logger: Logger;
  readonly #now: () => number;
  #ids = new Map<string, string>();
  #fetchedAt = Number.NEGATIVE_INFINITY;
  #pending: Promise<void> | undefined;

  constructor(options: {
    rest: REST;
    applicationId: () => string | null;
    logger: Logger;
    now?: () => number;
  }) {
    this.#rest = options.rest;
    this.#applicationId = options.applicationId;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
  }

  /** `</name:id>`, or `/name` when the command's id is not known. Never throws. */
  async mention(name: string): Promise<string> {
    const id = await this.id(name);
    return id ? `</${name}:${id}>` : `/${name}`;
  }

  async id(name: string): Promise<string | null> {
    if (!this.#ids.has(name) && this.#now() - this.#fetchedAt >= RETRY_MS) await this.#refresh();
    return this.#ids.get(name) ?? null;
  }

  /** An id seen in an interaction (the command it came from): no request needed. */
  learn(name: string, id: string): void {
    if (/^\d{17,20}$/.test(id)) this.#ids.set(name, id);
  }

  #refresh(): Promise<void> {
    this.#pending ??= this.#fetch().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #fetch(): Promise<void> {
    const applicationId = this.#applicationId();
    if (!applicationId) return;
    this.#fetchedAt = this.#now();
    try {
      const commands = (await this.#rest.get(
        Routes.applicationCommands(applicationId),
      )) as APIApplicationCommand[];
      const ids = new Map<string, string>();
      for (const command of Array.isArray(commands) ? commands : []) {
        if (typeof command?.name === 'string' && /^\d{17,20}$/.test(String(command.id))) {
          ids.set(command.name, String(command.id));
        }
      }
      this.#ids = new Map([...this.#ids, ...ids]);
    } catch (err) {
      this.#logger.warn({ err }, 'could not fetch the commands; mentions are plain until the next try');
    }
  }
}
