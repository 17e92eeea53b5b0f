/**
 * An /up that followed the server's reminder quickly says so on its answer (issue 25's reaction
 * time): "⚡ 42 s after the reminder", in the reader's language; a slow one, or one with no
 * reminder to follow, says nothing of it.
 */
import { describe, expect, it } from 'vitest';
import type { ServerUpResult } from '../../src/directory/index.js';
import { QUICK_UP_MS, renderUpDecision, type UpDecision } from '../../src/features/up/up.js';
import { translator } from '../../src/i18n/index.js';

const NOW = 1_700_000_000_000;
const result: ServerUpResult = {
  serverId: '722424773233213460',
  up: 1,
  updated: true,
  bumps: 63,
  boost: false,
  upSuccessfully: true,
  nextUpAt: new Date(NOW + 4 * 3_600_000),
  timeToNextUpInMs: 4 * 3_600_000,
  message: 'ok',
};
const decision = (reactionMs: number | null): UpDecision => ({
  outcome: 'success',
  result,
  remindAt: NOW + 4 * 3_600_000,
  publicly: true,
  reactionMs,
});
const reaction = (d: UpDecision, locale = 'en-US') => {
  const t = translator(locale);
  return renderUpDecision(d, t, NOW).embeds[0]?.fields?.find((f) => f.name === t('up.reaction'))?.value;
};

describe("an /up's reaction time", () => {
  it('is said when the up came soon after the reminder, in the reader’s language', () => {
    expect(reaction(decision(42_300))).toBe('⚡ 42 s after the reminder');
    expect(reaction(decision(3 * 60_000), 'ru')).toBe('⚡ через 3 мин после напоминания');
  });

  it('is not said for a slow up, nor without a reminder followed', () => {
    expect(reaction(decision(QUICK_UP_MS))).toBeUndefined();
    expect(reaction(decision(null))).toBeUndefined();
  });
});
