/**
 * What each stored webhook event does (the announcer claims it, this does it):
 *
 * - a comment (new, edited, deleted): an embed in the server's webhook channel (render.ts), with
 *   the claim's nonce and `enforce_nonce`, so a copy posted again after a crash is dropped;
 * - `test_webhook_message`: "webhook connected" there;
 * - `new_server_bump` (an up given on the site or through another bot): recorded in the history
 *   (source `webhook`; the same member's /up through this bot within SAME_UP_MS is that up, told
 *   again), and the server's reminder moved to the time the cooldown of the directory's last
 *   answer implies, when one is known (store/reminders.ts, moveForUp). Nothing is posted: the
 *   reminder says when the server can be raised again.
 *
 * A webhook turned off since the event came: nothing posted. The channel deleted, the bot's
 * access or a permission there lost: given up and recorded for /settings show.
 */
import type { REST } from 'discord.js';
import { failedPost, type GuildFactsLookup } from '../../discord/guild-posts.js';
import { type PostFailure, postMessage } from '../../discord/messages.js';
import { translator } from '../../i18n/index.js';
import { publicLocale } from '../../i18n/public-language.js';
import type { Logger } from '../../log/logger.js';
import type { HistoryRepository } from '../../store/history.js';
import { SAME_UP_MS } from '../../store/history.js';
import type { ReminderRepository } from '../../store/reminders.js';
import type { SettingsRepository } from '../../store/settings.js';
import type { EventClaim, StoredEvent, WebhookRepository } from '../../store/webhooks.js';
import type { SendOutcome } from '../../tasks/outbox.js';
import type { EventHandler } from './announcer.js';
import { type DirectoryEvent, storedEvent } from './events.js';
import { renderEvent } from './render.js';

export interface HandlerOptions {
  rest: REST;
  webhooks: Pick<WebhookRepository, 'get' | 'setProblem'>;
  settings: Pick<SettingsRepository, 'get'>;
  history: Pick<HistoryRepository, 'record'>;
  reminders: Pick<ReminderRepository, 'moveForUp' | 'getGuild'>;
  /** The server's reminder now falls due at `dueAt`: this process's scheduler looks in time. */
  wakeReminders: (dueAt: number) => void;
  /** An up given on the site follows the server's posted reminder through too (never throws). */
  followUp?: (guildId: string, up: { userId: string; at: number }) => Promise<unknown>;
  /** An up was recorded: what follows from it is told (the live leaderboard, reward roles). Never throws. */
  upRecorded?: (guildId: string, userId: string, at: number) => Promise<void>;
  guild: GuildFactsLookup;
  logger: Logger;
  now?: () => number;
}

export class DirectoryEventHandler implements EventHandler {
  readonly #o: HandlerOptions;
  readonly #now: () => number;

  constructor(options: HandlerOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  async handle(stored: StoredEvent, claim: EventClaim): Promise<SendOutcome> {
    const event = storedEvent(stored.payload);
    if (!event) return { kind: 'failed', reason: 'unreadable' };
    if (event.kind === 'bump') return this.#bump(stored, event);
    return this.#announce(stored, event, claim);
  }

  async #bump(stored: StoredEvent, event: Extract<DirectoryEvent, { kind: 'bump' }>): Promise<SendOutcome> {
    const { guildId } = stored;
    // When the up became possible (its reaction time, the server's streak), before it moves.
    const possibleAt = (await this.#o.reminders.getGuild(guildId))?.nextUpAt ?? null;
    const recorded = await this.#o.history.record({
      id: `hook:${stored.id}`,
      guildId,
      userId: event.userId,
      at: event.at,
      upCount: null,
      source: 'webhook',
      possibleAt: possibleAt !== null && possibleAt <= event.at ? possibleAt : null,
    });
    await this.#o.followUp?.(guildId, { userId: event.userId, at: event.at });
    if (recorded) await this.#o.upRecorded?.(guildId, event.userId, event.at);
    const dueAt = await this.#o.reminders.moveForUp(guildId, event.at, SAME_UP_MS, this.#now());
    if (dueAt !== undefined) this.#o.wakeReminders(dueAt);
    this.#o.logger.info(
      { guildId, recorded, reminderMovedTo: dueAt ?? null },
      "an up given on the directory's side is recorded",
    );
    return { kind: 'sent' };
  }

  async #announce(stored: StoredEvent, event: DirectoryEvent, claim: EventClaim): Promise<SendOutcome> {
    const { guildId } = stored;
    const setup = await this.#o.webhooks.get(guildId);
    if (!setup) return { kind: 'failed', reason: 'webhook-off' };
    const [settings, facts] = await Promise.all([this.#o.settings.get(guildId), this.#o.guild(guildId)]);
    const t = translator(publicLocale(settings?.publicLanguage ?? 'auto', facts?.preferredLocale));
    const layout = renderEvent(event, t);
    if (!layout) return { kind: 'sent' };
    const posted = await postMessage(this.#o.rest, setup.channelId, {
      layout,
      allowedMentions: { parse: [] },
      nonce: claim.nonce,
    });
    if (posted.ok) {
      if (setup.problem) await this.#record(guildId, null);
      return { kind: 'sent' };
    }
    return this.#failed(guildId, posted.failure);
  }

  async #failed(guildId: string, failure: PostFailure): Promise<SendOutcome> {
    const { outcome, problem } = failedPost(failure);
    if (problem) await this.#record(guildId, problem);
    return outcome;
  }

  async #record(
    guildId: string,
    problem: Parameters<HandlerOptions['webhooks']['setProblem']>[1],
  ): Promise<void> {
    await this.#o.webhooks.setProblem(guildId, problem).catch((err: unknown) => {
      this.#o.logger.warn({ err, guildId }, 'could not record a webhook channel problem');
    });
  }
}
