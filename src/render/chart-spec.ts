/** What the chart thread draws (chart-worker.ts), and how it looks: shared by both sides. */

export interface ChartRequest {
  title: string;
  /** One label per bar (a day or a week). */
  labels: string[];
  /** Stacked series: one per top member, and the rest; each as long as `labels`. */
  series: Array<{ label: string; data: number[]; muted?: boolean }>;
  yTitle: string;
  width: number;
  height: number;
}

/**
 * Readable on Discord's dark and light themes alike: an opaque light card with dark text, and
 * series colours that keep their contrast on it (Discord's blurple, green, amber, then grey for
 * "others").
 */
export const CHART_THEME = {
  font: 'DejaVu Sans',
  background: '#F2F3F5',
  text: '#2E3338',
  grid: '#D4D7DC',
  series: ['#5865F2', '#23A559', '#E0A100', '#EB459E'],
  /** "Others". */
  muted: '#8E9297',
} as const;
