/**
 * A delay in words: "42 s", "3 min", "1 h 5 min" (in the reader's language): how long after a
 * reminder an up came, a streak's grace, a leaderboard's reaction times.
 */
import type { Translate } from '../i18n/index.js';

export function delayText(ms: number, t: Translate): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return t('remind.delay.seconds', { count: seconds });
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return t('remind.delay.minutes', { count: minutes });
  return t('remind.delay.hours', { hours: Math.floor(minutes / 60), minutes: minutes % 60 });
}
