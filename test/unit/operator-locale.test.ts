/**
 * The operator's language: chosen from LC_ALL, LC_MESSAGES and LANG as POSIX tools do, and the two
 * operator catalogs saying the same things with the same values.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDuration, operatorCatalog, operatorLanguage, say } from '../../src/i18n/operator.js';

describe('operatorLanguage', () => {
  it('reads Russian from a Russian locale, English from anything else or nothing', () => {
    for (const lang of ['ru_RU.UTF-8', 'ru_RU', 'ru', 'ru_UA.UTF-8', 'ru_RU.KOI8-R', 'RU_RU.utf8']) {
      expect(operatorLanguage({ LANG: lang }), lang).toBe('ru');
    }
    for (const lang of ['C', 'POSIX', 'C.UTF-8', 'en_US.UTF-8', 'de_DE.UTF-8', 'rus', 'run', '']) {
      expect(operatorLanguage({ LANG: lang }), lang).toBe('en');
    }
    expect(operatorLanguage({})).toBe('en');
  });

  it('takes LC_ALL over LC_MESSAGES over LANG, an empty one counting as unset', () => {
    expect(operatorLanguage({ LC_ALL: 'C', LC_MESSAGES: 'ru_RU.UTF-8', LANG: 'ru_RU.UTF-8' })).toBe('en');
    expect(operatorLanguage({ LC_ALL: 'ru_RU.UTF-8', LANG: 'C' })).toBe('ru');
    expect(operatorLanguage({ LC_MESSAGES: 'ru_RU.UTF-8', LANG: 'en_US.UTF-8' })).toBe('ru');
    expect(operatorLanguage({ LC_MESSAGES: 'POSIX', LANG: 'ru_RU.UTF-8' })).toBe('en');
    expect(operatorLanguage({ LC_ALL: '', LC_MESSAGES: ' ', LANG: 'ru_RU.UTF-8' })).toBe('ru');
  });
});

describe('the operator catalogs', () => {
  const en = operatorCatalog('en');
  const ru = operatorCatalog('ru');
  const placeholders = (text: string): string[] =>
    [...text.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1] ?? '').sort();

  it('have the same keys', () => {
    expect([...ru.keys()].sort()).toEqual([...en.keys()].sort());
    expect(en.size).toBeGreaterThan(100);
  });

  it('have the same {{placeholders}} in each text, and no empty text', () => {
    for (const [key, text] of en) {
      expect(placeholders(ru.get(key) ?? ''), key).toEqual(placeholders(text));
      expect(text.trim(), key).not.toBe('');
      expect(ru.get(key)?.trim(), key).not.toBe('');
    }
  });

  it("hold every key the entry points' own lines use (src/app)", () => {
    const dir = join(process.cwd(), 'src', 'app');
    const used = new Map<string, string>();
    for (const name of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(join(dir, name), 'utf8');
      if (!/i18n\/operator\.js'|\boperatorT\(\)/.test(text)) continue;
      for (const m of text.matchAll(/\bt\(\s*'([\w.]+)'/g)) if (m[1]) used.set(m[1], name);
    }
    expect(used.size).toBeGreaterThan(5);
    const missing = [...used].filter(([key]) => !en.has(key) || !ru.has(key));
    expect(missing).toEqual([]);
  });

  it('are translated: no Russian text is the English one', () => {
    const same = [...en].filter(([key, text]) => ru.get(key) === text).map(([key]) => key);
    expect(same).toEqual([]);
  });
});

describe('say', () => {
  it('puts durations in the language’s units', () => {
    expect(formatDuration(900_000, 'en')).toBe('15 min');
    expect(formatDuration(900_000, 'ru')).toBe('15 мин');
    expect(formatDuration(2_000, 'ru')).toBe('2 с');
    expect(formatDuration(1_500, 'ru')).toBe('1500 мс');
    expect(say('ru', 'config.cacheTtlShort', { valueMs: 500 })).toBe(
      '500 мс — слишком мало: нужно не меньше 1 с',
    );
    expect(say('en', 'config.cacheTtlShort', { valueMs: 500 })).toBe('500 ms is too short: at least 1 s');
  });
});
