/**
 * /leaderboard: the members who keep this server up, from its history of successful ups
 * (store/history.ts). The top 10 of a period with their counts, and the rank of whoever asked.
 * Names are mentions, which ping nobody: every answer's allowed_mentions is empty
 * (interactions/respond.ts), and ids come from the store as Discord gave them.
 */
import type { Translate } from '../../i18n/index.js';
import { COLORS } from '../../render/colors.js';
import { container, facts, fitLayout, gallery, separator, subtext, text } from '../../render/layout.js';
import type { LayoutMessage, MessageFile } from '../../render/message.js';
import { type HistoryRepository, type MemberUps, UP_HISTORY_DAYS } from '../../store/history.js';

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

export async function standing(
  history: Pick<HistoryRepository, 'members'>,
  guildId: string,
  userId: string,
  period: Period,
  now: number,
): Promise<Standing> {
  const since = now - PERIOD_DAYS[period] * DAY_MS;
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

/** A user id as Discord gives them: anything else is not put in a mention. */
const SNOWFLAKE = /^\d{15,21}$/;

/** The chart of the period (chart.ts), when it could be drawn. */
export interface LeaderboardChart {
  file: MessageFile;
  text: string;
  weekly: boolean;
}

export function renderLeaderboard(s: Standing, t: Translate, chart?: LeaderboardChart | null): LayoutMessage {
  const title = text(`### ${t(`leaderboard.title.${s.period}`)}`);
  if (s.members === 0) {
    return { layout: [container(COLORS.info, [title, text(t('leaderboard.empty'))])] };
  }
  const lines = s.top.map((m, i) =>
    t('leaderboard.line', {
      rank: i + 1,
      user: SNOWFLAKE.test(m.userId) ? `<@${m.userId}>` : t('leaderboard.unknownUser'),
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
  const total = t('leaderboard.total', {
    ups: t('leaderboard.ups', { count: s.totalUps }),
    members: t('leaderboard.byMembers', { count: s.members }),
    interpolation: { escapeValue: false },
  });
  const board = container(COLORS.success, [
    title,
    text(lines.join('\n')),
    separator(),
    text(facts([[t('leaderboard.youTitle'), you]])),
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
