/**
 * A server's streak said when it breaks (issue 25): once a cooldown window's grace (STREAK_GRACE_MS
 * after the up became possible) runs out with no up, the streak of ups on time it ends (2 or more)
 * is announced in the server's reminder channel, in its public language, pinging nobody. Not at the
 * next up, and never silently reset.
 *
 * A look each minute (a PeriodicTask; and at start, so a window that ended while the bot was down
 * within the last hour is still said) finds the windows whose grace just ran out (store/streak-
 * notices.ts: a reminder's next-up time that no up moved on) and reads the server's history for the
 * streak; each one to say is an outbox row, claimed and posted once with a Discord nonce, across
 * restarts, kill -9 and several processes. A process looks after the servers of its shards.
 */
import type { REST } from 'discord.js';
import { type GuildFactsLookup, postForServer } from '../../discord/guild-posts.js';
import { publicTranslator } from '../../i18n/public-language.js';
import { COLORS } from '../../render/colors.js';
import { delayText } from '../../render/delay.js';
import { container, fitLayout, text } from '../../render/layout.js';
import { type HistoryRepository, UP_HISTORY_MS } from '../../store/history.js';
import type { SettingsRepository } from '../../store/settings.js';
import type { NoticeClaim, StreakNotice, StreakNoticeRepository } from '../../store/streak-notices.js';
import { keyedSource } from '../../tasks/finish-as.js';
import { Outbox, type RunnerOptions, type SendOutcome } from '../../tasks/outbox.js';
import { PeriodicTask } from '../../tasks/periodic.js';
import { type BackgroundTask, backgroundTask } from '../../tasks/tasks.js';
import { STREAK_GRACE_MS, serverStreak } from './streaks.js';

export const STREAK_WATCH_EVERY_MS = 60_000;
/** Windows whose grace ran out this long ago at most are still said (the bot was down meanwhile). */
export const STREAK_WATCH_LOOKBACK_MS = 3_600_000;
/** Windows looked at per look, at most. */
const WINDOWS_PER_LOOK = 1_000;

export interface StreakWatchOptions extends RunnerOptions {
  notices: StreakNoticeRepository;
  history: Pick<HistoryRepository, 'timed'>;
  settings: Pick<SettingsRepository, 'get' | 'update'>;
  rest: REST;
  guild: GuildFactsLookup;
  ownsGuild?: ((guildId: string) => boolean) | undefined;
  everyMs?: number | undefined;
}

export class StreakWatch {
  readonly #o: StreakWatchOptions;
  readonly #now: () => number;
  readonly #outbox: Outbox<StreakNotice, NoticeClaim>;
  readonly #periodic: PeriodicTask;
  /** The windows looked at already (`<guild>:<next-up time>` → that time), within the look-back. */
  readonly #looked = new Map<string, number>();

  constructor(options: StreakWatchOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
    const { notices, ownsGuild } = options;
    this.#outbox = new Outbox<StreakNotice, NoticeClaim>({
      ...options,
      source: keyedSource(
        notices,
        (notice) => notice.id,
        (_now, _until, limit) => notices.due(limit),
      ),
      policy: {
        noun: 'streak notice',
        verb: 'posted',
        key: (notice) => notice.id,
        dueAt: (notice) => notice.endedAt,
        accepts: ownsGuild && ((notice) => ownsGuild(notice.guildId)),
        fields: (notice) => ({ guildId: notice.guildId, notice: notice.id }),
        since: (notice) => notice.endedAt,
        act: (notice, claim) => this.#post(notice, claim),
        traceParent: (notice) => notice.traceParent,
      },
    });
    this.#periodic = new PeriodicTask({
      name: 'streak watch',
      everyMs: options.everyMs ?? STREAK_WATCH_EVERY_MS,
      run: async () => {
        await this.look();
      },
      failure: 'could not look for broken streaks; looking again in a minute',
      logger: options.logger,
    });
  }

  /** For the process's task list: the look each minute, then the notices' outbox. */
  get tasks(): BackgroundTask[] {
    return [this.#periodic, backgroundTask('streak notices', this.#outbox)];
  }

  /** The windows whose grace ran out since the look-back: each broken streak written once. How many. */
  async look(now: number = this.#now()): Promise<number> {
    for (const [key, at] of this.#looked)
      if (at + STREAK_GRACE_MS <= now - STREAK_WATCH_LOOKBACK_MS) this.#looked.delete(key);
    const windows = await this.#o.notices.windowsEnded(
      now - STREAK_WATCH_LOOKBACK_MS,
      now,
      STREAK_GRACE_MS,
      WINDOWS_PER_LOOK,
    );
    let added = 0;
    for (const { guildId, nextUpAt } of windows) {
      const key = `${guildId}:${nextUpAt}`;
      if (this.#looked.has(key) || (this.#o.ownsGuild && !this.#o.ownsGuild(guildId))) continue;
      const ups = await this.#o.history.timed(guildId, now - UP_HISTORY_MS);
      const { ended } = serverStreak(ups, nextUpAt, now);
      if (ended && ended.at === nextUpAt + STREAK_GRACE_MS) {
        if (await this.#o.notices.add({ guildId, nextUpAt, length: ended.length, endedAt: ended.at }))
          added += 1;
      }
      this.#looked.set(key, nextUpAt);
    }
    if (added > 0) this.#outbox.wake(now);
    return added;
  }

  async #post(notice: StreakNotice, claim: NoticeClaim): Promise<SendOutcome> {
    const { guildId } = notice;
    const settings = await this.#o.settings.get(guildId);
    const channelId = settings?.reminderChannelId;
    // Reminders turned off meanwhile: nowhere to say it.
    if (!settings || !channelId) return { kind: 'sent' };
    const facts = await this.#o.guild(guildId);
    const t = publicTranslator(settings, facts?.preferredLocale);
    const line = t('streakNotice.ended', { count: notice.length, grace: delayText(STREAK_GRACE_MS, t) });
    const layout = fitLayout([container(COLORS.warning, [text(line)])]);
    return postForServer(this.#o.rest, channelId, { layout }, claim.nonce, {
      guildId,
      settings: this.#o.settings,
      logger: this.#o.logger,
      now: this.#now(),
      what: 'streak notice',
    });
  }
}
