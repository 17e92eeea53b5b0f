/**
 * /leaderboard: the members who keep this server up, from its history of successful ups
 * (store/history.ts). The top 10 of a period with their counts, and the rank of whoever asked.
 * Names are mentions, which ping nobody: every answer's allowed_mentions is empty
 * (interactions/respond.ts), and ids come from the store as Discord gave them.
 */
import type { Translate } from '../../i18n/index.js';
import { COLORS } from '../../render/colors.js';
import { delayText } from '../../render/delay.js';
import { container, facts, fitLayout, gallery, separator, subtext, text } from '../../render/layout.js';
import type { LayoutMessage, MessageFile } from '../../render/message.js';
import {
  type HistoryRepository,
  type MemberUps,
  type TimedUpRow,
  UP_HISTORY_DAYS,
} from '../../store/history.js';
import { fastest, memberStreak, type ServerStreak, serverStreak } from './streaks.js';

export const PERIODS = ['week', 'month', 'all'] as const;
export type Period = (typeof PERIODS)[number];
export const DEFAULT_PERIOD: Period = 'month';

const DAY_MS = 86_400_000;
/** How far back each period looks ("all": as far as the history is kept). */
const PERIOD_DAYS: Record<Period, number> = { week: 7, month: 30, all: UP_HISTORY_DAYS };
export const TOP = 10;

export function isPeriod(value: unknown): value is Period {
  return typeof value === 'string' && (PERIODS as readonly string[]).includes(value);
}

export interface Standing {
  period: Period;
  since: number;
  /** The first TOP members. */
  top: MemberUps[];
  /** Whoever asked: their 1-based rank and count, or null with no up in the period. */
  asker: { rank: number; ups: number } | null;
  totalUps: number;
  members: number;
}

/** Where a period begins, as of `now`. */
export function periodStart(period: Period, now: number): number {
  return now - PERIOD_DAYS[period] * DAY_MS;
}

export async function standing(
  history: Pick<HistoryRepository, 'members'>,
  guildId: string,
  userId: string,
  period: Period,
  now: number,
): Promise<Standing> {
  const since = periodStart(period, now);
  const all = await history.members(guildId, since);
  const index = all.findIndex((m) => m.userId === userId);
  return {
    period,
    since,
    top: all.slice(0, TOP),
    asker: index === -1 ? null : { rank: index + 1, ups: (all[index] as MemberUps).ups },
    totalUps: all.reduce((n, m) => n + m.ups, 0),
    members: all.length,
  };
}

/** How many of the fastest ups, and of the longest member streaks, the board shows. */
export const FASTEST = 3;
export const STREAKS = 5;

/** The streaks and the fastest ups (streaks.ts) beside a period's standing. */
export interface StreakBoard {
  /** The period's fastest ups: who, and how long after the up was possible. */
  fastest: Array<{ userId: string; reactionMs: number }>;
  server: ServerStreak;
  /** The members with the longest streaks of days (best first), over the whole history. */
  members: Array<{ userId: string; best: number; current: number }>;
  asker: { best: number; current: number } | null;
}

/**
 * From the server's whole history (oldest first): the fastest ups since `since`, the server's
 * streak with the window open now (`nextPossibleAt`), and each member's streak of days in
 * `timeZone`.
 */
export function streakBoard(
  ups: readonly TimedUpRow[],
  options: { since: number; userId: string; timeZone: string; nextPossibleAt: number | null; now: number },
): StreakBoard {
  const { since, userId, timeZone, nextPossibleAt, now } = options;
  const byMember = new Map<string, number[]>();
  for (const up of ups) {
    const times = byMember.get(up.userId);
    if (times) times.push(up.at);
    else byMember.set(up.userId, [up.at]);
  }
  const members = [...byMember].map(([id, times]) => ({ userId: id, ...memberStreak(times, timeZone, now) }));
  const mine = members.find((m) => m.userId === userId);
  return {
    fastest: fastest(
      ups.filter((up) => up.at >= since),
      FASTEST,
    ).map((up) => ({ userId: up.userId, reactionMs: up.reactionMs })),
    server: serverStreak(ups, nextPossibleAt, now),
    members: members
      .filter((m) => m.best >= 2)
      .sort((a, b) => b.best - a.best || b.current - a.current || a.userId.localeCompare(b.userId))
      .slice(0, STREAKS)
      .map(({ userId: id, best, current }) => ({ userId: id, best, current })),
    asker: mine ? { best: mine.best, current: mine.current } : null,
  };
}

