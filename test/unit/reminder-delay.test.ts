/** How long after a reminder an up came, in words, in both languages (features/reminders/delay.ts). */
import { describe, expect, it } from 'vitest';
import { translator } from '../../src/i18n/index.js';
import { delayText } from '../../src/render/delay.js';

describe('delayText', () => {
  it('says seconds, minutes, or hours and minutes', () => {
    const en = translator('en-US');
    expect(delayText(42_400, en)).toBe('42 s');
    expect(delayText(-5, en)).toBe('0 s');
    expect(delayText(3 * 60_000 + 10_000, en)).toBe('3 min');
    expect(delayText(65 * 60_000, en)).toBe('1 h 5 min');
    const ru = translator('ru');
    expect(delayText(42_000, ru)).toBe('42 с');
    expect(delayText(65 * 60_000, ru)).toBe('1 ч 5 мин');
  });
});
