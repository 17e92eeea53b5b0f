/**
 * The ups chart of a period (/leaderboard, and /server for this server): ups per day (per week
 * over long periods) as stacked bars, the top members' share marked, the others together. The
 * same numbers go into the answer's text for screen readers (`summary`) and the image's alt text.
 */
import type { Translate } from '../../i18n/index.js';
import type { ChartRequest } from '../../render/chart-spec.js';
import type { MessageFile } from '../../render/message.js';
import { plainLabel } from '../../render/text.js';
import type { HistoryRepository } from '../../store/history.js';

const DAY_MS = 86_400_000;
/** Longer periods are drawn per week: 58 bars for 400 days, not 400. */
const DAILY_UP_TO_DAYS = 120;
/** Members with a colour of their own; the rest are "others". */
export const CHART_MEMBERS = 3;
export const CHART_FILE = 'ups.png';

export interface UpsSeries {
  /** Start of each bar's day or week (UTC), oldest first. */
  starts: number[];
  stepDays: number;
  /** The named members' series (top first), then "others" when anyone else upped. */
  series: Array<{ userId: string | null; data: number[] }>;
  totals: number[];
}

/** Buckets a period's per-day rows into bars from `since` to `now`, split by `named` members. */
export function upsSeries(
  rows: Array<{ userId: string; day: number; ups: number }>,
  named: readonly string[],
  since: number,
  now: number,
): UpsSeries {
  const first = since - (since % DAY_MS);
  const days = Math.floor((now - first) / DAY_MS) + 1;
  const stepDays = days > DAILY_UP_TO_DAYS ? 7 : 1;
  const bars = Math.ceil(days / stepDays);
  const starts = Array.from({ length: bars }, (_, i) => first + i * stepDays * DAY_MS);
  const series: UpsSeries['series'] = named.map((userId) => ({
    userId,
    data: new Array<number>(bars).fill(0),
  }));
  const others: UpsSeries['series'][number] = { userId: null, data: new Array<number>(bars).fill(0) };
  const totals = new Array<number>(bars).fill(0);
  for (const row of rows) {
    const bar = Math.floor((row.day - first) / (stepDays * DAY_MS));
    if (bar < 0 || bar >= bars) continue;
    const target = series.find((s) => s.userId === row.userId) ?? others;
    (target.data[bar] as number) += row.ups;
    (totals[bar] as number) += row.ups;
  }
  if (others.data.some((n) => n > 0)) series.push(others);
  return { starts, stepDays, series, totals };
}

function label(start: number, withYear: boolean): string {
  const d = new Date(start);
  const day = String(d.getUTCDate()).padStart(2, '0');
  const month = String(d.getUTCMonth() + 1).padStart(2, '0');
  return withYear ? `${day}.${month}.${String(d.getUTCFullYear()).slice(2)}` : `${day}.${month}`;
}

/** The bars as text: "24.11: 3" for each bar with ups (what the chart shows, for screen readers). */
export function summary(s: UpsSeries, t: Translate, max = 1000): string {
  const withYear = s.stepDays > 1;
  const parts = s.starts.flatMap((start, i) =>
    (s.totals[i] as number) > 0 ? [`${label(start, withYear)}: ${s.totals[i]}`] : [],
  );
  const text = parts.length === 0 ? t('upChart.none') : parts.join(' · ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export interface ChartDeps {
  history: Pick<HistoryRepository, 'perDay'>;
  charts: { render(request: ChartRequest): Promise<Buffer> };
  /** A member's display name for the legend. */
  name(userId: string): Promise<string | null>;
}

/**
 * The chart as a file and its text. Throws when it cannot be drawn: callers answer without the
 * image rather than fail. Names are plain text in the image: no markdown, no controls.
 */
export async function upsChart(
  deps: ChartDeps,
  options: { guildId: string; since: number; now: number; named: readonly string[]; title: string },
  t: Translate,
): Promise<{ file: MessageFile; text: string; weekly: boolean }> {
  const rows = await deps.history.perDay(options.guildId, options.since);
  const s = upsSeries(rows, options.named, options.since, options.now);
  const names = await Promise.all(
    s.series.map(async (series) => {
      // No one named (a digest's chart): one series, every up.
      if (series.userId === null) return t(options.named.length === 0 ? 'upChart.all' : 'upChart.others');
      const name = await deps.name(series.userId).catch(() => null);
      return name ? plainLabel(name, 32) : `…${series.userId.slice(-4)}`;
    }),
  );
  const text = summary(s, t);
  const png = await deps.charts.render({
    title: options.title,
    labels: s.starts.map((start) => label(start, s.stepDays > 1)),
    series: s.series.map((series, i) => ({
      label: names[i] as string,
      data: series.data,
      ...(series.userId === null && options.named.length > 0 ? { muted: true } : {}),
    })),
    yTitle: t(s.stepDays > 1 ? 'upChart.perWeek' : 'upChart.perDay'),
    width: 960,
    height: 480,
  });
  return {
    file: {
      attachment: png,
      name: CHART_FILE,
      description: `${options.title}. ${text}`.slice(0, 1024),
    },
    text,
    weekly: s.stepDays > 1,
  };
}

/** "Ups in the last 30 days" for /server on this server: null when nobody upped in them. */
export async function thisServerChart(
  deps: ChartDeps & { history: Pick<HistoryRepository, 'members'> },
  guildId: string,
  now: number,
  t: Translate,
): Promise<{ file: MessageFile; text: string; weekly: boolean } | null> {
  const since = now - 30 * DAY_MS;
  const members = await deps.history.members(guildId, since);
  if (members.length === 0) return null;
  const named = members.slice(0, CHART_MEMBERS).map((m) => m.userId);
  return upsChart(deps, { guildId, since, now, named, title: t('upChart.title') }, t);
}
