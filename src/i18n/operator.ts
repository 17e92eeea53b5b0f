/**
 * The operator's language: what the configuration errors, the entry points' start-up lines and the
 * `directory` CLI say to whoever runs the bot, in Russian or English after the system locale as
 * POSIX tools read it (LC_ALL, then LC_MESSAGES, then LANG). Separate from the bot's catalogs
 * (index.ts): those follow each Discord user's locale, these the shell's. Only sentences are
 * translated: variable names, flag names, exit codes and JSON output stay as they are.
 */
import { createInstance } from 'i18next';
import en from './operator/en.json' with { type: 'json' };
import ru from './operator/ru.json' with { type: 'json' };

export const OPERATOR_LANGUAGES = ['en', 'ru'] as const;
export type OperatorLanguage = (typeof OPERATOR_LANGUAGES)[number];

/** Values put into a message. A number under a name ending in `Ms` is a duration, shown in the language's units. */
export type OperatorParams = Readonly<Record<string, string | number>>;

/** A message not yet put into words: its catalog key and values, said in whichever language is asked. */
export interface OperatorMessage {
  key: string;
  params?: OperatorParams;
  /**
   * The English words when they are another program's (node's parseArgs): said as they are in
   * English, the key giving the other languages.
   */
  english?: string;
}

/** The variables POSIX reads for messages, the first one set wins. */
const LOCALE_VARIABLES = ['LC_ALL', 'LC_MESSAGES', 'LANG'] as const;

/**
 * `ru`, `ru_RU.UTF-8`, `ru_UA@...` are Russian; `C`, `POSIX`, `en_US.UTF-8`, anything else and
 * nothing at all are English. An empty variable counts as unset, as in POSIX.
 */
export function operatorLanguage(env: Readonly<Record<string, string | undefined>>): OperatorLanguage {
  for (const name of LOCALE_VARIABLES) {
    const value = env[name]?.trim();
    if (value) return /^ru(?:[_.@-]|$)/i.test(value) ? 'ru' : 'en';
  }
  return 'en';
}

const i18n = createInstance();
void i18n.init({
  resources: { en: { translation: en }, ru: { translation: ru } },
  lng: 'en',
  fallbackLng: 'en',
  supportedLngs: [...OPERATOR_LANGUAGES],
  // Terminal text, not HTML.
  interpolation: { escapeValue: false },
  initAsync: false,
  returnNull: false,
});

/** `n` of a unit (`min`, `s`, `ms`) in the language: 15 min, 15 мин. */
export function quantity(n: number, unit: 'min' | 's' | 'ms', language: OperatorLanguage): string {
  return `${n} ${i18n.getFixedT(language)(`unit.${unit}`)}`;
}

/** 15 min, 2 s, 1500 ms (15 мин, 2 с, 1500 мс): the largest unit that divides the duration. */
export function formatDuration(ms: number, language: OperatorLanguage): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return quantity(ms / 60_000, 'min', language);
  if (ms >= 1_000 && ms % 1_000 === 0) return quantity(ms / 1_000, 's', language);
  return quantity(ms, 'ms', language);
}

/** Whether the catalogs have the key (a message from elsewhere is shown as it is). */
export function hasOperatorKey(key: string): boolean {
  return i18n.exists(key, { lng: 'en' });
}

/** One message in `language`. */
export function say(language: OperatorLanguage, key: string, params: OperatorParams = {}): string {
  const values: Record<string, string | number> = {};
  for (const [name, value] of Object.entries(params)) {
    values[name] = name.endsWith('Ms') && typeof value === 'number' ? formatDuration(value, language) : value;
  }
  return i18n.getFixedT(language)(key, values);
}

/** A message, or a text that is said as it is (another module's words). */
export function sayMessage(language: OperatorLanguage, message: OperatorMessage | string): string {
  if (typeof message === 'string') return message;
  if (language === 'en' && message.english !== undefined) return message.english;
  return say(language, message.key, message.params);
}

export type OperatorTranslate = (key: string, params?: OperatorParams) => string;

export function operatorTranslator(language: OperatorLanguage): OperatorTranslate {
  return (key, params) => say(language, key, params);
}

/** Every key of a catalog with the placeholders of its text, for the completeness test. */
export function operatorCatalog(language: OperatorLanguage): Map<string, string> {
  const texts = new Map<string, string>();
  const walk = (node: unknown, prefix: string): void => {
    if (typeof node === 'string') texts.set(prefix, node);
    else if (node && typeof node === 'object') {
      for (const [k, v] of Object.entries(node)) walk(v, prefix ? `${prefix}.${k}` : k);
    }
  };
  walk(language === 'ru' ? ru : en, '');
  return texts;
}
