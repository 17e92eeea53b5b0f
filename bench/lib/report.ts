/** The result table: one row per metric, printed as text and written as markdown. */
import { fmt } from './stats.js';

export type Verdict = 'pass' | 'FAIL' | 'info' | 'skipped' | 'error';

export interface Row {
  scenario: string;
  metric: string;
  unit: string;
  ours: number | undefined;
  baseline?: number | undefined;
  /** ours / baseline, or against the target's reference. */
  ratio?: number | undefined;
  /** The target in words, e.g. '≤ 1.25x' or '≤ 50 ms'. */
  target?: string;
  verdict: Verdict;
  /** A remark shown under the table (why skipped, what the baseline is, ...). */
  note?: string;
}

/** pass/FAIL for a value against an upper bound; 'info' when there is nothing to judge. */
export function atMost(value: number | undefined, bound: number): Verdict {
  if (value === undefined || !Number.isFinite(value)) return 'FAIL';
  return value <= bound ? 'pass' : 'FAIL';
}

/**
 * The 429s Discord's stand-in answered under its global limit (50 a second per bot token, on in
 * the scenarios that run the bot against it; interaction callbacks and webhooks are not counted,
 * as on Discord): the bot must never provoke one.
 */
export function discordTooManyRow(
  scenario: string,
  tooMany: number,
  apart: { which?: string; baseline?: number } = {},
): Row {
  return {
    scenario,
    metric: `429 from Discord's stand-in${apart.which ?? ''}`,
    unit: '',
    ours: tooMany,
    ...(apart.baseline === undefined ? {} : { baseline: apart.baseline }),
    target: '0',
    verdict: atMost(tooMany, 0),
    note: "Discord's global limit on (50 requests a second per bot token; interaction callbacks and webhooks not counted)",
  };
}

/** pass/FAIL for a value against a lower bound. */
export function atLeast(value: number | undefined, bound: number): Verdict {
  if (value === undefined || !Number.isFinite(value)) return 'FAIL';
  return value >= bound ? 'pass' : 'FAIL';
}

const HEADERS = ['Scenario', 'Metric', 'Ours', 'Baseline', 'Ratio', 'Target', 'Result'] as const;

function show(value: number | undefined, unit: string): string {
  return value === undefined || !Number.isFinite(value) ? '—' : `${fmt(value)}${unit}`;
}

function cells(row: Row): string[] {
  const unit = row.unit ? ` ${row.unit}` : '';
  return [
    row.scenario,
    row.metric,
    show(row.ours, unit),
    show(row.baseline, unit),
    row.ratio === undefined || !Number.isFinite(row.ratio) ? '—' : `${fmt(row.ratio, 2)}x`,
    row.target ?? '—',
    row.verdict,
  ];
}

export function textTable(rows: readonly Row[]): string {
  const body = rows.map(cells);
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? '').length)));
  const line = (parts: readonly string[]): string =>
    parts
      .map((p, i) => p.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const out = [line(HEADERS), widths.map((w) => '-'.repeat(w)).join('  ')];
  let previous = '';
  for (const [i, r] of body.entries()) {
    const scenario = rows[i]?.scenario ?? '';
    if (previous !== '' && scenario !== previous) out.push('');
    previous = scenario;
    out.push(line(r));
  }
  return out.join('\n');
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

export function markdownTable(rows: readonly Row[]): string {
  const out = [`| ${HEADERS.join(' | ')} |`, `|${HEADERS.map(() => '---').join('|')}|`];
  for (const row of rows) {
    const parts = cells(row).map(escapeCell);
    parts[6] = row.verdict === 'FAIL' ? '**FAIL**' : row.verdict;
    out.push(`| ${parts.join(' | ')} |`);
  }
  return out.join('\n');
}

/** Numbered notes of the rows that have one. */
export function notes(rows: readonly Row[]): string[] {
  return rows
    .filter((r) => r.note !== undefined)
    .map((r) => `${r.scenario} / ${r.metric}: ${r.note as string}`);
}

/** What a scenario hands back: its rows for the table and its raw numbers for the JSON. */
export interface ScenarioResult {
  rows: Row[];
  data: Record<string, unknown>;
}
