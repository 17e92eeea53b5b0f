/**
 * What a server's digest says of one period (features/history/calendar.ts), from its history of
 * ups (store/history.ts): how many ups by how many members, the top members, the period's streak
 * records (the server's ups on time in a row, a member's days in a row) and its fastest up, and
 * the chart of its days. Posted publicly in the server's language; names are mentions that ping
 * nobody (the post's allowed_mentions is empty).
 */
import type { Translate } from '../../i18n/index.js';
import { COLORS } from '../../render/colors.js';
import { delayText } from '../../render/delay.js';
import { container, facts, fitLayout, gallery, separator, subtext, text } from '../../render/layout.js';
import type { LayoutMessage, MessageFile } from '../../render/message.js';
import type { HistoryRepository, MemberUps } from '../../store/history.js';
import type { DigestPeriod } from '../../store/schema.js';
import { memberMention } from '../history/leaderboard.js';
import { fastest, memberStreak, serverStreak } from '../history/streaks.js';

/** How many members the digest names. */
export const DIGEST_TOP = 5;

export interface DigestFacts {
  period: DigestPeriod;
  start: number;
  end: number;
  top: MemberUps[];
  totalUps: number;
  members: number;
  /** The server's longest run of ups on time within the period (0 or 1: none worth saying). */
  serverBest: number;
  /** The member with the most days in a row within the period (2 or more), in its time zone. */
  memberBest: { userId: string; days: number } | null;
  fastest: { userId: string; reactionMs: number } | null;
}

/** The period's numbers, read from the history (two queries). */
export async function digestFacts(
  history: Pick<HistoryRepository, 'members' | 'timed'>,
  guildId: string,
  span: { period: DigestPeriod; start: number; end: number; timeZone: string },
): Promise<DigestFacts> {
  const [members, ups] = await Promise.all([
    history.members(guildId, span.start, span.end),
    history.timed(guildId, span.start, span.end),
  ]);
  const byMember = new Map<string, number[]>();
  for (const up of ups) {
    const times = byMember.get(up.userId);
    if (times) times.push(up.at);
    else byMember.set(up.userId, [up.at]);
  }
  let memberBest: DigestFacts['memberBest'] = null;
  for (const [userId, times] of byMember) {
    const { best } = memberStreak(times, span.timeZone, span.end - 1);
    if (best >= 2 && (!memberBest || best > memberBest.days)) memberBest = { userId, days: best };
  }
  const [quickest] = fastest(ups, 1);
  return {
    period: span.period,
    start: span.start,
    end: span.end,
    top: members.slice(0, DIGEST_TOP),
    totalUps: members.reduce((n, m) => n + m.ups, 0),
    members: members.length,
    serverBest: serverStreak(ups, null, span.end).best,
    memberBest,
    fastest: quickest ? { userId: quickest.userId, reactionMs: quickest.reactionMs } : null,
  };
}

/** The digest's title: the period, its dates shown in each reader's own time zone and words. */
function title(f: DigestFacts, t: Translate): string {
  const from = `<t:${Math.floor(f.start / 1000)}:D>`;
  const to = `<t:${Math.floor((f.end - 1) / 1000)}:D>`;
  return `### ${t(`digest.title.${f.period}`)}\n${from} – ${to}`;
}

export function renderDigest(
  f: DigestFacts,
  t: Translate,
  chart?: { file: MessageFile; text: string } | null,
): LayoutMessage {
  const plain = { interpolation: { escapeValue: false } };
  if (f.members === 0) {
    return {
      layout: fitLayout([container(COLORS.info, [text(title(f, t)), text(t(`digest.empty.${f.period}`))])]),
    };
  }
  const lines = f.top.map((m, i) =>
    t('leaderboard.line', {
      rank: i + 1,
      user: memberMention(m.userId, t),
      ups: t('leaderboard.ups', { count: m.ups }),
      ...plain,
    }),
  );
  const total = t('digest.total', {
    ups: t('leaderboard.ups', { count: f.totalUps }),
    members: t('leaderboard.byMembers', { count: f.members }),
    ...plain,
  });
  const records: Array<[string, string | null]> = [];
  if (f.serverBest >= 2)
    records.push([t('digest.serverStreak'), t('digest.serverStreakValue', { count: f.serverBest })]);
  if (f.memberBest) {
    records.push([
      t('digest.memberStreak'),
      t('digest.memberStreakValue', {
        user: memberMention(f.memberBest.userId, t),
        count: f.memberBest.days,
        ...plain,
      }),
    ]);
  }
  if (f.fastest) {
    records.push([
      t('digest.fastest'),
      t('digest.fastestValue', {
        user: memberMention(f.fastest.userId, t),
        after: delayText(f.fastest.reactionMs, t),
        ...plain,
      }),
    ]);
  }
  const panel = container(COLORS.success, [
    text(title(f, t)),
    text(`**${total}**`),
    separator(),
    text(`**${t('digest.topTitle')}**\n${lines.join('\n')}`),
    ...(records.length > 0 ? [separator(), text(facts(records))] : []),
    ...(chart
      ? [
          separator(),
          gallery([{ url: `attachment://${chart.file.name}`, description: chart.file.description }]),
          subtext(chart.text),
        ]
      : []),
  ]);
  return { layout: fitLayout([panel]), ...(chart ? { files: [chart.file] } : {}) };
}
