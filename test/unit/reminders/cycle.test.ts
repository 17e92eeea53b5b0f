import { describe, expect, it } from 'vitest';
import { cycleAgain, cyclePost, replaces } from '../../../src/features/reminders/cycle.js';
import type { ReminderCycle } from '../../../src/store/reminders.js';

const NEXT = 1_800_000_000_000;
const MIN = 60_000;
const fresh: ReminderCycle = { nextUpAt: NEXT, step: 0, headsUpAt: null, post: null };
const early = { reminderEarlyMs: 10 * MIN, reminderRepeat: null };
const repeats = { reminderEarlyMs: null, reminderRepeat: { everyMs: 15 * MIN, times: 2 } };

describe("a server reminder's cycle", () => {
  it('posts a heads-up before the up is possible, then the reminder at the next-up time', () => {
    const post = cyclePost(NEXT - 10 * MIN, fresh, early, NEXT - 10 * MIN);
    expect(post).toEqual({ kind: 'heads-up' });
    expect(cycleAgain(post, fresh, early, NEXT - 10 * MIN)).toEqual({ at: NEXT, step: 0 });
    const after = { ...fresh, headsUpAt: NEXT - 10 * MIN };
    expect(cyclePost(NEXT, after, early, NEXT)).toEqual({ kind: 'reminder' });
    // No repeats set: the cycle is over once the reminder is posted.
    expect(cycleAgain({ kind: 'reminder' }, after, early, NEXT)).toBeUndefined();
  });

  it('posts the reminder itself when the heads-up was missed (the bot was down past the next-up time)', () => {
    expect(cyclePost(NEXT - 10 * MIN, fresh, early, NEXT + 5_000)).toEqual({ kind: 'reminder' });
  });

  it('posts nothing for a heads-up turned off meanwhile, and waits for the next-up time', () => {
    const post = cyclePost(NEXT - 10 * MIN, fresh, repeats, NEXT - 10 * MIN);
    expect(post).toEqual({ kind: 'wait', at: NEXT });
    expect(cycleAgain(post, fresh, repeats, NEXT - 10 * MIN)).toEqual({ at: NEXT, step: 0 });
  });

  it('repeats every period from the next-up time, as many times as set, then stops', () => {
    expect(cycleAgain({ kind: 'reminder' }, fresh, repeats, NEXT + 200)).toEqual({
      at: NEXT + 15 * MIN,
      step: 1,
    });
    const first = { ...fresh, step: 1 };
    expect(cyclePost(NEXT + 15 * MIN, first, repeats, NEXT + 15 * MIN)).toEqual({
      kind: 'repeat',
      n: 1,
      of: 2,
    });
    expect(cycleAgain({ kind: 'repeat', n: 1, of: 2 }, first, repeats, NEXT + 15 * MIN)).toEqual({
      at: NEXT + 30 * MIN,
      step: 2,
    });
    expect(cycleAgain({ kind: 'repeat', n: 2, of: 2 }, { ...fresh, step: 2 }, repeats, NEXT + 30 * MIN)).toBe(
      undefined,
    );
    // Fewer repeats set meanwhile, or none: nothing more is posted.
    expect(cyclePost(NEXT + 45 * MIN, { ...fresh, step: 3 }, repeats, NEXT + 45 * MIN)).toEqual({
      kind: 'done',
    });
    expect(cyclePost(NEXT + 15 * MIN, first, early, NEXT + 15 * MIN)).toEqual({ kind: 'done' });
  });

  it('after a long outage, one repeat and then the pace again, not a burst', () => {
    const late = NEXT + 100 * MIN;
    expect(cycleAgain({ kind: 'reminder' }, fresh, repeats, late)).toEqual({ at: late + 7.5 * MIN, step: 1 });
  });

  it("replaces this cycle's last post, never an older cycle's nor the same message", () => {
    const post = { channelId: 'c', messageId: 'm1', postedAt: NEXT };
    expect(replaces({ ...fresh, post }, 'm2')).toEqual(post);
    expect(replaces({ ...fresh, post }, 'm1')).toBeNull();
    expect(replaces({ ...fresh, post: { ...post, postedAt: NEXT - 3 * 3_600_000 } }, 'm2')).toBeNull();
    expect(replaces(fresh, 'm2')).toBeNull();
  });
});
