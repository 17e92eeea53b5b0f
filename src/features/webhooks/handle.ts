/**
 * What each stored webhook event does (the announcer claims it, this does it):
 *
 * - a comment (new, edited, deleted): an embed in the server's webhook channel (render.ts), with
 *   the claim's nonce and `enforce_nonce`, so a copy posted again after a crash is dropped;
 * - `test_webhook_message`: "webhook connected" there;
 * - v3's reviews (`comment_added`, `comment_edited`, `comment_removed`): one per member, whose
 *   announcement is edited as it changes (reviews.ts);
 * - an up given on the site or through another bot (v2's `new_server_bump`, v3's `up_added`): what
 *   follows an up, for an up this bot did not give (up-elsewhere.ts).
 *
 * A webhook turned off since the event came: nothing posted. The channel deleted, the bot's
 * access or a permission there lost: given up and recorded for /settings show.
 */
import type { REST } from 'discord.js';
import { failedPost, type GuildFactsLookup } from '../../discord/guild-posts.js';
import { type PostFailure, postMessage } from '../../discord/messages.js';
import { publicTranslator } from '../../i18n/public-language.js';
import type { Logger } from '../../log/logger.js';
import type { HistoryRepository } from '../../store/history.js';
import type { CommentPostRepository, UpWatchRepository } from '../../store/notifications.js';
import type { ReminderRepository } from '../../store/reminders.js';
import type { SettingsRepository } from '../../store/settings.js';
import type { EventClaim, StoredEvent, WebhookRepository } from '../../store/webhooks.js';
import type { SendOutcome } from '../../tasks/outbox.js';
import type { EventHandler } from './announcer.js';
import { type DirectoryEvent, storedEvent } from './events.js';
import { renderEvent } from './render.js';
import { announceReview } from './reviews.js';
import { upElsewhere } from './up-elsewhere.js';

export interface HandlerOptions {
  rest: REST;
  webhooks: Pick<WebhookRepository, 'get' | 'setProblem'>;
  settings: Pick<SettingsRepository, 'get'>;
  history: Pick<HistoryRepository, 'record' | 'timed' | 'has'>;
  reminders: Pick<ReminderRepository, 'moveForUp' | 'getGuild' | 'scheduleGuild'>;
  /** The server's reminder now falls due at `dueAt`: this process's scheduler looks in time. */
  wakeReminders: (dueAt: number) => void;
  /** An up given on the site follows the server's posted reminder through too (never throws). */
  followUp?: (guildId: string, up: { userId: string; at: number }) => Promise<unknown>;
  /** An up was recorded: what follows from it is told (the live leaderboard, reward roles). Never throws. */
  upRecorded?: (guildId: string, userId: string, at: number) => Promise<void>;
  /** The directory's record of the server is stale once it was upped (the look-up cache). */
  forget?: (guildId: string) => void;
  /** v3: where each member's review was announced (its edit edits it). */
  comments: Pick<CommentPostRepository, 'get' | 'put'>;
  /** v3: the /up answers waiting for the notification of an up. */
  watches?: Pick<UpWatchRepository, 'take'>;
  /** v3: the directory's cadence, when no cooldown is known (features/up/follows.ts). */
  cadenceMs?: number;
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
    if (event.kind === 'bump') return upElsewhere({ ...this.#o, now: this.#now }, stored, event, claim.nonce);
    return this.#announce(stored, event, claim);
  }

  async #announce(stored: StoredEvent, event: DirectoryEvent, claim: EventClaim): Promise<SendOutcome> {
    const { guildId } = stored;
    const setup = await this.#o.webhooks.get(guildId);
    if (!setup) {
      // A review told by v3's notifications, of a server of the key's account with no channel for
      // announcements (/settings webhook): nothing to post, as reminders that are off; not a failure.
      if (event.kind === 'comment' && event.v3) return { kind: 'sent' };
      return { kind: 'failed', reason: 'webhook-off' };
    }
    const [settings, facts] = await Promise.all([this.#o.settings.get(guildId), this.#o.guild(guildId)]);
    const t = publicTranslator(settings, facts?.preferredLocale);
    const layout = renderEvent(event, t);
    if (!layout) return { kind: 'sent' };
    const posted =
      event.kind === 'comment' && event.v3
        ? await announceReview(
            { rest: this.#o.rest, comments: this.#o.comments, now: this.#now },
            { guildId, userId: event.userId, change: event.change },
            setup.channelId,
            layout,
            claim.nonce,
          )
        : await postMessage(this.#o.rest, setup.channelId, {
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