/** A user id as Discord gives them: anything else is not put in a mention. */
const SNOWFLAKE = /^\d{15,21}$/;

/** The chart of the period (chart.ts), when it could be drawn. */
export interface LeaderboardChart {
  file: MessageFile;
  text: string;
  weekly: boolean;
}

/** A member's mention (which pings nobody: allowed_mentions is empty), or "(unknown member)". */
export function memberMention(userId: string, t: Translate): string {
  return SNOWFLAKE.test(userId) ? `<@${userId}>` : t('leaderboard.unknownUser');
}

/** The fastest ups and the streaks, as lines under their titles; none when nothing to show. */
function streakText(board: StreakBoard, t: Translate): string[] {
  const plain = { interpolation: { escapeValue: false } };
  const parts: string[] = [];
  if (board.fastest.length > 0) {
    const lines = board.fastest.map((f, i) =>
      t('leaderboard.line', {
        rank: i + 1,
        user: memberMention(f.userId, t),
        ups: delayText(f.reactionMs, t),
        ...plain,
      }),
    );
    parts.push(`**${t('leaderboard.fastestTitle')}**\n${lines.join('\n')}`);
  }
  const server =
    board.server.best >= 2
      ? [t('leaderboard.serverStreak', { count: board.server.current, best: board.server.best })]
      : [];
  const members = board.members.map((m, i) =>
    t('leaderboard.line', {
      rank: i + 1,
      user: memberMention(m.userId, t),
      ups: t('leaderboard.streakDays', { count: m.best, current: m.current }),
      ...plain,
    }),
  );
  if (server.length + members.length > 0)
    parts.push(`**${t('leaderboard.streaksTitle')}**\n${[...server, ...members].join('\n')}`);
  return parts;
}

export function renderLeaderboard(
  s: Standing,
  t: Translate,
  chart?: LeaderboardChart | null,
  streakFacts?: StreakBoard,
): LayoutMessage {
  const title = text(`### ${t(`leaderboard.title.${s.period}`)}`);
  if (s.members === 0) {
    return { layout: [container(COLORS.info, [title, text(t('leaderboard.empty'))])] };
  }
  const lines = s.top.map((m, i) =>
    t('leaderboard.line', {
      rank: i + 1,
      user: memberMention(m.userId, t),
      ups: t('leaderboard.ups', { count: m.ups }),
      interpolation: { escapeValue: false },
    }),
  );
  const you = s.asker
    ? t('leaderboard.you', {
        rank: s.asker.rank,
        ups: t('leaderboard.ups', { count: s.asker.ups }),
        interpolation: { escapeValue: false },
      })
    : t('leaderboard.youNone');
  const yourStreak =
    streakFacts?.asker && streakFacts.asker.best >= 2
      ? [
          [
            t('leaderboard.youStreakTitle'),
            t('leaderboard.streakDays', {
              count: streakFacts.asker.best,
              current: streakFacts.asker.current,
            }),
          ] as const,
        ]
      : [];
  const streaks = streakFacts ? streakText(streakFacts, t) : [];
  const total = t('leaderboard.total', {
    ups: t('leaderboard.ups', { count: s.totalUps }),
    members: t('leaderboard.byMembers', { count: s.members }),
    interpolation: { escapeValue: false },
  });
  const board = container(COLORS.success, [
    title,
    text(lines.join('\n')),
    ...(streaks.length > 0 ? [separator(), text(streaks.join('\n\n'))] : []),
    separator(),
    text(facts([[t('leaderboard.youTitle'), you], ...yourStreak])),
    ...(chart
      ? [
          separator(),
          text(`**${t(`leaderboard.barsTitle.${chart.weekly ? 'week' : 'day'}`)}**\n${chart.text}`),
          gallery([{ url: `attachment://${chart.file.name}`, description: chart.file.description }]),
        ]
      : []),
    separator({ divider: false }),
    subtext(total),
  ]);
  return { layout: fitLayout([board]), ...(chart ? { files: [chart.file] } : {}) };
}
