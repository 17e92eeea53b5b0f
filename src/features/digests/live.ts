/**
 * A server's live leaderboard (`/settings live-leaderboard channel:`): one public message, kept up
 * to date with the calendar month's standing in the server's time zone. An up (the bot's /up, the
 * directory's webhook) makes it due a minute after its last edit at the soonest (store/
 * live-boards.ts); it is then drawn again and edited only when what it shows changed, so a burst
 * of ups is one edit and a quiet server none. At the month's start it shows the new month. On the
 * outbox engine: one process edits it at a time, and a message deleted by hand is posted again
 * once (the claim's nonce). Names are mentions that ping nobody.
 */
import { createHash } from 'node:crypto';
import type { APIMessageTopLevelComponent, REST } from 'discord.js';
import type { GuildFactsLookup } from '../../discord/guild-posts.js';
import { type classifyPostError, DiscordCode, editMessage, postMessage } from '../../discord/messages.js';
import { type Translate, translator } from '../../i18n/index.js';
import { publicLocale } from '../../i18n/public-language.js';
import { COLORS } from '../../render/colors.js';
import { container, fitLayout, separator, subtext, text } from '../../render/layout.js';
import type { HistoryRepository, MemberUps } from '../../store/history.js';
import type { LiveBoard, LiveBoardClaim, LiveBoardRepository } from '../../store/live-boards.js';
import type { SettingsRepository } from '../../store/settings.js';
import { keyedSource } from '../../tasks/finish-as.js';
import { Outbox, type RunnerOptions, type SendOutcome } from '../../tasks/outbox.js';
import { periodAt } from '../history/calendar.js';
import { memberMention, TOP } from '../history/leaderboard.js';
import { spreadOf } from './plan.js';

/** What the board shows: the month, its top members and totals. Its hash decides an edit. */
interface LiveFacts {
  key: string;
  locale: string;
  top: MemberUps[];
  totalUps: number;
  members: number;
}

function hashOf(facts: LiveFacts): string {
  const shown = { ...facts, top: facts.top.map((m) => [m.userId, m.ups]) };
  return createHash('sha256').update(JSON.stringify(shown)).digest('base64url');
}

export function renderLive(
  facts: LiveFacts,
  month: { start: number; timeZone: string },
  t: Translate,
  now: number,
): APIMessageTopLevelComponent[] {
  const name = new Intl.DateTimeFormat(facts.locale, {
    month: 'long',
    year: 'numeric',
    timeZone: month.timeZone,
  }).format(month.start);
  const plain = { interpolation: { escapeValue: false } };
  const lines = facts.top.map((m, i) =>
    t('leaderboard.line', {
      rank: i + 1,
      user: memberMention(m.userId, t),
      ups: t('leaderboard.ups', { count: m.ups }),
      ...plain,
    }),
  );
  const total =
    facts.members === 0
      ? t('live.empty')
      : t('digest.total', {
          ups: t('leaderboard.ups', { count: facts.totalUps }),
          members: t('leaderboard.byMembers', { count: facts.members }),
          ...plain,
        });
  return fitLayout([
    container(COLORS.success, [
      text(`### ${t('live.title', { month: name, ...plain })}`),
      ...(lines.length > 0 ? [text(lines.join('\n'))] : []),
      separator(),
      subtext(`${total} · ${t('live.updated', { relative: `<t:${Math.floor(now / 1000)}:R>` })}`),
    ]),
  ]);
}

export interface LiveSenderOptions {
  rest: REST;
  settings: Pick<SettingsRepository, 'get'>;
  history: Pick<HistoryRepository, 'members'>;
  boards: Pick<LiveBoardRepository, 'shown'>;
  guild: GuildFactsLookup;
  now?: () => number;
}

export class LiveBoardSender {
  readonly #o: LiveSenderOptions;
  readonly #now: () => number;

