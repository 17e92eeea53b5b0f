/**
 * `timeToNextUpInMs` is ambiguous in practice: the published example is an absolute epoch
 * time in ms (1641589230690), one SDK reads it as a duration. A value above 1e12 (2001-09-09)
 * cannot be a sensible cooldown (it would be 31 years), so it is an epoch time; anything
 * else is a duration counted from when the response was received.
 */
export const EPOCH_THRESHOLD_MS = 1_000_000_000_000;

export function normalizeNextUp(raw: number | null | undefined, receivedAtMs: number): Date | null {
  if (raw === null || raw === undefined || !Number.isFinite(raw) || raw < 0) return null;
  if (raw >= EPOCH_THRESHOLD_MS) return new Date(raw);
  return new Date(receivedAtMs + raw);
}
