import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  catalogKeys,
  FALLBACK_LOCALE,
  localizations,
  resolveLocale,
  SUPPORTED_LOCALES,
  type SupportedLocale,
  translator,
} from '../../src/i18n/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The plural categories each language needs, from the same Intl rules i18next uses. */
function pluralCategories(locale: SupportedLocale): string[] {
  return [...new Intl.PluralRules(locale).resolvedOptions().pluralCategories].sort();
}

const PLURAL_SUFFIX = /_(zero|one|two|few|many|other)$/;

/** Plain keys, and the plural families (`plural.servers` → its suffixes). */
function split(locale: SupportedLocale): { plain: Set<string>; plural: Map<string, string[]> } {
  const plain = new Set<string>();
  const plural = new Map<string, string[]>();
  for (const key of catalogKeys(locale)) {
    const m = PLURAL_SUFFIX.exec(key);
    if (m?.[1]) {
      const base = key.slice(0, m.index);
      plural.set(base, [...(plural.get(base) ?? []), m[1]].sort());
    } else {
      plain.add(key);
    }
  }
  return { plain, plural };
}

function catalog(locale: SupportedLocale): Record<string, unknown> {
  const file = join(ROOT, 'src/i18n/locales', `${locale}.json`);
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
}

function lookup(locale: SupportedLocale, key: string): string | undefined {
  let node: unknown = catalog(locale);
  for (const part of key.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === 'string' ? node : undefined;
}

/** A key a `t(...)` call may use: a plain string, or a plural family with every form the language needs. */
function resolvable(locale: SupportedLocale, key: string): boolean {
  const { plain, plural } = split(locale);
  if (plain.has(key)) return true;
  const forms = plural.get(key);
  return forms !== undefined && pluralCategories(locale).every((c) => forms.includes(c));
}

function sourceFiles(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  const out: string[] = [];
  for (const name of readdirSync(abs)) {
    const path = join(abs, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(join(dir, name)));
    else if (/\.ts$/.test(name) && !/\.d\.ts$/.test(name)) out.push(path);
  }
  return out;
}

const SOURCE_DIRS = [
  'src/render',
  'src/app',
  'src/discord',
  'src/gateway',
  'src/interactions',
  'src/events',
  'src/features',
  'src/tasks',
  'commands',
];

/** Literal keys of `t('…')` calls, and prefixes of `t(\`….${…}\`)` calls. */
/** A file that words its lines with the operator's translator (i18n/operator.ts), not the bot's. */
const OPERATOR_SOURCE = /i18n\/operator\.js'|\boperatorT\(\)/;

function keysInSources(): { literal: Map<string, string>; templates: Map<string, string> } {
  const literal = new Map<string, string>();
  const templates = new Map<string, string>();
  for (const file of SOURCE_DIRS.flatMap(sourceFiles)) {
    const text = readFileSync(file, 'utf8');
    // An entry point's own lines are the operator's, in the operator catalogs (operator-locale.test.ts).
    if (OPERATOR_SOURCE.test(text)) continue;
    for (const m of text.matchAll(/\bt\(\s*(['"])([^'"\n]+)\1/g)) if (m[2]) literal.set(m[2], file);
    for (const m of text.matchAll(/\bt\(\s*`([^`$]*)\$\{/g))
      if (m[1] !== undefined) templates.set(m[1], file);
    for (const m of text.matchAll(/\bt\(\s*`([^`$]+)`/g)) if (m[1]) literal.set(m[1], file);
    for (const m of text.matchAll(/\blocalizations\(\s*(['"])([^'"\n]+)\1/g))
      if (m[2]) literal.set(m[2], file);
    // Command texts go through a helper (`describe('commands.bot.ref')`) before localizations().
    for (const m of text.matchAll(/'(commands\.\w+\.\w+)'/g)) if (m[1]) literal.set(m[1], file);
  }
  // Keys chosen in a variable before the call (`const titleKey = … 'comments.titleBot' …`).
  const namespaces = Object.keys(catalog('en-US')).join('|');
  const quoted = new RegExp(`'((?:${namespaces})\\.[A-Za-z.]+)'`, 'g');
  for (const file of sourceFiles('src/render')) {
    for (const m of readFileSync(file, 'utf8').matchAll(quoted)) if (m[1]) literal.set(m[1], file);
  }
  return { literal, templates };
}

describe('catalogs', () => {
  it('support en-US and ru, with en-US as the fallback', () => {
    expect([...SUPPORTED_LOCALES]).toEqual(['en-US', 'ru']);
    expect(FALLBACK_LOCALE).toBe('en-US');
    expect(pluralCategories('en-US')).toEqual(['one', 'other']);
    expect(pluralCategories('ru')).toEqual(['few', 'many', 'one', 'other']);
  });

  it('have the same plain keys in both languages', () => {
    const en = split('en-US');
    const ru = split('ru');
    expect([...ru.plain].sort()).toEqual([...en.plain].sort());
    expect(en.plain.size).toBeGreaterThan(50);
  });

  it('have the same plural families, each with exactly the forms its language needs', () => {
    const en = split('en-US');
    const ru = split('ru');
    expect([...ru.plural.keys()].sort()).toEqual([...en.plural.keys()].sort());
    expect(en.plural.size).toBeGreaterThan(0);
    for (const [base, forms] of en.plural) expect(forms, `en-US ${base}`).toEqual(['one', 'other']);
    for (const [base, forms] of ru.plural)
      expect(forms, `ru ${base}`).toEqual(['few', 'many', 'one', 'other']);
  });

  it('have no empty texts, and the same placeholders in both languages', () => {
    const placeholders = (s: string): string[] =>
      [...s.matchAll(/\{\{\s*([\w.]+)[^}]*\}\}/g)].map((m) => m[1] ?? '').sort();
    const en = split('en-US');
    for (const key of en.plain) {
      const a = lookup('en-US', key) ?? '';
      const b = lookup('ru', key) ?? '';
      expect(a.trim(), key).not.toBe('');
      expect(b.trim(), key).not.toBe('');
      expect(placeholders(b), key).toEqual(placeholders(a));
    }
    for (const base of en.plural.keys()) {
      const expected = placeholders(lookup('en-US', `${base}_other`) ?? '');
      for (const locale of SUPPORTED_LOCALES) {
        for (const form of pluralCategories(locale)) {
          const text = lookup(locale, `${base}_${form}`) ?? '';
          expect(text.trim(), `${locale} ${base}_${form}`).not.toBe('');
          expect(placeholders(text), `${locale} ${base}_${form}`).toEqual(expected);
        }
      }
    }
  });

  it('are valid JSON objects of strings only', () => {
    const walk = (node: unknown, path: string): void => {
      if (typeof node === 'string') return;
      expect(node !== null && typeof node === 'object' && !Array.isArray(node), path).toBe(true);
      for (const [k, v] of Object.entries(node as Record<string, unknown>)) walk(v, `${path}.${k}`);
    };
    for (const locale of SUPPORTED_LOCALES) walk(catalog(locale), locale);
  });
});

describe('keys used in the code', () => {
  const { literal, templates } = keysInSources();

  it('finds the calls it is meant to check', () => {
    expect(literal.size).toBeGreaterThan(40);
    expect(literal.has('bot.title')).toBe(true);
    expect(literal.has('plural.servers')).toBe(true);
    expect(literal.has('comments.titleBot')).toBe(true);
    expect(templates.has('up.title.')).toBe(true);
    if (existsSync(join(ROOT, 'commands/definitions.ts'))) expect(literal.has('commands.bot.ref')).toBe(true);
  });

  it('every literal key exists in both catalogs', () => {
    const missing: string[] = [];
    for (const [key, file] of literal) {
      for (const locale of SUPPORTED_LOCALES) {
        if (!resolvable(locale, key)) missing.push(`${locale}: ${key} (${file.slice(ROOT.length)})`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every key family built at run time exists in both catalogs', () => {
    for (const [prefix, file] of templates) {
      for (const locale of SUPPORTED_LOCALES) {
        const some = catalogKeys(locale).some((k) => k.startsWith(prefix));
        expect(some, `${locale}: ${prefix}… (${file})`).toBe(true);
      }
    }
    const families: Record<string, readonly string[]> = {
      'up.title.': ['success', 'cooldown', 'notUpdated', 'error'],
      'profile.': ['site', 'vk', 'steam', 'youtube', 'twitch', 'git'],
      'server.': ['site', 'youtube', 'twitch', 'steam', 'vk'],
      'errors.notFound.': ['bot', 'server', 'profile', 'generic'],
      'errors.invalidArgument.': ['bot', 'server', 'profile', 'generic'],
    };
    for (const [prefix, members] of Object.entries(families)) {
      for (const member of members) {
        for (const locale of SUPPORTED_LOCALES) {
          expect(resolvable(locale, `${prefix}${member}`), `${locale}: ${prefix}${member}`).toBe(true);
        }
      }
    }
  });
});

describe('translation', () => {
  const en = translator('en-US');
  const ru = translator('ru');
  /** Russian groups digits with a no-break space. */
  const spaces = (s: string): string => s.replace(/[\u00a0\u202f]/g, ' ');

  it('uses the right Russian plural forms', () => {
    const cases: Array<[number, string]> = [
      [1, '1 сервер'],
      [2, '2 сервера'],
      [3, '3 сервера'],
      [4, '4 сервера'],
      [5, '5 серверов'],
      [11, '11 серверов'],
      [12, '12 серверов'],
      [14, '14 серверов'],
      [21, '21 сервер'],
      [22, '22 сервера'],
      [25, '25 серверов'],
      [0, '0 серверов'],
      [101, '101 сервер'],
      [111, '111 серверов'],
      [1.5, '1,5 сервера'],
      [348_986, '348 986 серверов'],
    ];
    for (const [count, expected] of cases)
      expect(spaces(ru('plural.servers', { count })), String(count)).toBe(expected);
    expect(ru('plural.comments', { count: 21 })).toBe('21 отзыв');
    expect(ru('plural.comments', { count: 3 })).toBe('3 отзыва');
    expect(ru('plural.users', { count: 11 })).toBe('11 пользователей');
    expect(ru('plural.members', { count: 1 })).toBe('1 участник');
    expect(ru('plural.shards', { count: 2 })).toBe('2 шарда');
    expect(ru('plural.ups', { count: 5 })).toBe('5 апов');
  });

  it('uses the right English plural forms', () => {
    expect(en('plural.servers', { count: 1 })).toBe('1 server');
    expect(en('plural.servers', { count: 0 })).toBe('0 servers');
    expect(en('plural.servers', { count: 2 })).toBe('2 servers');
    expect(en('plural.servers', { count: 21 })).toBe('21 servers');
    expect(en('plural.users', { count: 348_986 })).toBe('348,986 users');
  });

  it('falls back to en-US for other and missing locales', () => {
    for (const locale of ['de', 'en-GB', 'uk', 'fr', '', undefined, null]) {
      expect(resolveLocale(locale), String(locale)).toBe('en-US');
      expect(translator(locale)('common.yes'), String(locale)).toBe('Yes');
      expect(translator(locale)('plural.servers', { count: 2 })).toBe('2 servers');
    }
    expect(resolveLocale('ru')).toBe('ru');
    expect(translator('ru')('common.yes')).toBe('Да');
    expect(translator('de')('bot.title', { name: 'x' })).toBe('Bot x');
  });

  it('interpolates values as given: no HTML escaping, no nested lookups', () => {
    expect(en('bot.title', { name: '<a> & "b"' })).toBe('Bot <a> & "b"');
    expect(en('server.title', { name: '$t(common.yes) {{name}}' })).toBe('Server $t(common.yes) {{name}}');
    expect(ru('comments.page', { page: 2, pages: 3, total: '12 отзывов' })).toBe(
      'Страница 2 из 3 · 12 отзывов',
    );
    expect(en('comments.page', { page: 2, pages: 3, total: '12 comments' })).toBe(
      'Page 2 of 3 · 12 comments',
    );
  });

  it('localizations() gives both languages for every command text', () => {
    const commandKeys = catalogKeys('en-US').filter((k) => k.startsWith('commands.'));
    expect(commandKeys.length).toBeGreaterThan(0);
    for (const key of commandKeys) {
      const texts = localizations(key);
      expect(Object.keys(texts).sort()).toEqual(['en-US', 'ru']);
      expect(texts['en-US']).toBe(lookup('en-US', key));
      expect(texts.ru).toBe(lookup('ru', key));
      expect(texts.ru).not.toBe(texts['en-US']);
      // Discord's limit on a command or option description
      expect(texts['en-US'].length).toBeLessThanOrEqual(100);
      expect(texts.ru.length).toBeLessThanOrEqual(100);
    }
    expect(localizations('commands.up.description')).toEqual({
      'en-US': 'Raise this server in the directory',
      ru: 'Поднять этот сервер в каталоге',
    });
  });
});
