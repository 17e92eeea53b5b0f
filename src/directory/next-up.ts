/**
 * `timeToNextUpInMs` is ambiguous in practice: the published example is an absolute epoch
 * time in ms (1641589230690), one SDK reads it as a duration. A value above 1e12 (2001-09-09)
 * cannot be a sensible cooldown (it would be 31 years), so it is an epoch time; anything
 * else is a duration counted from when the response was received.
 */
import { usableDate } from '../time/range.js';

export const EPOCH_THRESHOLD_MS = 1_000_000_000_000;

/** When the next up is possible, or null when the directory sent none or an unusable time (time/range.ts). */
export function normalizeNextUp(raw: number | null | undefined, receivedAtMs: number): Date | null {
  if (raw === null || raw === undefined || !Number.isFinite(raw) || raw < 0) return null;
  return usableDate(raw >= EPOCH_THRESHOLD_MS ? raw : receivedAtMs + raw);
}
