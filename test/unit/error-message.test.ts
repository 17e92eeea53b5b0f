/**
 * What a person reads when the directory was not reached: the directory's fault, or the bot's
 * (its shared rate limits, in its database, could not be read, so nothing was sent).
 */
import { describe, expect, it } from 'vitest';
import { UnavailableError } from '../../src/directory/errors.js';
import { translator } from '../../src/i18n/index.js';
import { describeError } from '../../src/interactions/error-message.js';

const NOW = Date.UTC(2026, 10, 24);

describe('an unavailable directory, or the limits shared by the processes', () => {
  it('blames the directory only when it was asked', () => {
    const en = translator('en-US');
    const ru = translator('ru');
    const directory = new UnavailableError('connect ECONNREFUSED', { reason: 'network' });
    const limits = new UnavailableError('the shared rate limit (the store) cannot be reached', {
      reason: 'limits',
    });
    expect(describeError(directory, en, NOW)).toEqual({
      text: 'The directory is not answering right now. Try again in a few minutes.',
      level: 'warn',
      code: 'Unavailable',
    });
    expect(describeError(limits, en, NOW)).toEqual({
      text: 'The bot cannot reach its database right now, so the directory was not asked. Try again in a moment.',
      level: 'warn',
      code: 'Unavailable',
    });
    expect(describeError(limits, ru, NOW).text).toBe(
      'Бот сейчас не может связаться со своей базой данных, поэтому запрос в каталог не отправлен. Попробуйте чуть позже.',
    );
  });
});