  constructor(options: LiveSenderOptions) {
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  async refresh(board: LiveBoard, claim: LiveBoardClaim): Promise<SendOutcome> {
    const { guildId } = board;
    const settings = await this.#o.settings.get(guildId);
    // Moved or turned off meanwhile (/settings wrote the row again, or removed it).
    if (settings?.liveChannelId !== board.channelId) return { kind: 'sent' };
    const now = this.#now();
    const timeZone = settings.timeZone ?? 'UTC';
    const month = periodAt('month', now, timeZone);
    const [members, guild] = await Promise.all([
      this.#o.history.members(guildId, month.start, month.end),
      this.#o.guild(guildId),
    ]);
    const locale = publicLocale(settings.publicLanguage, guild?.preferredLocale);
    const facts: LiveFacts = {
      key: month.key,
      locale,
      top: members.slice(0, TOP),
      totalUps: members.reduce((n, m) => n + m.ups, 0),
      members: members.length,
    };
    const contentHash = hashOf(facts);
    // The next month's board, spread like the digests.
    const restAt = month.end + spreadOf(guildId);
    if (board.messageId && board.contentHash === contentHash) {
      await this.#o.boards.shown(claim, { messageId: board.messageId, contentHash, editedAt: null, restAt });
      return { kind: 'sent' };
    }
    const layout = renderLive(facts, month, translator(locale), now);
    const message = { layout, allowedMentions: { parse: [] } };
    if (board.messageId) {
      const edited = await editMessage(this.#o.rest, board.channelId, board.messageId, message);
      if (edited.ok) {
        await this.#o.boards.shown(claim, { messageId: board.messageId, contentHash, editedAt: now, restAt });
        return { kind: 'sent' };
      }
      const gone = edited.failure.kind === 'rejected' && edited.failure.code === DiscordCode.UnknownMessage;
      if (!gone) return outcomeOf(edited.failure);
    }
    // None yet, or deleted by hand: a new one, once.
    const posted = await postMessage(this.#o.rest, board.channelId, { ...message, nonce: claim.nonce });
    if (!posted.ok) return outcomeOf(posted.failure);
    await this.#o.boards.shown(claim, { messageId: posted.messageId, contentHash, editedAt: now, restAt });
    return { kind: 'sent' };
  }
}

function outcomeOf(failure: ReturnType<typeof classifyPostError>): SendOutcome {
  return failure.kind === 'transient'
    ? { kind: 'retry', detail: 'discord' }
    : { kind: 'failed', reason: failure.kind };
}

export interface LiveSchedulerOptions extends RunnerOptions {
  boards: Pick<LiveBoardRepository, 'due' | 'claim' | 'finish' | 'retryAt'>;
  sender: Pick<LiveBoardSender, 'refresh'>;
  ownsGuild?: ((guildId: string) => boolean) | undefined;
}

/** The live boards' outbox: each drawn again when due, by one process at a time. */
export class LiveBoardScheduler {
  readonly #outbox: Outbox<LiveBoard, LiveBoardClaim>;

  constructor(options: LiveSchedulerOptions) {
    const { boards, sender, ownsGuild } = options;
    this.#outbox = new Outbox<LiveBoard, LiveBoardClaim>({
      ...options,
      defaults: { concurrency: 8 },
      source: keyedSource(
        boards,
        (board) => board.guildId,
        (_now, until, limit) => boards.due(until, limit),
      ),
      policy: {
        noun: 'live leaderboard',
        verb: 'refreshed',
        key: (board) => board.guildId,
        dueAt: (board) => board.dueAt,
        accepts: ownsGuild && ((board) => ownsGuild(board.guildId)),
        fields: (board) => ({ guildId: board.guildId }),
        since: (board) => board.dueAt,
        act: (board, claim) => sender.refresh(board, claim),
        traceParent: (board) => board.traceParent,
      },
    });
  }

  start(): void {
    this.#outbox.start();
  }

  wake(dueAt: number): void {
    this.#outbox.wake(dueAt);
  }

  stop(): Promise<void> {
    return this.#outbox.stop();
  }
}
