/** Many deadlines on one timer: each fires once at its time, a removed one never, and none early. */
import { describe, expect, it } from 'vitest';
import { DeadlineTimer } from '../../src/directory/deadline-timer.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('DeadlineTimer', () => {
  it('fires each deadline once, in order, whatever the order they were added in', async () => {
    const timer = new DeadlineTimer();
    const started = performance.now();
    const fired: Array<[string, number]> = [];
    const add = (name: string, ms: number): void => {
      timer.add(ms, () => fired.push([name, performance.now() - started]));
    };
    add('late', 120);
    add('early', 40);
    add('middle', 80);
    await sleep(200);
    expect(fired.map(([name]) => name)).toEqual(['early', 'middle', 'late']);
    for (const [name, at] of fired) {
      const wanted = { early: 40, middle: 80, late: 120 }[name] ?? 0;
      expect(at).toBeGreaterThanOrEqual(wanted - 1);
    }
  });

  it('a removed deadline never fires, and the ones after it still do', async () => {
    const timer = new DeadlineTimer();
    const fired: string[] = [];
    const first = timer.add(30, () => fired.push('removed'));
    timer.add(60, () => fired.push('kept'));
    timer.remove(first);
    await sleep(100);
    expect(fired).toEqual(['kept']);
  });

  it('clear() drops every deadline', async () => {
    const timer = new DeadlineTimer();
    const fired: string[] = [];
    timer.add(20, () => fired.push('a'));
    timer.clear();
    await sleep(60);
    expect(fired).toEqual([]);
  });
});
