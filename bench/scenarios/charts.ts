/**
 * Scenario 8: charts. The /leaderboard chart of a busy month (30 bars, three members and the
 * rest) rendered 200 times one after another on the chart thread (src/render/charts.ts): the
 * time of one render as the caller sees it (posting the data, drawing, the PNG back), and the
 * longest the bot's event loop was held meanwhile (it should not be: drawing is on the thread).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { upsSeries } from '../../src/features/history/chart.js';
import { ChartRenderer } from '../../src/render/charts.js';
import { size } from '../lib/env.js';
import { atMost, type Row, type ScenarioResult } from '../lib/report.js';
import { summarize } from '../lib/stats.js';

const SCENARIO = '8. Charts';
const DAY = 86_400_000;

export async function chartsScenario(): Promise<ScenarioResult> {
  const now = Date.now();
  const since = now - 30 * DAY;
  // A busy server: five members, most days several ups.
  const rows = [];
  for (let d = 0; d <= 30; d++) {
    for (const [i, userId] of ['1', '2', '3', '4', '5'].entries()) {
      if ((d + i) % 3 !== 0)
        rows.push({ userId, day: since - (since % DAY) + d * DAY, ups: 1 + ((d * i) % 3) });
    }
  }
  const s = upsSeries(rows, ['1', '2', '3'], since, now);
  const request = {
    title: 'Кто поднимал сервер: последние 30 дней',
    labels: s.starts.map((start) => new Date(start).toISOString().slice(5, 10)),
    series: s.series.map((x, i) => ({
      label: ['Анна Каренина', 'Борис', 'Вера', 'остальные'][i] ?? '?',
      data: x.data,
      ...(x.userId === null ? { muted: true } : {}),
    })),
    yTitle: 'апов в день',
    width: 960,
    height: 480,
  };
  const charts = new ChartRenderer();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  try {
    let started = performance.now();
    const first = await charts.render(request);
    const coldMs = performance.now() - started;
    for (let i = 0; i < 5; i++) await charts.render(request);
    const n = size(200, 40);
    const times: number[] = [];
    loop.enable();
    for (let i = 0; i < n; i++) {
      started = performance.now();
      await charts.render(request);
      times.push(performance.now() - started);
    }
    loop.disable();
    const render = summarize(times);
    const blockedMs = loop.max / 1e6;
    const rows: Row[] = [
      {
        scenario: SCENARIO,
        metric: 'one chart, p50',
        unit: 'ms',
        ours: render.p50,
        verdict: 'info',
        note: `${n} renders of a 960×480 PNG (${(first.length / 1024).toFixed(0)} KB), 31 bars × 4 series, Cyrillic text; the first (starting the thread, cold): ${coldMs.toFixed(0)} ms`,
      },
      {
        scenario: SCENARIO,
        metric: 'one chart, p99',
        unit: 'ms',
        ours: render.p99,
        target: '≤ 100 ms',
        verdict: atMost(render.p99, 100),
      },
      {
        scenario: SCENARIO,
        metric: "longest hold of the bot's event loop while rendering",
        unit: 'ms',
        ours: blockedMs,
        target: '≤ 20 ms',
        verdict: atMost(blockedMs, 20),
        note: 'monitorEventLoopDelay at 1 ms resolution, its max over the renders',
      },
    ];
    return { rows, data: { render, coldMs, blockedMs, pngBytes: first.length } };
  } finally {
    await charts.close();
  }
}
