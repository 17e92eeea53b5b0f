/** Percentiles, medians and the formatting of numbers for the tables. */
import { percentile } from '../../test/support/stats.js';

export { sleep } from '../../test/support/wait.js';
// Shared with the tests (test/support holds no vitest, so the bench stays free of it).
export { percentile };

export function median(values: ArrayLike<number>): number {
  const sorted = Array.from(values).sort((a, b) => a - b);
  const n = sorted.length;
  if (n === 0) return Number.NaN;
  const mid = Math.floor(n / 2);
  return n % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export interface Summary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(values: ArrayLike<number>): Summary {
  const list = Array.from(values);
  const sum = list.reduce((a, b) => a + b, 0);
  return {
    count: list.length,
    p50: percentile(list, 50),
    p90: percentile(list, 90),
    p99: percentile(list, 99),
    max: list.length === 0 ? Number.NaN : Math.max(...list),
    mean: list.length === 0 ? Number.NaN : sum / list.length,
  };
}

/** Least-squares line through (x, y) points: y = intercept + slope * x. */
export function linearFit(points: ReadonlyArray<{ x: number; y: number }>): {
  slope: number;
  intercept: number;
} {
  const n = points.length;
  if (n === 0) return { slope: Number.NaN, intercept: Number.NaN };
  if (n === 1) {
    const only = points[0] as { x: number; y: number };
    return { slope: only.y / only.x, intercept: 0 };
  }
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  const slope = den === 0 ? Number.NaN : num / den;
  return { slope, intercept: my - slope * mx };
}

/** A number with a sensible number of digits for a table. */
export function fmt(value: number | undefined, digits?: number): string {
  if (value === undefined || !Number.isFinite(value)) return '—';
  if (digits !== undefined) return value.toFixed(digits);
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

export const MB = 1024 * 1024;
