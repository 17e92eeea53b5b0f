/**
 * What v3 says of a bot's or server's standing, read one way for every reader (the cards, /up on
 * v3, the CLI): the ratings' average, and the ups that still count.
 */
import type { DirectoryUp, RatingCount } from './types.js';

/**
 * The ratings' average, weighted by how many gave each, and how many rated; null when none did.
 * Only ratings of 1 to 5 given by a positive whole number of people count: anything else the
 * directory sends is no rating.
 */
export function averageRating(ratings: readonly RatingCount[]): { average: number; count: number } | null {
  let count = 0;
  let sum = 0;
  for (const { rating, count: n } of ratings) {
    if (!(rating >= 1 && rating <= 5) || !Number.isSafeInteger(n) || n <= 0) continue;
    count += n;
    sum += rating * n;
  }
  return count === 0 ? null : { average: sum / count, count };
}

/**
 * The ups that still count at `now` (one whose expiry is unknown counts), when the first of them
 * ends (null when none says), and how many listed have expired.
 */
export function countingUps(
  ups: readonly DirectoryUp[],
  now: number,
): { count: number; nextEndsAt: Date | null; expired: number } {
  let count = 0;
  let next: Date | null = null;
  for (const { expiresAt } of ups) {
    if (expiresAt !== null && expiresAt.getTime() <= now) continue;
    count += 1;
    if (expiresAt !== null && (next === null || expiresAt < next)) next = expiresAt;
  }
  return { count, nextEndsAt: next, expired: ups.length - count };
}
