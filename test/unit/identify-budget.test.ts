/**
 * The start refused before it spends Discord's daily identifies below IDENTIFY_BUDGET_FLOOR
 * (src/gateway/identify-budget.ts), in every mode: one host, each of several, each shard process.
 * The whole path (a crash loop against the stand-in): test/ops/identify-budget.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { identifyBudgetRefusal } from '../../src/gateway/identify-budget.js';

const limit = (remaining: number, resetAfterMs = 3 * 3_600_000 + 25 * 60_000) => ({
  remaining,
  total: 1_000,
  reset_after: resetAfterMs,
});

describe("the day's identify budget at start", () => {
  it('starts while identifying the shards leaves the floor or more', () => {
    expect(identifyBudgetRefusal(limit(1_000), 16, 20)).toBeUndefined();
    expect(identifyBudgetRefusal(limit(22), 2, 20)).toBeUndefined();
  });

  it('refuses one identify short of the floor, saying what is left, the floor and when it resets', () => {
    expect(identifyBudgetRefusal(limit(21), 2, 20)).toBe(
      'Discord allows 21 more gateway identifies of 1000 until its budget resets in 3 h; identifying 2 ' +
        'shard(s) would leave 19, under IDENTIFY_BUDGET_FLOOR=20: not starting (lower it to start anyway)',
    );
  });

  it('says when the shards need more than is left, whatever the floor, and minutes when the reset is near', () => {
    for (const floor of [20, 0]) {
      expect(identifyBudgetRefusal(limit(1, 90_000), 2, floor)).toBe(
        'Discord allows 1 more gateway identifies of 1000 until its budget resets in 2 min; ' +
          'this process needs 2 to start its shards: not starting',
      );
    }
  });

  it('with the floor at 0 spends the budget to its last identify', () => {
    expect(identifyBudgetRefusal(limit(2), 2, 0)).toBeUndefined();
  });
});
