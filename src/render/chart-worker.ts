/**
 * The chart renderer's thread (charts.ts): Chart.js drawing on @napi-rs/canvas, one chart at a
 * time, off the bot's event loop (a render takes 20 to 60 ms of CPU). The font ships with the
 * project (DejaVu Sans, from the dejavu-fonts-ttf package: Latin and Cyrillic, a free licence),
 * so that text renders the same on every machine.
 */
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import { createCanvas, GlobalFonts } from '@napi-rs/canvas';
import { Chart, type ChartConfiguration, type ChartItem, registerables } from 'chart.js';
import { CHART_THEME, type ChartRequest } from './chart-spec.js';

Chart.register(...registerables);
const require = createRequire(import.meta.url);
GlobalFonts.registerFromPath(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'), CHART_THEME.font);
GlobalFonts.registerFromPath(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf'), CHART_THEME.font);
Chart.defaults.font.family = CHART_THEME.font;
Chart.defaults.color = CHART_THEME.text;

function render(request: ChartRequest): Uint8Array {
  const canvas = createCanvas(request.width, request.height);
  const config: ChartConfiguration<'bar'> = {
    type: 'bar',
    data: {
      labels: request.labels,
      datasets: request.series.map((s, i) => ({
        label: s.label,
        data: s.data,
        backgroundColor: s.muted ? CHART_THEME.muted : CHART_THEME.series[i % CHART_THEME.series.length],
        stack: 'ups',
      })),
    },
    options: {
      responsive: false,
      animation: false,
      devicePixelRatio: 1,
      layout: { padding: 12 },
      plugins: {
        title: { display: true, text: request.title, font: { size: 18, weight: 'bold' } },
        legend: { display: request.series.length > 1, position: 'bottom' },
      },
      scales: {
        x: { stacked: true, grid: { display: false }, ticks: { maxRotation: 0, autoSkip: true } },
        y: {
          stacked: true,
          beginAtZero: true,
          ticks: { precision: 0 },
          grid: { color: CHART_THEME.grid },
          title: { display: true, text: request.yTitle },
        },
      },
    },
    plugins: [
      {
        // Opaque: a transparent chart would lose its text on Discord's dark or light theme.
        id: 'background',
        beforeDraw(chart) {
          const { ctx, width, height } = chart;
          ctx.save();
          ctx.fillStyle = CHART_THEME.background;
          ctx.fillRect(0, 0, width, height);
          ctx.restore();
        },
      },
    ],
  };
  // Chart.js draws on the 2D context as on a browser's; @napi-rs/canvas's is compatible.
  const chart = new Chart(canvas.getContext('2d') as unknown as ChartItem, config);
  try {
    return canvas.toBuffer('image/png');
  } finally {
    chart.destroy();
  }
}

parentPort?.on('message', (message: { id: number; request: ChartRequest }) => {
  try {
    const png = render(message.request);
    parentPort?.postMessage({ id: message.id, png }, [png.buffer as ArrayBuffer]);
  } catch (err) {
    parentPort?.postMessage({ id: message.id, error: err instanceof Error ? err.message : String(err) });
  }
});
