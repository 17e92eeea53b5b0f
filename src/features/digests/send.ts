/**
 * Period digests on the outbox engine (tasks/outbox.ts): each server's digest (store/digests.ts)
 * is claimed at its due time, posted once with the claim's nonce (Discord drops a second copy
 * after a crash), and recorded; the next period's is written first, so the cycle goes on whatever
 * happens to this post. A process posts only for the servers of its shards. The chart is drawn
 * off the event loop (render/charts.ts); a chart that cannot be drawn costs the image, never the
 * digest. A channel deleted or a permission lost is recorded on the server's settings for its
 * admins (`/settings show`), as a reminder's is.
 */
import type { REST } from 'discord.js';
import { type GuildFactsLookup, postForServer } from '../../discord/guild-posts.js';
import { publicTranslator } from '../../i18n/public-language.js';
import type { Logger } from '../../log/logger.js';
import type { ChartRequest } from '../../render/chart-spec.js';
import type { Digest, DigestClaim, DigestRepository } from '../../store/digests.js';
import type { HistoryRepository } from '../../store/history.js';
import type { SettingsRepository } from '../../store/settings.js';
import { keyedSource } from '../../tasks/finish-as.js';
import { Outbox, type RunnerOptions, type SendOutcome } from '../../tasks/outbox.js';
import { upsChart } from '../history/chart.js';
import { digestFacts, renderDigest } from './digest.js';
import { digestPlan } from './plan.js';

export interface DigestSenderOptions {
  rest: REST;
  settings: Pick<SettingsRepository, 'get' | 'update'>;
  history: Pick<HistoryRepository, 'members' | 'timed' | 'perDay'>;
  digests: Pick<DigestRepository, 'schedule'>;
  charts: { render(request: ChartRequest): Promise<Buffer> };
  guild: GuildFactsLookup;
  logger: Logger;
  now?: () => number;
}

export class DigestSender {
  readonly #o: DigestSenderOptions;
  readonly #now: () => number;

  constructor(options: DigestSenderOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  async send(digest: Digest, claim: DigestClaim): Promise<SendOutcome> {
    const { guildId } = digest;
    const settings = await this.#o.settings.get(guildId);
    // Turned off meanwhile: nothing to post, and no next one.
    if (!settings?.digest) return { kind: 'sent' };
    const timeZone = settings.timeZone ?? 'UTC';
    await this.#o.digests.schedule(digestPlan(guildId, settings.digest, timeZone, digest.end));
    const facts = await digestFacts(this.#o.history, guildId, digest);
    const guild = await this.#o.guild(guildId);
    const t = publicTranslator(settings, guild?.preferredLocale);
    const chart =
      facts.members === 0
        ? null
        : await upsChart(
            // One series, nobody named: a member's name would cost a request to Discord per
            // member, and 10,000 digests at one boundary cannot spend three each (bench 14).
            { history: this.#o.history, charts: this.#o.charts, name: async () => null },
            {
              guildId,
              since: digest.start,
              now: digest.end - 1,
              named: [],
              title: t(`digest.title.${digest.period}`),
            },
            t,
          ).catch((err: unknown) => {
            this.#o.logger.warn({ err, guildId }, 'the digest chart could not be drawn; posting without it');
            return null;
          });
    const message = renderDigest(facts, t, chart);
    // Where the server wants it now (a channel changed after this digest was written).
    return postForServer(this.#o.rest, settings.digest.channelId, message, claim.nonce, {
      guildId,
      settings: this.#o.settings,
      logger: this.#o.logger,
      now: this.#now(),
      what: 'digest',
    });
  }
}

export interface DigestSchedulerOptions extends RunnerOptions {
  digests: Pick<DigestRepository, 'due' | 'claim' | 'finish' | 'retryAt'>;
  sender: Pick<DigestSender, 'send'>;
  ownsGuild?: ((guildId: string) => boolean) | undefined;
  onDone?: ((event: { latenessMs: number; outcome: SendOutcome }) => void) | undefined;
}

/** The digests' outbox: posts each at its due time, once, across restarts and hosts. */
export class DigestScheduler {
  readonly #outbox: Outbox<Digest, DigestClaim>;

  constructor(options: DigestSchedulerOptions) {
    const { digests, sender, ownsGuild, onDone } = options;
    this.#outbox = new Outbox<Digest, DigestClaim>({
      ...options,
      // A digest takes a chart: fewer at once than the reminders' 16, the global pace does the rest.
      defaults: { concurrency: 8 },
      source: keyedSource(
        digests,
        (digest) => digest.id,
        (_now, until, limit) => digests.due(until, limit),
      ),
      policy: {
        noun: 'digest',
        verb: 'posted',
        key: (digest) => digest.id,
        dueAt: (digest) => digest.dueAt,
        accepts: ownsGuild && ((digest) => ownsGuild(digest.guildId)),
        fields: (digest) => ({ guildId: digest.guildId, digest: digest.id }),
        since: (digest) => digest.dueAt,
        act: (digest, claim) => sender.send(digest, claim),
        traceParent: (digest) => digest.traceParent,
      },
      onDone: onDone && (({ latenessMs, outcome }) => onDone({ latenessMs, outcome })),
    });
  }

  start(): void {
    this.#outbox.start();
  }

  /** A digest of this process falls due at `dueAt`. */
  wake(dueAt: number): void {
    this.#outbox.wake(dueAt);
  }

  stop(): Promise<void> {
    return this.#outbox.stop();
  }

  get held(): number {
    return this.#outbox.held;
  }
}
